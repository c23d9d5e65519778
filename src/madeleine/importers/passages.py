"""Chat turns into passages of 1–3 turns: the unit that imported coding sessions are indexed in.

A passage opens with a user turn and takes the replies that follow it (a tool-heavy answer is
one assistant turn), up to three turns; a passage's id is stable across re-imports (the source
id of its first turn) and its hash changes when its text does, e.g. when a session that was
still running when last imported got more lines.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

MAX_TURNS = 3
MAX_PASSAGE_CHARS = 20_000  # a passage over this is cut (a pasted log): the head says enough


@dataclass(frozen=True, slots=True)
class Turn:
    role: str  # user / assistant
    text: str
    source_id: str
    timestamp: datetime | None


@dataclass(frozen=True, slots=True)
class Passage:
    id: str
    session_id: str
    text: str
    timestamp: datetime | None
    turns: int

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()[:16]

    def message(self, source: str, extra: Mapping[str, object] | None = None) -> dict[str, object]:
        """The passage as a message for ``Memory.add``."""
        return {
            "role": "user",
            "name": source,
            "content": self.text,
            "id": self.id,
            "timestamp": None if self.timestamp is None else self.timestamp.isoformat(),
            "metadata": {"source": source, "turns": self.turns, **(extra or {})},
        }


def passages(session_id: str, turns: Iterable[Turn], prefix: str) -> Iterator[Passage]:
    """Group turns: each user turn opens a passage; consecutive assistant turns merge."""
    merged = list(_merge_assistant_runs(t for t in turns if t.text.strip()))
    group: list[Turn] = []
    for turn in merged:
        if group and (turn.role == "user" or len(group) >= MAX_TURNS):
            yield _passage(session_id, group, prefix)
            group = []
        group.append(turn)
    if group:
        yield _passage(session_id, group, prefix)


def _merge_assistant_runs(turns: Iterable[Turn]) -> Iterator[Turn]:
    pending: Turn | None = None
    for turn in turns:
        if pending is not None and pending.role == turn.role == "assistant":
            pending = Turn(
                "assistant",
                f"{pending.text}\n{turn.text}",
                pending.source_id,
                pending.timestamp or turn.timestamp,
            )
            continue
        if pending is not None:
            yield pending
        pending = turn
    if pending is not None:
        yield pending


def _passage(session_id: str, group: list[Turn], prefix: str) -> Passage:
    text = "\n".join(f"{turn.role}: {turn.text.strip()}" for turn in group)
    if len(text) > MAX_PASSAGE_CHARS:
        text = text[:MAX_PASSAGE_CHARS].rsplit(" ", 1)[0] + " …"
    return Passage(
        id=f"{prefix}:{session_id}:{group[0].source_id}",
        session_id=session_id,
        text=text,
        timestamp=next((t.timestamp for t in group if t.timestamp is not None), None),
        turns=len(group),
    )


def as_dict(value: object) -> dict[str, Any]:
    """A JSON object, or an empty one for anything else (exports are not always tidy)."""
    return value if isinstance(value, dict) else {}


def clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
