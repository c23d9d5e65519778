"""A session buffer and an agent state held by the server, with the methods of
``Session`` and ``AgentState`` (``Client.session`` / ``Client.agent`` hand them out). With
``AsyncClient`` every method returns an awaitable. ``current()`` gives the agent's state as
a dict (``AgentView.to_dict()``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from madeleine.client import calls

Run = Callable[[calls.Call[Any]], Any]


class RemoteSession:
    def __init__(self, run: Run, session_id: str, user_id: str, ttl_seconds: float | None):
        self._run = run
        self.session_id = session_id
        self.user_id = user_id
        self._ttl = ttl_seconds

    def append(self, message: dict[str, Any], *, pinned: bool = False) -> Any:
        return self._run(calls.append(self.session_id, self.user_id, message, pinned, self._ttl))

    def messages(self) -> Any:
        return self._run(calls.session_messages(self.session_id, self.user_id))

    def window(self, budget_tokens: int = 2000) -> Any:
        return self._run(calls.session_window(self.session_id, self.user_id, budget_tokens))

    def clear(self) -> Any:
        return self._run(calls.clear_session(self.session_id, self.user_id))


class RemoteAgent:
    """``state``, ``data`` and ``current()`` ask the server each time: another replica may
    have moved the agent."""

    def __init__(self, run: Run, agent_id: str, user_id: str) -> None:
        self._run = run
        self.agent_id = agent_id
        self.user_id = user_id

    def current(self) -> Any:
        return self._run(calls.agent_state(self.agent_id, self.user_id))

    def transition(
        self,
        to: str,
        *,
        reason: str = "",
        data: dict[str, Any] | None = None,
        expected_version: int | None = None,
    ) -> Any:
        call = calls.transition(self.agent_id, self.user_id, to, reason, data, expected_version)
        return self._run(call)

    def history(self, limit: int = 100) -> Any:
        return self._run(calls.agent_history(self.agent_id, self.user_id, limit))

    def snapshot(self) -> Any:
        return self._run(calls.agent_snapshot(self.agent_id, self.user_id))

    def restore(self, snapshot: dict[str, Any]) -> Any:
        return self._run(calls.agent_restore(self.agent_id, self.user_id, snapshot))
