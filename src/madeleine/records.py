"""Typed records that cross the public API."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from madeleine.read.explain import Explain, HitKind

FACT_KINDS = ("fact", "digest")  # hits that are cards: a fact, or a session digest

if TYPE_CHECKING:
    from madeleine.kb.clarify import Clarification
    from madeleine.kb.records import KBHit


@dataclass(slots=True)
class Hit:
    """One search result; ``explain`` holds each channel's rank and score plus the fused score."""

    id: str
    kind: HitKind
    text: str
    score: float
    timestamp: datetime
    source_ids: list[str]
    session_id: str
    speaker: str | None
    explain: Explain

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "text": self.text,
            "score": self.score,
            "timestamp": self.timestamp.isoformat(),
            "source_ids": list(self.source_ids),
            "session_id": self.session_id,
            "speaker": self.speaker,
            "explain": self.explain,
        }


@dataclass(slots=True)
class Context:
    """What ``Memory.context`` hands an agent: packed text within a token budget.

    ``items`` are the packed search hits, most relevant first; ``window`` the neighbouring
    turns packed with them for context; ``kb_items`` the knowledge-base chunks packed;
    ``clarify`` the choices the question leaves open (ask the user before acting).
    """

    text: str
    items: list[Hit]
    tokens: int
    budget_tokens: int
    window: list[Hit] = field(default_factory=list)
    kb_items: list[KBHit] = field(default_factory=list)
    clarify: list[Clarification] = field(default_factory=list)

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class AddResult:
    """What ``Memory.add`` acknowledges: every message is durably in the log when this returns."""

    added: list[int]
    duplicates: list[int]

    @property
    def count(self) -> int:
        return len(self.added)
