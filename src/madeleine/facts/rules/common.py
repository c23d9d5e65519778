"""What every builder shares: the fact it returns, the sentence it reads (with what the
rest of the window says about the people in it), and who a match is about."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from madeleine.facts.cards import Attribute, AttributeType
from madeleine.facts.extract import ExtractInput
from madeleine.facts.rules import en_words, ko
from madeleine.text.dates import When, english_when, korean_when
from madeleine.text.temporal import parse_time_hint

BACKSTORY_CHARS = 300
EXPLICIT = 0.8
HEDGED = 0.5

HANGUL = re.compile(r"[\uac00-\ud7a3]")


@dataclass(frozen=True, slots=True)
class Fact:
    """What a builder read from one match, before it is filed as a card draft."""

    slot: str
    key: str
    statement: str
    attributes: tuple[Attribute, ...]
    subject: str = "user"
    relationship: str | None = None
    confidence: float = EXPLICIT
    valid_from: datetime | None = None


@dataclass(frozen=True, slots=True)
class Said:
    """One sentence of a user message, with what the rest of the window tells about it."""

    text: str
    message: ExtractInput
    people: Mapping[str, str] = field(default_factory=dict)  # name -> relation
    home_country: str | None = None

    @property
    def now(self) -> datetime:
        return self.message.occurred_at

    @property
    def korean(self) -> bool:
        return HANGUL.search(self.text) is not None

    def when(self, text: str | None = None, past: bool = False) -> When | None:
        """Dates of ``text`` (default: the sentence), in the sentence's language first."""
        text = self.text if text is None else text
        parsers = (korean_when, english_when) if self.korean else (english_when,)
        for parse in parsers:
            found = parse(text, self.now, past)
            if found is not None:
                return found
        return None

    def name_of(self, relation: str) -> str | None:
        """The one name the window gives this relation ("my daughter" → "Sarah")."""
        names = [name for name, rel in self.people.items() if rel == relation]
        return names[0] if len(names) == 1 else None


Builder = Callable[[re.Match[str], Said], list[Fact]]


# Korean words that make a captured word a time rather than a thing ("다음 주 예약", "3시")
TIME_WORDS = re.compile(r"\d|내일|오늘|모레|다음|이번|오전|오후|저녁|아침|주말|요일|시$")


def clip(text: str, limit: int = BACKSTORY_CHARS) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def attr(name: str, value: str, kind: AttributeType = "text") -> Attribute:
    return Attribute(name=name, type=kind, value=clip(value, 500), unit=None)


def attribute_value(attributes: Iterable[Attribute], name: str) -> str | None:
    return next((a.value for a in attributes if a.name == name), None)


def slug(text: str) -> str:
    """Key suffix: ascii lower snake case, accents folded, Hangul kept ("Zürich" → "zurich")."""
    folded = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    folded = unicodedata.normalize("NFC", folded).lower().replace("&", " and ")
    return re.sub(r"[^0-9a-z\uac00-\ud7a3]+", "_", folded).strip("_") or "other"


def refer_to(subject: str, relationship: str | None, possessive: bool = False) -> str:
    """How a statement names its subject: "The user", "Sarah", "The user's daughter"."""
    if subject == "user":
        return "The user's" if possessive else "The user"
    if relationship is not None and subject == relationship:
        subject = f"The user's {relationship.replace('_', ' ')}"
    return f"{subject}'s" if possessive else subject


def relation_of(raw: str) -> str | None:
    """The canonical relation of an English or Korean word for one ("mum", "엄마" → mother)."""
    word = re.sub(r"\s+", " ", raw.strip().lower())
    for candidate in (word, word.replace(" ", "-"), word.replace("-", " ")):
        if candidate in en_words.RELATIONS:
            return en_words.RELATIONS[candidate]
    squeezed = word.replace(" ", "")
    for alias, relation in ko.RELATIONS.items():
        if alias.replace(" ", "") == squeezed:
            return relation
    return None


def person_name(raw: str | None, said: Said) -> str | None:
    """A clean person name, or None when the words are not one ("This", "제 딸 친구")."""
    if not raw:
        return None
    words = raw.strip(" ,.'").removesuffix("'s").split()
    while words and words[-1] in en_words.NOT_NAMES:
        words.pop()
    if not words or words[0] in en_words.NOT_NAMES:
        return None
    name = " ".join(words)
    if HANGUL.search(name):
        name = ko.strip_particle(name)
        if name in ko.NOT_NAMES or name in ko.TOPIC_WORDS or name in ko.PLACES:
            return None
        if relation_of(name) is not None or name in ko.NOT_ITEMS:
            return None
    return name


def subject_of(match: re.Match[str], said: Said, upto: int | None = None) -> tuple[str, str | None]:
    """Who a match is about: the user, a named person, or a relation ("my daughter")."""
    groups = match.groupdict()
    if groups.get("rel"):
        relation = relation_of(groups["rel"])
        if relation is not None:
            name = person_name(groups.get("relname"), said) or said.name_of(relation)
            return name or relation, relation
    if groups.get("name"):
        name = person_name(groups["name"], said)
        if name is None or name not in said.people:
            return "", None  # an unknown third person: not a fact we can file
        return name, said.people[name]
    if said.korean and groups.get("who") is None:
        return _korean_subject(said, match.start() if upto is None else upto)
    return "user", None


def _korean_subject(said: Said, upto: int) -> tuple[str, str | None]:
    """The nearest person named before ``upto`` in a Korean clause ("제 딸 지수가 …")."""
    best: tuple[int, str, str | None] = (-1, "user", None)
    for found in ko.SUBJECT.finditer(said.text[:upto]):
        if found["me"]:
            best = (found.start(), "user", None)
            continue
        relation = relation_of(found["rel"])
        if relation is None:
            continue
        name = person_name(found["person"], said) or said.name_of(relation) or relation
        best = (found.start(), name, relation)
    for name, relation in said.people.items():
        at = said.text.rfind(name, 0, upto)
        if at > best[0]:
            best = (at, name, relation)
    return best[1], best[2]


def moved_since(said: Said) -> datetime | None:
    """When a move or a switch happened, if the sentence says ("in 2019", "last month")."""
    hint = parse_time_hint(said.text, said.now)
    if hint is None or hint.start is None or hint.start > said.now:
        return None
    return hint.start
