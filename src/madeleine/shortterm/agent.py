"""A typed agent state machine whose state is stored: idle → planning → executing →
waiting_input → completed | failed, with validated transitions, per-state timeouts, a
transition log, and snapshots that restore it elsewhere (another replica, after a crash)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from madeleine.errors import MadeleineError
from madeleine.inputs import (
    AGENT_DATA,
    require_json_object,
    require_seconds,
    require_short_text,
    shown_number,
)
from madeleine.store.ports import ShortTermRepository
from madeleine.store.records import AgentRecord, StaleStateError, TransitionRecord
from madeleine.write.privacy import OwnerPrivacy


class AgentStatus(StrEnum):
    IDLE = "idle"
    PLANNING = "planning"
    EXECUTING = "executing"
    WAITING_INPUT = "waiting_input"
    COMPLETED = "completed"
    FAILED = "failed"


ALLOWED: dict[AgentStatus, frozenset[AgentStatus]] = {
    AgentStatus.IDLE: frozenset({AgentStatus.PLANNING, AgentStatus.EXECUTING, AgentStatus.FAILED}),
    AgentStatus.PLANNING: frozenset(
        {AgentStatus.EXECUTING, AgentStatus.WAITING_INPUT, AgentStatus.FAILED, AgentStatus.IDLE}
    ),
    AgentStatus.EXECUTING: frozenset(
        {
            AgentStatus.WAITING_INPUT,
            AgentStatus.PLANNING,
            AgentStatus.COMPLETED,
            AgentStatus.FAILED,
        }
    ),
    AgentStatus.WAITING_INPUT: frozenset(
        {AgentStatus.PLANNING, AgentStatus.EXECUTING, AgentStatus.COMPLETED, AgentStatus.FAILED}
    ),
    AgentStatus.COMPLETED: frozenset({AgentStatus.IDLE}),
    AgentStatus.FAILED: frozenset({AgentStatus.IDLE}),
}
TERMINAL = frozenset({AgentStatus.COMPLETED, AgentStatus.FAILED})
MAX_REASON_CHARS = 2_000
MAX_HISTORY = 10_000  # transitions one history() call returns


class InvalidTransitionError(MadeleineError, ValueError):
    """The state machine does not allow this move (the message lists the allowed ones)."""


class ConcurrentUpdateError(MadeleineError):
    """Another writer moved the agent since it was read: read it again, then decide."""


@dataclass(frozen=True, slots=True)
class AgentView:
    agent_id: str
    state: AgentStatus
    data: dict[str, Any]
    entered_at: float
    version: int
    deadline: float | None  # when the current state times out (None: never)

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent_id": self.agent_id,
            "state": str(self.state),
            "data": self.data,
            "entered_at": self.entered_at,
            "version": self.version,
            "deadline": self.deadline,
            "allowed": sorted(str(s) for s in ALLOWED[self.state]),
        }


def status(value: object) -> AgentStatus:
    if not isinstance(value, str):
        raise TypeError(f"an agent state is a str, got {type(value).__name__}")
    try:
        return AgentStatus(value)
    except ValueError:
        names = ", ".join(s.value for s in AgentStatus)
        raise ValueError(f"unknown agent state {value[:64]!r}; states are {names}") from None


class AgentState:
    """One agent's state for one user. ``timeouts`` maps a state to the seconds it may
    last; a state read past its deadline has moved to ``failed`` (logged as a timeout)."""

    def __init__(
        self,
        repository: ShortTermRepository,
        user_id: str,
        agent_id: str,
        *,
        privacy: OwnerPrivacy,
        timeouts: Mapping[str, float] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._repository = repository
        self._privacy = privacy
        self.user_id = user_id
        self.agent_id = agent_id
        self._timeouts: dict[AgentStatus, float] = {}
        for name, seconds in (timeouts or {}).items():
            state = status(name)
            if state in TERMINAL:
                raise ValueError(f"{state} is final: it cannot time out")
            self._timeouts[state] = require_seconds(seconds, f"the timeout of {state}")
        self._clock = clock

    def current(self) -> AgentView:
        record = self._repository.agent(self.user_id, self.agent_id)
        if record is None:
            return self._view(AgentRecord(AgentStatus.IDLE, {}, 0.0, 0))
        view = self._view(record)
        if view.deadline is not None and self._clock() >= view.deadline:
            seconds = self._timeouts[view.state]
            reason = f"timed out in {view.state} after {seconds:g} s"
            try:
                return self._move(view, AgentStatus.FAILED, reason, view.data)
            except ConcurrentUpdateError:
                return self.current()
        return view

    @property
    def state(self) -> AgentStatus:
        return self.current().state

    @property
    def data(self) -> dict[str, Any]:
        return self.current().data

    def transition(
        self,
        to: str,
        *,
        reason: str = "",
        data: dict[str, Any] | None = None,
        expected_version: int | None = None,
    ) -> AgentView:
        """Move to ``to`` if the machine allows it; ``data`` replaces the state's data
        (None keeps it). With ``expected_version`` the move is refused if the agent moved
        since that version was read."""
        target = status(to)
        new_data = None if data is None else require_json_object(data, "data", AGENT_DATA)
        require_short_text(reason, "reason", MAX_REASON_CHARS)
        if expected_version is not None and (
            isinstance(expected_version, bool) or not isinstance(expected_version, int)
        ):
            raise TypeError(
                f"expected_version must be an int, got {type(expected_version).__name__}"
            )
        view = self.current()
        if expected_version is not None and expected_version != view.version:
            raise ConcurrentUpdateError(
                f"agent {self.agent_id!r} is at version {view.version}, not {expected_version}"
            )
        if target not in ALLOWED[view.state]:
            allowed = ", ".join(sorted(ALLOWED[view.state]))
            raise InvalidTransitionError(
                f"agent {self.agent_id!r} cannot go from {view.state} to {target}; from "
                f"{view.state} it can go to: {allowed}"
            )
        return self._move(view, target, reason, view.data if new_data is None else new_data)

    def history(self, limit: int = 100) -> list[dict[str, Any]]:
        """The transition log, oldest first."""
        if isinstance(limit, bool) or not isinstance(limit, int):
            raise TypeError(f"limit must be an int, got {type(limit).__name__}")
        if not 1 <= limit <= MAX_HISTORY:
            raise ValueError(f"limit must be from 1 to {MAX_HISTORY}, got {shown_number(limit)}")
        rows = self._repository.transitions(self.user_id, self.agent_id, limit)
        reveal = self._privacy.reveal
        return [
            {"from": r.from_state, "to": r.to_state, "reason": reveal(r.reason), "at": r.at}
            for r in rows
        ]

    def snapshot(self) -> dict[str, Any]:
        """Everything needed to restore this agent elsewhere (JSON-ready)."""
        view = self.current()
        return {
            "agent_id": self.agent_id,
            "user_id": self.user_id,
            "state": str(view.state),
            "data": view.data,
            "entered_at": view.entered_at,
            "version": view.version,
        }

    def restore(self, snapshot: Mapping[str, Any]) -> AgentView:
        """Set the state and data a snapshot holds (any state: a restore is not a move of
        the machine), logged as a restore."""
        if not isinstance(snapshot, Mapping) or "state" not in snapshot:
            raise ValueError("a snapshot is a dict with at least 'state' (from snapshot())")
        target = status(snapshot["state"])
        data = require_json_object(snapshot.get("data") or {}, "snapshot['data']", AGENT_DATA)
        version = snapshot.get("version", "?")
        if version != "?" and (isinstance(version, bool) or not isinstance(version, int)):
            raise TypeError(f"snapshot['version'] must be an int, got {type(version).__name__}")
        view = self.current()
        return self._move(view, target, f"restored from a snapshot of version {version}", data)

    def _move(
        self, view: AgentView, target: AgentStatus, reason: str, data: dict[str, Any]
    ) -> AgentView:
        # kept under the PII policy, as messages are: the reason and every value of the data
        reason = self._privacy.scrub(reason)
        data = self._privacy.scrub_tree(data)
        now = self._clock()
        record = AgentRecord(str(target), data, now, view.version + 1)
        log = TransitionRecord(
            None if view.version == 0 else str(view.state), str(target), reason, now
        )
        try:
            self._repository.move_agent(self.user_id, self.agent_id, view.version, record, log)
        except StaleStateError as exc:
            raise ConcurrentUpdateError(str(exc)) from exc
        return self._view(record)

    def _view(self, record: AgentRecord) -> AgentView:
        state = status(record.state)
        timeout = self._timeouts.get(state)
        deadline = None if timeout is None or record.version == 0 else record.entered_at + timeout
        data = self._privacy.reveal_tree(record.data)
        return AgentView(self.agent_id, state, data, record.entered_at, record.version, deadline)
