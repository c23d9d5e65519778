"""The ``clarify`` signal: a request about "my car" from a user who has two cars cannot be
served until the user says which. The question names one thing of theirs by its kind; the
user's memories and current facts name several of that kind; none of them is in the
question. Then the agent should ask, and ``Context.clarify`` says what to ask."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from madeleine.records import Hit
from madeleine.store.ports import FactRepository
from madeleine.text.analyzer import Analyzer

_EN_MINE = re.compile(
    r"\bmy\s+(?:(?:new|old|current|usual|own)\s+)?([a-z][a-z-]{1,30})\b", re.IGNORECASE
)
_KO_MINE = re.compile(
    r"(?:^|\s)(?:내|제|나의|저의|우리)\s+([가-힣]{1,8}?)(?:의|를|을|이|가|는|은|도|에|로|랑)?(?=\s|$)"
)
# "a Tesla Model 3", "my Volvo", "our Kia": a named thing introduced as one of the user's
_EN_NAMED = re.compile(
    r"\b(?:a|an|my|our|the)\s+((?:[A-Z][\w-]*|[A-Z0-9]{2,})(?:\s+(?:[A-Z][\w-]*|\d[\w-]*))*)"
)
_KO_OWN = re.compile(r"있|샀|타|구입|보유|키우")
_NOT_THINGS = frozenset(
    "name names self life time day week job work birthday opinion question answer mind idea "
    "memory memories account password email favorite favourite".split()
)
_MAX_OPTIONS = 6


@dataclass(frozen=True, slots=True)
class Clarification:
    """``about`` the kind of thing; ``options`` what the user has of it; ``sources`` the
    memory ids that name them."""

    about: str
    question: str
    options: list[str]
    sources: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "about": self.about,
            "question": self.question,
            "options": list(self.options),
            "sources": list(self.sources),
        }


def find_clarifications(
    query: str,
    user_id: str,
    facts: FactRepository,
    hits: Sequence[Hit],
    analyzer: Analyzer,
) -> list[Clarification]:
    kinds = _owned_kinds(query)
    if not kinds:
        return []
    texts: list[tuple[str, str]] = [(h.id, h.text) for h in hits]
    with contextlib.suppress(Exception):  # an unknown user has no facts
        texts += [(f.card.id, f.card.statement) for f in facts.facts(user_id)]
    found: list[Clarification] = []
    lowered_query = query.lower()
    for kind, korean in kinds:
        options: dict[str, str] = {}
        sources: list[str] = []
        for memory_id, text in texts:
            for sentence in re.split(r"(?<=[.!?。])\s+|\n+", text):
                if not _mentions(sentence, kind, korean):
                    continue
                named = _named_in(sentence, kind, korean, analyzer)
                for name in named:
                    options.setdefault(name.lower(), name)
                if named and memory_id not in sources:
                    sources.append(memory_id)
        distinct = _without_parts(list(options.values()))
        if len(distinct) < 2 or any(o.lower() in lowered_query for o in distinct):
            continue
        shown = distinct[:_MAX_OPTIONS]
        listed = ", ".join(shown[:-1]) + (" or " if not korean else " 또는 ") + shown[-1]
        question = (
            f"어느 {kind}을(를) 말씀하시는 건가요: {listed}?"
            if korean
            else f"Which {kind} do you mean: {listed}?"
        )
        found.append(Clarification(kind, question, shown, sources))
    return found


def _owned_kinds(query: str) -> list[tuple[str, bool]]:
    kinds: list[tuple[str, bool]] = []
    for match in _EN_MINE.finditer(query):
        noun = match.group(1).lower()
        if noun in _NOT_THINGS or (noun.endswith("s") and not noun.endswith("ss")):
            continue  # "my cars" asks about all of them
        kinds.append((noun, False))
    kinds += [(m.group(1), True) for m in _KO_MINE.finditer(query)]
    return list(dict.fromkeys(kinds))


def _mentions(sentence: str, kind: str, korean: bool) -> bool:
    if korean:
        return kind in sentence
    return re.search(rf"\b{re.escape(kind)}(?:s|es)?\b", sentence, re.IGNORECASE) is not None


def _named_in(sentence: str, kind: str, korean: bool, analyzer: Analyzer) -> list[str]:
    if korean:
        if not _KO_OWN.search(sentence):
            return []
        return [n for n in analyzer.proper_nouns(sentence) if n != kind and len(n) > 1]
    names = []
    for match in _EN_NAMED.finditer(sentence):
        name = match.group(1).strip()
        if name.lower() != kind and name.lower().rstrip("s") != kind:
            names.append(name)
    return names


def _without_parts(options: list[str]) -> list[str]:
    """Drop an option that is part of another ("Tesla" beside "Tesla Model 3")."""
    kept = []
    for option in options:
        lowered = option.lower()
        if not any(lowered != o.lower() and lowered in o.lower() for o in options):
            kept.append(option)
    return kept
