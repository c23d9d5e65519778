"""A conversation buffer: what was said in this session, handed back within a token budget.

``window`` keeps pinned messages always, then the most recent ones that fit; what no longer
fits is folded into a rolling summary, stored with the session so the next call only folds
what is new. Appending also sends the message down the normal write path, so it reaches
long-term memory (facts, search) like any ``add``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from madeleine.records import AddResult
from madeleine.store.ports import ShortTermRepository
from madeleine.store.records import BufferedMessage, SessionInfo
from madeleine.text.tokens import TokenCounter
from madeleine.write.privacy import OwnerPrivacy

_PER_MESSAGE_TOKENS = 4  # role and separators, as chat formats count them
_SUMMARY_SHARE = 4  # at most a quarter of the budget goes to the summary


@dataclass(frozen=True, slots=True)
class Window:
    """The session as an agent should see it: ``messages`` ready for a chat API (oldest
    first), ``summary`` of what was folded away, and their token count."""

    messages: list[dict[str, Any]]
    summary: str
    tokens: int
    budget_tokens: int
    folded: int  # messages represented only by the summary

    def to_dict(self) -> dict[str, Any]:
        return {
            "messages": self.messages,
            "summary": self.summary,
            "tokens": self.tokens,
            "budget_tokens": self.budget_tokens,
            "folded": self.folded,
        }


def message_dict(
    message: BufferedMessage, reveal: Callable[[str], str] = lambda text: text
) -> dict[str, Any]:
    found: dict[str, Any] = {"role": message.role, "content": reveal(message.content)}
    if message.name:
        found["name"] = message.name
    if message.pinned:
        found["pinned"] = True
    return found


class Session:
    def __init__(
        self,
        repository: ShortTermRepository,
        add: Callable[[dict[str, Any]], AddResult],
        user_id: str,
        session_id: str,
        *,
        ttl_seconds: float | None,
        count_tokens: TokenCounter,
        summarize: Callable[[str, Sequence[BufferedMessage]], str],
        privacy: OwnerPrivacy,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._repository = repository
        self._add = add
        self.user_id = user_id
        self.session_id = session_id
        self._ttl = ttl_seconds
        self._count = count_tokens
        self._summarize = summarize
        self._privacy = privacy
        self._clock = clock

    def append(self, message: dict[str, Any], *, pinned: bool = False) -> int:
        """Add one message ({"role", "content"}, optionally "name"); returns its position.
        The message is validated and logged for long-term memory first, so a bad message
        leaves the buffer unchanged; the buffer keeps it under the PII policy, as the log
        does (reads give vaulted values back to the user)."""
        if not isinstance(pinned, bool):
            raise TypeError(f"pinned must be a bool, got {type(pinned).__name__}")
        self._add(message)  # raises on a bad message, before the buffer changes
        now = self._clock()
        name = message.get("name")
        buffered = BufferedMessage(
            role=str(message["role"]) if "role" in message else "user",
            content=self._privacy.scrub(str(message["content"])),
            created_at=now,
            name=None if name is None else str(name),
            pinned=pinned,
        )
        expires = None if self._ttl is None else now + self._ttl
        return self._repository.append(self.user_id, self.session_id, buffered, expires)

    def messages(self) -> list[dict[str, Any]]:
        """Every message still in the buffer, oldest first."""
        found = self._repository.messages(self.user_id, self.session_id, self._clock())
        return [message_dict(m, self._privacy.reveal) for m in found]

    def info(self) -> SessionInfo | None:
        return self._repository.session(self.user_id, self.session_id, self._clock())

    def clear(self) -> int:
        """Empty the buffer (long-term memory keeps what was said); returns messages removed."""
        return self._repository.clear(self.user_id, self.session_id)

    def window(self, budget_tokens: int = 2000) -> Window:
        """Pinned messages, then the newest that fit in ``budget_tokens``; older ones folded
        into the summary (which takes at most a quarter of the budget)."""
        if isinstance(budget_tokens, bool) or not isinstance(budget_tokens, int):
            raise TypeError(f"budget_tokens must be an int, got {type(budget_tokens).__name__}")
        if not 1 <= budget_tokens <= 1_000_000:
            raise ValueError(f"budget_tokens must be from 1 to 1000000, got {budget_tokens}")
        now = self._clock()
        buffered = self._repository.messages(self.user_id, self.session_id, now)
        info = self._repository.session(self.user_id, self.session_id, now)
        if not buffered or info is None:
            return Window([], "", 0, budget_tokens, 0)
        cost = {m.position: self._cost(m) for m in buffered}
        pinned = [m for m in buffered if m.pinned]
        loose = [m for m in buffered if not m.pinned]
        available = budget_tokens - sum(cost[m.position] for m in pinned)
        reserve = (
            budget_tokens // _SUMMARY_SHARE
            if sum(cost[m.position] for m in loose) > available
            else 0
        )
        recent: list[BufferedMessage] = []
        spent = 0
        for message in reversed(loose):
            if spent + cost[message.position] > available - reserve:
                break
            recent.append(message)
            spent += cost[message.position]
        oldest_kept = recent[-1].position if recent else (loose[-1].position + 1 if loose else 0)
        folded = [m for m in loose if m.position < oldest_kept]
        summary = ""
        if folded:
            summary = self._rolled(info, folded)
            summary = self._fit(summary, max(reserve, available - spent))
        kept = sorted(pinned + recent, key=lambda m: m.position)
        tokens = sum(cost[m.position] for m in kept) + (self._count(summary) if summary else 0)
        kept_dicts = [message_dict(m, self._privacy.reveal) for m in kept]
        revealed = self._privacy.reveal(summary)
        return Window(kept_dicts, revealed, tokens, budget_tokens, len(folded))

    def _rolled(self, info: SessionInfo, folded: list[BufferedMessage]) -> str:
        """The stored summary brought up to the newest folded message (only new ones are
        summarized; the result is stored for the next call)."""
        new = [m for m in folded if m.position > info.folded]
        if not new:
            return info.summary
        # an LLM summary is new text: it is kept under the policy like the messages it folds
        summary = self._privacy.scrub(self._summarize(info.summary, new))
        self._repository.fold(self.user_id, self.session_id, summary, new[-1].position)
        return summary

    def _fit(self, summary: str, budget: int) -> str:
        """The summary's newest lines within ``budget`` tokens."""
        lines = summary.splitlines()
        while lines and self._count("\n".join(lines)) > budget:
            lines.pop(0)
        return "\n".join(lines)

    def _cost(self, message: BufferedMessage) -> int:
        return self._count(message.content) + _PER_MESSAGE_TOKENS
