"""The seam between extractors (rules, LLM) and the write path."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from madeleine.facts.cards import CardDraft


@dataclass(frozen=True, slots=True)
class ExtractInput:
    """One logged message, PII already scrubbed, as an extractor sees it."""

    event_id: int
    session_id: str
    role: str  # "user", "assistant", "tool", "event"
    speaker: str | None
    text: str
    occurred_at: datetime
    project: str | None = None  # the code project a message belongs to (imported sessions)


class Extractor(Protocol):
    """Turns a window of consecutive messages of one session into card drafts.

    Drafts name the events they come from in ``sources``. Facts about the user come from
    what the user said (or did); an assistant's suggestion is not a fact about the user.
    """

    name: str

    def extract(self, window: Sequence[ExtractInput]) -> list[CardDraft]: ...
