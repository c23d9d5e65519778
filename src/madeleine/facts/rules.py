"""Rule-based fact extraction, the offline default: English and Korean patterns → card drafts.

Only what the user said becomes a fact. Each user message is split into sentences; every
pattern row of ``rules_en`` / ``rules_ko`` that matches is handed to the builder of its kind,
which reads the named groups and returns facts in the key/attribute conventions of
``madeleine.facts.cards``. Questions, hypotheticals ("if I move to Berlin") and negations
("I don't live in Paris anymore") yield nothing; hedged statements ("I think I'm allergic…")
get a lower confidence. Generic rows (likes, dislikes, switches) yield to a specific row
that matched the same words, so "I prefer window seats" is a seat preference and not also a
like. Requests are read for trips only ("can you book me a flight to Tokyo?").

The window is read twice: first for who the user's people are and where the user lives (so
"Sarah is allergic to peanuts" two messages after "my daughter Sarah" is about the
daughter, and a trip knows whether it goes abroad), then for every fact.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime

from madeleine.facts import rules_en as en
from madeleine.facts import rules_ko as ko
from madeleine.facts.cards import (
    Attribute,
    AttributeType,
    CardDraft,
    Category,
    MemoryType,
    Stability,
)
from madeleine.facts.extract import ExtractInput
from madeleine.text.dates import When, english_stamps, english_when, korean_when, month_end
from madeleine.text.temporal import parse_time_hint

__all__ = ["RuleExtractor", "slug", "split_sentences"]

BACKSTORY_CHARS = 300
EXPLICIT = 0.8
HEDGED = 0.5

_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_LATIN = re.compile(r"[A-Za-z]")
_PLACEHOLDER = re.compile(r"\[pii:(?P<category>[a-z_]+)(?::[a-z0-9]+)?\]")
_SECRET_CATEGORIES = frozenset(
    {"password", "pin", "cvv", "ssn", "resident_registration_number", "card_number"}
)


# ------------------------------------------------------------------------ records


@dataclass(frozen=True, slots=True)
class _Slot:
    """How the cards of one kind are filed: category, memory type, decay, weight."""

    category: Category
    memory_type: MemoryType
    stability: Stability
    importance: float
    multi_valued: bool = False
    current: bool = True  # stated as the present state: holds from the message time


_SEMANTIC, _EPISODIC, _PROCEDURAL = MemoryType.SEMANTIC, MemoryType.EPISODIC, MemoryType.PROCEDURAL
_STABLE, _VOLATILE = Stability.STABLE, Stability.VOLATILE
_SLOTS: dict[str, _Slot] = {
    "seat": _Slot(Category.PREFERENCE, _SEMANTIC, _STABLE, 0.6),
    "diet": _Slot(Category.PREFERENCE, _SEMANTIC, _STABLE, 0.75),
    "like": _Slot(Category.PREFERENCE, _SEMANTIC, _STABLE, 0.4, multi_valued=True, current=False),
    "dislike": _Slot(
        Category.PREFERENCE, _SEMANTIC, _STABLE, 0.4, multi_valued=True, current=False
    ),
    "switch": _Slot(Category.PREFERENCE, _SEMANTIC, _VOLATILE, 0.5),
    "loyalty": _Slot(Category.ACCOUNT, _SEMANTIC, _STABLE, 0.85),
    "bank": _Slot(Category.ACCOUNT, _SEMANTIC, _STABLE, 0.9),
    "document": _Slot(Category.IDENTITY, _SEMANTIC, _STABLE, 0.85),
    "name": _Slot(Category.IDENTITY, _SEMANTIC, _STABLE, 0.8, current=False),
    "birthday": _Slot(Category.IDENTITY, _SEMANTIC, _STABLE, 0.8, current=False),
    "contact": _Slot(Category.CONTACT, _SEMANTIC, _STABLE, 0.75),
    "allergy": _Slot(Category.HEALTH, _SEMANTIC, _STABLE, 0.9, multi_valued=True, current=False),
    "medication": _Slot(Category.HEALTH, _SEMANTIC, _STABLE, 0.85, multi_valued=True),
    "condition": _Slot(Category.HEALTH, _SEMANTIC, _STABLE, 0.85, multi_valued=True, current=False),
    "relationship": _Slot(
        Category.RELATIONSHIP, _SEMANTIC, _STABLE, 0.7, multi_valued=True, current=False
    ),
    "home": _Slot(Category.LOCATION, _SEMANTIC, _VOLATILE, 0.7),
    "workplace": _Slot(Category.LOCATION, _SEMANTIC, _VOLATILE, 0.6),
    "employer": _Slot(Category.WORK, _SEMANTIC, _VOLATILE, 0.6),
    "role": _Slot(Category.WORK, _SEMANTIC, _VOLATILE, 0.6),
    "appointment": _Slot(Category.PLAN, _EPISODIC, _VOLATILE, 0.7),
    "trip": _Slot(Category.PLAN, _EPISODIC, _VOLATILE, 0.75),
    "instruction": _Slot(Category.HABIT, _PROCEDURAL, _STABLE, 0.7, multi_valued=True),
}


@dataclass(frozen=True, slots=True)
class _Fact:
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
class _Said:
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
        return _HANGUL.search(self.text) is not None

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


_Builder = Callable[[re.Match[str], _Said], list[_Fact]]


# ------------------------------------------------------------------------- engine


class RuleExtractor:
    """The offline extractor: deterministic, no model, English and Korean."""

    name = "rules"

    def extract(self, window: Sequence[ExtractInput]) -> list[CardDraft]:
        said = [m for m in window if m.role == "user" and m.text.strip()]
        sentences = [(m, s) for m in said for s in split_sentences(m.text)]
        people, home = _context(sentences)
        drafts: list[CardDraft] = []
        for message, sentence in sentences:
            context = _Said(sentence, message, people, home)
            drafts.extend(_draft(fact, context) for fact in _read(context))
        return _merge(drafts)


_ABBREVIATION = re.compile(
    r"(?:\b(?:dr|mr|mrs|ms|prof|st|jr|sr|vs|etc|e\.g|i\.e|no|approx|inc|co|ltd|mt)\.|\b[a-z]\.)$",
    re.I,
)
_BREAK = re.compile(r"(?<=[.!?。！？])\s+|\n+|(?<=[.!?])(?=[\uac00-\ud7a3])")


MAX_SENTENCE_CHARS = 600


def split_sentences(text: str) -> list[str]:
    """Sentences, with curly quotes straightened; "Dr. Kim" and "a.m." do not end one. A run
    without punctuation is cut into pieces of at most 600 characters (at a space when there
    is one), which bounds the cost of every pattern on pasted text."""
    text = text.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    pieces: list[str] = []
    for piece in _BREAK.split(text):
        piece = re.sub(r"\s+", " ", piece).strip()
        if not piece:
            continue
        if pieces and _ABBREVIATION.search(pieces[-1]) and len(pieces[-1]) < MAX_SENTENCE_CHARS:
            pieces[-1] = f"{pieces[-1]} {piece}"
        else:
            pieces.append(piece)
    return [chunk for piece in pieces for chunk in _chunks(piece)]


def _chunks(piece: str) -> list[str]:
    chunks: list[str] = []
    while len(piece) > MAX_SENTENCE_CHARS:
        cut = piece.rfind(" ", MAX_SENTENCE_CHARS // 2, MAX_SENTENCE_CHARS)
        cut = cut if cut > 0 else MAX_SENTENCE_CHARS
        chunks.append(piece[:cut].strip())
        piece = piece[cut:].strip()
    return [*chunks, piece] if piece else chunks


_GENERIC = frozenset({"like", "dislike", "switch"})
_CONTEXT_KINDS = frozenset({"relation", "home", "moved"})


def _rows(said: _Said) -> list[tuple[str, re.Pattern[str]]]:
    rows: list[tuple[str, re.Pattern[str]]] = []
    if _LATIN.search(said.text):
        rows.extend(en.PATTERNS)
    if said.korean:
        rows.extend(ko.PATTERNS)
    return [r for r in rows if r[0] not in _GENERIC] + [r for r in rows if r[0] in _GENERIC]


def _read(said: _Said, kinds: frozenset[str] | None = None) -> list[_Fact]:
    text = said.text
    question = _asks(said)
    requested = bool(en.REQUEST.search(text) or (said.korean and ko.REQUEST.search(text)))
    taken: list[tuple[int, int]] = []
    facts: list[_Fact] = []
    for kind, pattern in _rows(said):
        if kinds is not None and kind not in kinds:
            continue
        if question and not (kind == "trip_request" and requested):
            continue
        for match in pattern.finditer(text):
            span = match.span()
            if kind in _GENERIC and any(s < span[1] and span[0] < e for s, e in taken):
                continue
            if _blocked(match, said, kind):
                continue
            found = _BUILDERS[kind](match, said)
            if found and kind not in _GENERIC and kind != "relation":  # who, not what
                taken.append(span)
            facts.extend(found)
    if en.HEDGE.search(text) or (said.korean and ko.HEDGE.search(text)):
        facts = [replace(f, confidence=min(f.confidence, HEDGED)) for f in facts]
    return facts


def _asks(said: _Said) -> bool:
    """Whether a sentence asks rather than tells (a tag question or a request to remember
    still tells: "I'm vegan, right?", "can you remember that I'm allergic to nuts?")."""
    text = said.text
    if en.REMEMBER.match(text):
        return False
    untagged = en.TAG_QUESTION.sub("", text)
    if untagged != text:
        return en.QUESTION_START.match(untagged) is not None
    return text.rstrip().endswith("?") or bool(
        en.QUESTION_START.match(text) or (said.korean and ko.QUESTION_END.search(text))
    )


_CLAUSE = re.compile(r"[,;:]|\s(?:but|and|so|because)\s|(?:지만|는데|고)\s")


def _blocked(match: re.Match[str], said: _Said, kind: str) -> bool:
    """Hypothetical or negated: "if I lived in Paris", "I live in Paris no longer"."""
    before = _CLAUSE.split(said.text[: match.start()])[-1]
    if kind != "trip_request" and (
        en.HYPOTHETICAL.search(before)
        or ko.HYPOTHETICAL.search(before)
        or en.REPORTED.search(before)
    ):
        return True
    return bool(en.NEGATED_AFTER.search(said.text[match.end() :]))


def _context(sentences: Iterable[tuple[ExtractInput, str]]) -> tuple[dict[str, str], str | None]:
    """Who the user's people are and the user's home country, from the whole window."""
    people: dict[str, str] = {}
    home: str | None = None
    for message, sentence in sentences:
        for fact in _read(_Said(sentence, message), _CONTEXT_KINDS):
            if fact.slot == "relationship" and fact.relationship:
                people[fact.subject] = fact.relationship
            elif fact.slot == "home" and fact.subject == "user":
                home = _value(fact.attributes, "country") or home
    return people, home


def _draft(fact: _Fact, said: _Said) -> CardDraft:
    slot = _SLOTS[fact.slot]
    message = said.message.text.strip()
    backstory = message if len(message) <= BACKSTORY_CHARS else _clip(said.text)
    valid_from = fact.valid_from or (said.now if slot.current else None)
    return CardDraft(
        statement=_clip(fact.statement, 1000),
        category=slot.category,
        subject=fact.subject,
        relationship=fact.relationship,
        backstory=backstory,
        attributes=list(fact.attributes),
        key=fact.key,
        multi_valued=slot.multi_valued,
        memory_type=slot.memory_type,
        stability=slot.stability,
        importance=slot.importance,
        confidence=fact.confidence,
        valid_from=valid_from,
        valid_to=None,
        sources=[said.message.event_id],
    )


def _merge(drafts: list[CardDraft]) -> list[CardDraft]:
    """One draft per fact: repeats add their sources, and two partial drafts of one
    single-valued slot (passport number, then its expiry) become one card."""
    merged: list[CardDraft] = []
    for draft in drafts:
        for index, kept in enumerate(merged):
            if kept.subject == draft.subject and kept.key == draft.key and _fits(kept, draft):
                merged[index] = _union(kept, draft)
                break
        else:
            merged.append(draft)
    return merged


def _fits(kept: CardDraft, draft: CardDraft) -> bool:
    old = {a.name: a.value.casefold() for a in kept.attributes}
    new = {a.name: a.value.casefold() for a in draft.attributes}
    if kept.multi_valued:
        return old == new
    return all(old[name] == value for name, value in new.items() if name in old)


def _union(kept: CardDraft, draft: CardDraft) -> CardDraft:
    names = {a.name for a in kept.attributes}
    extra = [a for a in draft.attributes if a.name not in names]
    statement = kept.statement
    if extra and draft.statement not in statement:
        statement = _clip(f"{statement} {draft.statement}", 1000)
    starts = [t for t in (kept.valid_from, draft.valid_from) if t is not None]
    return kept.model_copy(
        update={
            "statement": statement,
            "attributes": [*kept.attributes, *extra][:20],
            "confidence": max(kept.confidence, draft.confidence),
            "sources": sorted({*kept.sources, *draft.sources}),
            "valid_from": min(starts) if starts else None,
        }
    )


# ------------------------------------------------------------------------ helpers


def _clip(text: str, limit: int = BACKSTORY_CHARS) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _attr(name: str, value: str, kind: AttributeType = "text") -> Attribute:
    return Attribute(name=name, type=kind, value=_clip(value, 500), unit=None)


def _value(attributes: Iterable[Attribute], name: str) -> str | None:
    return next((a.value for a in attributes if a.name == name), None)


def slug(text: str) -> str:
    """Key suffix: ascii lower snake case, accents folded, Hangul kept ("Zürich" → "zurich")."""
    folded = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    folded = unicodedata.normalize("NFC", folded).lower().replace("&", " and ")
    return re.sub(r"[^0-9a-z\uac00-\ud7a3]+", "_", folded).strip("_") or "other"


def _who(subject: str, relationship: str | None, possessive: bool = False) -> str:
    if subject == "user":
        return "The user's" if possessive else "The user"
    if relationship is not None and subject == relationship:
        subject = f"The user's {relationship.replace('_', ' ')}"
    return f"{subject}'s" if possessive else subject


def _relation(raw: str) -> str | None:
    word = re.sub(r"\s+", " ", raw.strip().lower())
    for candidate in (word, word.replace(" ", "-"), word.replace("-", " ")):
        if candidate in en.RELATIONS:
            return en.RELATIONS[candidate]
    squeezed = word.replace(" ", "")
    for alias, relation in ko.RELATIONS.items():
        if alias.replace(" ", "") == squeezed:
            return relation
    return None


def _person(raw: str | None, said: _Said) -> str | None:
    """A clean person name, or None when the words are not one ("This", "제 딸 친구")."""
    if not raw:
        return None
    words = raw.strip(" ,.'").removesuffix("'s").split()
    while words and words[-1] in en.NOT_NAMES:
        words.pop()
    if not words or words[0] in en.NOT_NAMES:
        return None
    name = " ".join(words)
    if _HANGUL.search(name):
        name = ko.strip_particle(name)
        if name in ko.NOT_NAMES or name in ko.TOPIC_WORDS or name in ko.PLACES:
            return None
        if _relation(name) is not None or name in ko.NOT_ITEMS:
            return None
    return name


def _subject(match: re.Match[str], said: _Said, upto: int | None = None) -> tuple[str, str | None]:
    """Who a match is about: the user, a named person, or a relation ("my daughter")."""
    groups = match.groupdict()
    if groups.get("rel"):
        relation = _relation(groups["rel"])
        if relation is not None:
            name = _person(groups.get("relname"), said) or said.name_of(relation)
            return name or relation, relation
    if groups.get("name"):
        name = _person(groups["name"], said)
        if name is None or name not in said.people:
            return "", None  # an unknown third person: not a fact we can file
        return name, said.people[name]
    if said.korean and groups.get("who") is None:
        return _korean_subject(said, match.start() if upto is None else upto)
    return "user", None


def _korean_subject(said: _Said, upto: int) -> tuple[str, str | None]:
    """The nearest person named before ``upto`` in a Korean clause ("제 딸 지수가 …")."""
    best: tuple[int, str, str | None] = (-1, "user", None)
    for found in ko.SUBJECT.finditer(said.text[:upto]):
        if found["me"]:
            best = (found.start(), "user", None)
            continue
        relation = _relation(found["rel"])
        if relation is None:
            continue
        name = _person(found["person"], said) or said.name_of(relation) or relation
        best = (found.start(), name, relation)
    for name, relation in said.people.items():
        at = said.text.rfind(name, 0, upto)
        if at > best[0]:
            best = (at, name, relation)
    return best[1], best[2]


# -------------------------------------------------------------------- items


_LEADING = re.compile(
    r"^(?:the|a|an|some|all|any|most|many|certain|really|very|also|just)\s+", re.I
)
_TRAILING = re.compile(
    r"\s+(?:too|as\s+well|a\s+lot|so\s+much|very\s+much|the\s+most|best|anymore|now|lately"
    r"|these\s+days|in\s+general|though|actually|really|more|most|of\s+all)$",
    re.I,
)
_PREFERRED_OVER = re.compile(r"\s+(?:over|rather\s+than|instead\s+of|than|more\s+than)\s+.*$", re.I)
_NOT_ITEM_START = frozenset(
    """it it's its that that's this these those your you you're how what when where which who
    why whether if him her them me us myself yourself everything anything nothing something
    everyone anyone everybody anybody both each there here so such getting being having doing
    talking his their every to""".split()
)
_NOT_ITEMS = frozenset(
    "things stuff one ones idea lot much more less better best thing way that to".split()
)
# a clause rather than a thing: "the way it turned out", "skill is awesome"
_CLAUSE_ITEM = re.compile(
    r"^the\s+(?:way|fact|idea|thought|feeling|moment|support|chance|opportunity|time)\b"
    r"|\b(?:is|are|was|were|been|will|would|can|could|should|has|had|does|did|makes?|keeps?"
    r"|brings?|gets?|helps?|turned|you|I|me|we|they|he|she)\b|'(?:ll|re|ve|d|s)\b",
    re.I,
)
_DULL_VERBS = frozenset(
    """think know say see ask make be have get go book try keep use hear check confirm do start
    remind add change tell let help find call mention point admit""".split()
)


_TIME_TAIL = re.compile(
    r"\s+(?:(?:last|this|next|past)\s+(?:year|month|week|summer|winter|spring|fall|autumn"
    r"|weekend|night|time)|\d+\s+\w+\s+ago|(?:a\s+)?(?:few|couple\s+of)\s+\w+\s+ago"
    r"|(?:a\s+)?(?:long\s+)?(?:while|time)\s+ago|recently|yesterday|today|as\s+a\s+(?:kid|child"
    r"|teenager|baby)|when\s+I\s+was|(?:in|since|back\s+in)\s+(?:\d{4}|(?:early|late|mid)\s+\d{4}"
    r"|high\s+school|college|childhood))\b.*$",
    re.I,
)


def _english_items(raw: str) -> list[str]:
    """A clause's noun phrases: "hiking, swimming and reading" → three items."""
    raw = _PREFERRED_OVER.sub("", _TIME_TAIL.sub("", raw.strip(" ,;:-\"'")))
    items: list[str] = []
    parts = re.split(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|&|nor|plus)\s+", raw)
    for position, part in enumerate(parts):
        part = part.strip(" \"'")
        for _ in range(3):
            part = _TRAILING.sub("", _LEADING.sub("", part)).strip(" \"'")
        if part.lower().startswith("to "):
            verb = part[3:].split(" ", 1)[0].lower()
            part = "" if verb in _DULL_VERBS else part[3:]
        words = part.split()
        if (
            not words
            or len(words) > 6
            or words[0].lower() in _NOT_ITEM_START
            or part.lower() in _NOT_ITEMS
            or _CLAUSE_ITEM.search(part)
        ):
            if position == 0:  # "I love how it shows X and Y": the rest belongs to that clause
                return []
            continue
        items.append(part)
    return items


_KOREAN_DEMONSTRATIVES = frozenset("그 이 저 그런 이런 저런 그거 이거 저거".split())


def _korean_item(raw: str, said: _Said) -> str | None:
    """The noun phrase before a particle, without the topic words in front of it; None for
    what cannot be resolved ("그 영화": which film?)."""
    words = raw.split()
    if words and words[0] in _KOREAN_DEMONSTRATIVES:
        return None
    while len(words) > 1:
        head = words[0]
        base = ko.strip_particle(head)
        if (
            head in ko.TOPIC_WORDS
            or base in ko.TOPIC_WORDS
            or _relation(base) is not None
            or base in said.people
            or head[-1] in "가를을도이"
            or head in ("제", "우리", "내", "저의", "저희")
        ):
            words.pop(0)
            continue
        break
    item = " ".join(words)
    if not item or item in ko.NOT_ITEMS or words[-1] in ko.NOT_ITEMS:
        return None
    if item in said.people or item in ko.TOPIC_WORDS or _relation(item) is not None:
        return None  # "지수는 좋아해요": who likes, not what
    return item


def _items(match: re.Match[str], group: str, said: _Said) -> list[tuple[str, int]]:
    """Items of a match group with where each starts (for Korean subject lookup)."""
    raw = match.group(group)
    if raw is None:
        return []
    if _HANGUL.search(raw):
        found = _korean_item(raw, said)
        return [] if found is None else [(found, match.start(group) + raw.rfind(found))]
    items = _english_items(raw)
    if items and not re.search(r"[A-Za-z]", said.text[: match.start(group)]):
        first = items[0]  # "Penicillin allergy.": capital only because it opens the sentence
        if first[:1].isupper() and first[1:2].islower():
            items[0] = first[0].lower() + first[1:]
    return [(item, match.start(group)) for item in items]


def _place(raw: str | None) -> tuple[str, str | None, bool] | None:
    """(canonical name, country, is a country) for a place as written."""
    if not raw:
        return None
    words = raw.strip(" ,.;:'\"").removesuffix("'s").split()
    while words and (words[-1] in en.NOT_NAMES or words[-1].lower() in ("now", "soon")):
        words.pop()
    if not words or words[0] in en.NOT_NAMES:
        return None
    name = " ".join(words)
    lowered = name.lower()
    if name in ko.PLACES:
        canonical, country = ko.PLACES[name]
        return canonical, country, canonical == country
    if _KOREAN_DISTRICT.fullmatch(name):
        return name, "South Korea", False
    if lowered in en.COUNTRIES:
        country = en.COUNTRIES[lowered]
        return country, country, True
    if lowered in en.CITIES:
        return (name.title() if name.islower() else name), en.CITIES[lowered], False
    if lowered in en.BRAND_TOPICS:
        return None
    return name, None, False


_KOREAN_DISTRICT = re.compile(r"[\uac00-\ud7a3]{1,6}(?:시|군|구|동|읍|면|도)")


def _placeholder_category(value: str) -> str | None:
    found = _PLACEHOLDER.fullmatch(value.strip())
    return None if found is None else found["category"]


# --------------------------------------------------------------------- builders


def _build_relation(match: re.Match[str], said: _Said) -> list[_Fact]:
    relation = _relation(match["rel"])
    person = _person(match["person"], said)
    if relation is None or person is None:
        return []
    words = relation.replace("_", " ")
    return [
        _Fact(
            "relationship",
            f"relationship.{relation}",
            f"{person} is the user's {words}.",
            (_attr("name", person, "person"),),
            subject=person,
            relationship=relation,
        )
    ]


def _build_seat(match: re.Match[str], said: _Said) -> list[_Fact]:
    raw = re.sub(r"[\s-]+", " ", match["seat"].lower())
    seat = en.SEATS.get(raw) or ko.SEATS.get(match["seat"]) or ko.SEATS.get(raw.replace(" ", ""))
    if seat is None:
        return []
    return [
        _Fact("seat", "preference.seat", f"The user prefers {seat} seats.", (_attr("seat", seat),))
    ]


def _build_diet(match: re.Match[str], said: _Said) -> list[_Fact]:
    raw = re.sub(r"\s+", " ", match["diet"].lower())
    diet = en.DIETS.get(raw) or ko.DIETS.get(raw) or ko.DIETS.get(raw.replace(" ", ""))
    squeezed = raw.replace(" ", "")
    if diet is None:
        diet = next((v for k, v in ko.DIETS.items() if k.replace(" ", "") == squeezed), None)
    subject, relationship = _subject(match, said)
    if diet is None or not subject:
        return []
    who = _who(subject, relationship)
    if diet in ("vegetarian", "vegan", "pescatarian", "flexitarian"):
        statement = f"{who} is {diet}."
    elif diet in ("halal", "kosher"):
        statement = f"{who} eats {diet}."
    else:
        statement = f"{who} follows a {diet} diet."
    inferred = raw in ("meat", "any meat", "animal products", "고기", "육류")
    return [
        _Fact(
            "diet",
            "preference.diet",
            statement,
            (_attr("diet", diet),),
            subject,
            relationship,
            0.7 if inferred else EXPLICIT,
        )
    ]


def _preference(slot: str, verb: str) -> _Builder:
    def build(match: re.Match[str], said: _Said) -> list[_Fact]:
        facts: list[_Fact] = []
        for item, at in _items(match, "item", said):
            subject, relationship = _subject(match, said, at)
            if not subject:
                continue
            facts.append(
                _Fact(
                    slot,
                    f"preference.{slot}",
                    f"{_who(subject, relationship)} {verb} {item}.",
                    (_attr("item", item),),
                    subject,
                    relationship,
                )
            )
        return facts

    return build


_LABEL_KINDS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.I), kind)
    for pattern, kind in (
        (r"\b(?:routing|aba)\b", "routing"),
        (
            r"\b(?:ssn|social\s+security|resident|registration|cvv|cvc|pin|password|passcode"
            r"|credit|debit|card|tax|order|confirmation|booking|ticket|tracking|case|room"
            r"|reference|invoice|policy|license\s+plate|flight)\b|주민|카드|비밀번호",
            "skip",
        ),
        (r"\bpassport\b|여권", "passport"),
        (r"\bdriver'?s'?\b|\blicen[cs]e\b|운전|면허", "drivers_license"),
        (r"\bid\s+card\b|\bnational\s+id\b|신분증", "id_card"),
        (
            r"\b(?:phone|cell|mobile|telephone|contact|whatsapp)\b|전화|휴대폰|핸드폰|연락처",
            "phone",
        ),
        (r"\b(?:checking|current)\b|입출금|보통\s*예금", "checking"),
        (r"\bsavings?\b|적금|저축|예금", "savings"),
        (r"\biban\b", "iban"),
        (
            r"\b(?:frequent\s+fl[iy]er|loyalty|rewards?|membership|member|miles|mileage|points"
            r"|club|program|programme|skymiles|mileageplus|aadvantage|bonvoy|honors|avios"
            r"|krisflyer|skypass|known\s+traveler|global\s+entry|tsa)\b|회원|멤버십|마일리지|스카이패스",
            "loyalty",
        ),
        (r"\b(?:account|acct|bank)\b|계좌|은행|뱅크", "bank"),
    )
)
_PLACEHOLDER_KINDS = {
    "loyalty_number": "loyalty",
    "account_number": "bank",
    "iban": "iban",
    "phone": "phone",
    "email": "email",
}
_GENERIC_LABEL_WORDS = frozenset(
    """number no no. num id account acct membership member loyalty card my our the is
    checking savings current bank routing aba""".split()
)


def _build_identifier(match: re.Match[str], said: _Said) -> list[_Fact]:
    value = match["value"].strip().rstrip(".,")
    label = re.sub(r"\s+", " ", (match["label"] or "").strip())
    noun = match.groupdict().get("noun") or ""
    org = (match.groupdict().get("org") or "").strip(" .,")
    described = f"{label} {noun}"
    category = _placeholder_category(value)
    if category in _SECRET_CATEGORIES:
        return []
    kind = next((k for p, k in _LABEL_KINDS if p.search(described)), None)
    if kind == "skip":
        return []
    placeholder_kind = _PLACEHOLDER_KINDS.get(category or "")
    if placeholder_kind == "bank" and kind in ("checking", "savings", "routing"):
        placeholder_kind = kind
    kind = placeholder_kind or kind
    bare = match.groupdict().get("bare") is not None  # no "my": the label must say what
    if kind is None and not bare and re.search(r"[A-Z]", label) and not _HANGUL.search(label):
        kind = "loyalty"  # "my United MileagePlus number …": a brand's number
    if kind is None:
        return []
    if kind == "phone":
        return [_contact("phone", value)]
    if kind == "email":
        return [_contact("email", value)]
    if kind in ("passport", "drivers_license", "id_card"):
        words = kind.replace("_", " ").replace("drivers", "driver's")
        return [
            _Fact(
                "document",
                f"identity.{kind}",
                f"The user's {words} number is {value}.",
                (_attr("number", value, "identifier"),),
            )
        ]
    if kind == "loyalty":
        programme = _programme(label, org)
        return [
            _Fact(
                "loyalty",
                f"account.loyalty.{slug(programme)}",
                f"The user's {programme} number is {value}.",
                (_attr("programme", programme), _attr("number", value, "identifier")),
            )
        ]
    bank = _bank_name(label, org)
    bank_kind = {"checking": "checking", "savings": "savings", "routing": "routing"}.get(
        kind, "account"
    )
    what = "bank routing number" if bank_kind == "routing" else f"{bank_kind} account number"
    if kind == "iban":
        what = "IBAN"
    attributes = [_attr("number", value, "identifier")]
    if bank:
        attributes.append(_attr("bank", bank))
    return [
        _Fact(
            "bank",
            f"account.bank.{bank_kind}",
            f"The user's {what} is {value}" + (f" ({bank})." if bank else "."),
            tuple(attributes),
        )
    ]


def _programme(label: str, org: str) -> str:
    if _HANGUL.search(label):
        words = [w for w in label.split() if w not in ko.TOPIC_WORDS and w not in ("제", "내")]
        name = " ".join(words)
        for alias, canonical in ko.PROGRAMMES.items():
            if alias in name:
                return canonical
        return name or "membership"
    branded = [w for w in label.split() if w[:1].isupper() and w.lower() not in ("my", "our")]
    if branded:
        return " ".join(branded)
    if org:
        return org
    words = [w for w in label.split() if w.lower() not in _GENERIC_LABEL_WORDS]
    return " ".join(words) or "loyalty"


def _bank_name(label: str, org: str) -> str | None:
    if _HANGUL.search(label):
        banks = [w for w in label.split() if re.search(r"은행|뱅크|농협", w)]
        return banks[-1] if banks else None
    branded = [
        w
        for w in label.split()
        if w[:1].isupper() and w.lower() not in _GENERIC_LABEL_WORDS | {"my", "our"}
    ]
    return " ".join(branded) or org or None


def _contact(kind: str, value: str) -> _Fact:
    return _Fact(
        "contact",
        f"contact.{kind}",
        f"The user's {kind} is {value}.",
        (_attr("value", value, "identifier"),),
    )


def _build_email(match: re.Match[str], said: _Said) -> list[_Fact]:
    value = match["value"].rstrip(".")
    category = _placeholder_category(value)
    if category is not None and category != "email":
        return []
    return [_contact("email", value)]


def _build_phone(match: re.Match[str], said: _Said) -> list[_Fact]:
    value = match["value"].strip()
    category = _placeholder_category(value)
    if category is not None and category != "phone":
        return []
    return [_contact("phone", value)]


def _build_address(match: re.Match[str], said: _Said) -> list[_Fact]:
    value = match["value"].strip(" .,")
    if len(value) < 4:
        return []
    return [
        _Fact(
            "contact",
            "contact.address",
            f"The user's address is {value}.",
            (_attr("value", value, "place"),),
        )
    ]


def _build_name(match: re.Match[str], said: _Said) -> list[_Fact]:
    name = _person(match["person"], said)
    if name is None:
        return []
    return [
        _Fact(
            "name",
            "identity.name",
            f"The user's name is {name}.",
            (_attr("name", name, "person"),),
        )
    ]


def _build_birthday(match: re.Match[str], said: _Said) -> list[_Fact]:
    when = said.when(said.text[match.start() :], past=True)
    subject, relationship = _subject(match, said)
    if when is None or when.precision != "day" or not subject:
        return []
    if when.has_year:
        attribute = _attr("date", when.start.isoformat(), "date")
    else:  # a yearly date: ISO 8601 "--MM-DD", typed as text since it is no calendar day
        attribute = _attr("date", f"--{when.start:%m-%d}")
    who = _who(subject, relationship, possessive=True)
    return [
        _Fact(
            "birthday",
            "identity.birthday",
            f"{who} birthday is {attribute.value}.",
            (attribute,),
            subject,
            relationship,
        )
    ]


_DOCUMENT_WORDS = (
    (re.compile(r"passport|여권", re.I), "passport"),
    (re.compile(r"driv|licen|운전|면허", re.I), "drivers_license"),
    (re.compile(r"\bid\b|national|신분증", re.I), "id_card"),
    (re.compile(r"visa|비자", re.I), "visa"),
    (re.compile(r"permit|green", re.I), "residence_permit"),
)


def _build_document(match: re.Match[str], said: _Said) -> list[_Fact]:
    """An identity document's expiry; a month alone ("in February 2025") means its last
    day, a year alone its 31 December — the latest day the document can still be valid."""
    raw = match["doc"]
    kind = next((k for p, k in _DOCUMENT_WORDS if p.search(raw)), "passport")
    expired = re.search(r"\bexpired\b|만료됐|만료되었", match.group(0), re.I) is not None
    when = said.when(said.text[match.start() :], past=expired) or said.when(past=expired)
    if when is None:
        return []
    expires = when.start
    if when.precision == "month":
        expires = month_end(expires.year, expires.month)
    elif when.precision == "year":
        expires = date(expires.year, 12, 31)
    attributes = [_attr("expires_on", expires.isoformat(), "date")]
    nation = (match.groupdict().get("nation") or "").lower()
    if nation in en.DEMONYMS:
        attributes.append(_attr("country", en.DEMONYMS[nation], "place"))
    words = kind.replace("_", " ").replace("drivers", "driver's")
    return [
        _Fact(
            "document",
            f"identity.{kind}",
            f"The user's {words} expires on {expires.isoformat()}.",
            tuple(attributes),
        )
    ]


_ALLERGY_FILLER = frozenset(
    """really very bad severe mild serious slight major minor known deadly life-threatening
    pretty quite super extreme extremely terrible awful horrible strong little small big also
    a an the some""".split()
)
_NOT_ALLERGENS = frozenset(
    """seasonal food drug skin any no known environmental spring multiple several many lots
    other certain an a the my his her some mild severe it that this them anything everything
    nothing something""".split()
)


def _build_allergy(match: re.Match[str], said: _Said) -> list[_Fact]:
    facts: list[_Fact] = []
    for item, at in _items(match, "allergen", said):
        words = item.split()
        while len(words) > 1 and words[0].lower() in _ALLERGY_FILLER:
            words.pop(0)
        allergen = " ".join(words)
        if allergen.lower() in _NOT_ALLERGENS or allergen.lower().endswith("allergy"):
            continue
        subject, relationship = _subject(match, said, at)
        if not subject:
            continue
        facts.append(
            _Fact(
                "allergy",
                "health.allergy",
                f"{_who(subject, relationship)} is allergic to {allergen}.",
                (_attr("allergen", allergen),),
                subject,
                relationship,
            )
        )
    return facts


_MEDICATION_STOP = re.compile(
    r"\s+(?:for|since|because|every|daily|twice|once|in|at|to|and|with|now|each|as|when"
    r"|after|before|right|still|too|regularly|again)\b.*$",
    re.I,
)


def _build_medication(match: re.Match[str], said: _Said) -> list[_Fact]:
    raw = match["med"].strip()
    dose = (match.groupdict().get("dose") or "").strip()
    verb = (match.groupdict().get("verb") or "").lower()
    if _HANGUL.search(raw):
        medication = _korean_item(raw, said) or ""
        known = (
            medication in ko.MEDICATIONS
            or medication.endswith(("약", "제", "린", "정"))
            or bool(dose)
            or not verb.startswith("먹")
        )
    else:
        medication = _MEDICATION_STOP.sub("", raw).strip()
        lowered = medication.lower()
        known = (
            bool(dose)
            or "prescribed" in verb
            or "put" in match.group(0).lower()
            or any(w in en.MEDICATIONS for w in lowered.split())
            or lowered in en.MEDICATIONS
            or any(en.MEDICATION_SUFFIX.search(w) for w in lowered.split())
        )
    if not medication or not known or medication.lower() in _NOT_ITEM_START:
        return []
    subject, relationship = _subject(match, said, match.start("med"))
    if not subject:
        return []
    attributes = [_attr("medication", medication)]
    if dose:
        attributes.append(_attr("dose", dose))
    taken = f" {dose}" if dose else ""
    return [
        _Fact(
            "medication",
            "health.medication",
            f"{_who(subject, relationship)} takes {medication}{taken}.",
            tuple(attributes),
            subject,
            relationship,
        )
    ]


def _build_condition(match: re.Match[str], said: _Said) -> list[_Fact]:
    groups = match.groupdict()
    if groups.get("adjective"):
        raw = re.sub(r"\s+", " ", groups["adjective"].lower())
        conditions = [en.CONDITION_ADJECTIVES.get(raw, raw)]
    elif _HANGUL.search(groups.get("condition") or ""):
        found = _korean_item(groups["condition"], said)
        conditions = [found] if found else []
    else:
        conditions = [
            re.sub(r"^(?:an?|the)\s+", "", c, flags=re.I)
            for c in _english_items(groups["condition"])
        ]
    subject, relationship = _subject(match, said)
    facts: list[_Fact] = []
    for condition in conditions:
        if not subject or not condition:
            continue
        facts.append(
            _Fact(
                "condition",
                "health.condition",
                f"{_who(subject, relationship)} has {condition}.",
                (_attr("condition", condition),),
                subject,
                relationship,
            )
        )
    return facts


_NOT_WHAT = frozenset("to lot few some of no any been got a an the this that".split())
_TIME_WORDS = re.compile(r"\d|내일|오늘|모레|다음|이번|오전|오후|저녁|아침|주말|요일|시$")
_RESCHEDULED = re.compile(
    r"\b(?:moved|rescheduled|pushed|changed|postponed)\b.*?\bto\b|(?:으로|로)\s*(?:바뀌|변경|옮)",
    re.I,
)


def _build_appointment(match: re.Match[str], said: _Said) -> list[_Fact]:
    groups = match.groupdict()
    tail = said.text[match.start() :]
    moved = _RESCHEDULED.search(tail)
    when = said.when(tail[moved.end() :]) if moved else None
    when = when or said.when(tail) or said.when()
    if when is None or when.start < said.now.date():
        return []
    if said.korean and _HANGUL.search(match.group(0)):
        key, title = _korean_appointment(groups)
    else:
        found = _english_appointment(groups)
        if found is None:
            return []
        key, title = found
    start = when.start_value(said.now)
    kind: AttributeType = "datetime" if isinstance(start, datetime) else "date"
    attributes = [_attr("title", title), _attr("start", start.isoformat(), kind)]
    subject, relationship = _subject(match, said)
    return [
        _Fact(
            "appointment",
            f"plan.appointment.{slug(key)}",
            f"{_who(subject or 'user', relationship)} has {title} on {_spoken(start)}.",
            tuple(attributes),
            subject or "user",
            relationship,
        )
    ]


def _english_appointment(groups: Mapping[str, str | None]) -> tuple[str, str] | None:
    what = re.sub(r"'s\b", "", (groups.get("what") or "").strip().lower())
    if any(w in _NOT_WHAT for w in what.split()):
        return None
    noun = (groups.get("noun") or "").lower().replace("appt", "appointment").replace("-", "")
    who = re.sub(r"^(?:the|my|a|an)\s+", "", (groups.get("with") or "").strip(" .,"), flags=re.I)
    if not noun:  # "I'm seeing the dentist", "I'm getting a haircut"
        return (who or what), (f"{who.lower()} appointment" if who else what)
    if noun == "appointment":
        key = what or who.lower() or "appointment"
        title = f"{what} appointment" if what else f"appointment with {who}" if who else noun
        return key, title
    if what:
        return f"{what} {noun}", f"{what} {noun}" + (f" with {who}" if who else "")
    return (f"{noun} {who}" if who else noun), (f"{noun} with {who}" if who else noun)


def _korean_appointment(groups: Mapping[str, str | None]) -> tuple[str, str]:
    what = groups.get("what") or ""
    if _TIME_WORDS.search(what):
        what = ""
    noun = re.sub(r"\s+", " ", groups.get("noun") or "")
    place = ko.APPOINTMENT_PLACES.get(what)
    title = f"{what} {noun}".strip()
    if place is not None:
        return place, title
    noun_key = ko.APPOINTMENT_NOUNS.get(noun) or ko.APPOINTMENT_NOUNS.get(noun.replace(" ", ""))
    if what:
        return f"{what} {noun_key or noun}", title
    return noun_key or noun, title


def _spoken(moment: date | datetime) -> str:
    if isinstance(moment, datetime):
        return moment.isoformat(sep=" ", timespec="minutes")
    return moment.isoformat()


_FLIGHT = re.compile(
    r"\bfl(?:y|ying|ight|ights|ew)\b|\bplane\b|\bair(?:fare|line)\b|비행|항공", re.I
)
_MODES = (
    (_FLIGHT, "flight"),
    (re.compile(r"\b(?:train|rail)\b|기차|KTX|SRT", re.I), "train"),
    (re.compile(r"\bbus\b|버스", re.I), "bus"),
    (re.compile(r"\bferry\b|페리|배편", re.I), "ferry"),
    (re.compile(r"\b(?:driving|drive|car|road\s+trip)\b|차\s*타고|운전", re.I), "car"),
)
_TRAVEL_BOOKINGS = re.compile(
    r"hotel|accommodation|trip|vacation|holiday|getaway|cruise|honeymoon|rental|여행|숙소|호텔",
    re.I,
)
_TRAVEL_VERBS = frozenset({"flying", "fly", "travelling", "traveling", "travel", "be flying"})


_PAST_TRIP = re.compile(
    r"\b(?:last\s+(?:year|month|week|weekend|summer|winter|spring|fall|autumn|night|time"
    r"|\w+day)|ago|yesterday|this\s+past|went|was|were|took|had|got\s+back|came\s+back"
    r"|returned|visited|snapped|loved|enjoyed)\b|지난|작년|어제|그저께|다녀왔|갔었|갔다|갔어",
    re.I,
)


def _clause(text: str, match: re.Match[str]) -> str:
    """The clause around a match: between the commas, semicolons or "but"s that bound it."""
    separators = (",", ";", " but ", " though ")
    start = max(text.rfind(s, 0, match.start()) for s in separators) + 1
    ends = [i for i in (text.find(s, match.end()) for s in separators) if i >= 0]
    return text[start : min(ends) if ends else len(text)]


def _build_trip(match: re.Match[str], said: _Said) -> list[_Fact]:
    place = _place(match["dest"])
    if place is None or _PAST_TRIP.search(_clause(said.text, match)):
        return []  # "on my trip to the UK last Friday": a memory, not a plan
    destination, country, _is_country = place
    groups = match.groupdict()
    mode_text = " ".join(filter(None, (groups.get("mode"), groups.get("verb"))))
    mode = next((m for p, m in _MODES if p.search(mode_text)), None)
    if mode is None and _FLIGHT.search(said.text):
        mode = "flight"
    booked = _TRAVEL_BOOKINGS.search(groups.get("mode") or "") is not None
    known = country is not None or mode is not None or booked
    if not known and (groups.get("verb") or "").lower() not in _TRAVEL_VERBS:
        return []  # "I'm going to Costco", "tickets to Hamilton": not a trip we can tell
    when = said.when()
    attributes = [_attr("destination", destination, "place")]
    if when is not None and when.start >= said.now.date():
        attributes.append(_attr("start_date", when.start.isoformat(), "date"))
        if when.end is not None:
            attributes.append(_attr("end_date", when.end.isoformat(), "date"))
    if mode is not None:
        attributes.append(_attr("travel_mode", mode))
    home = said.home_country or ("South Korea" if said.korean else None)
    if country is not None and home is not None and country == home:
        attributes.append(_attr("international", "false"))
    elif mode == "flight" or country is not None:
        attributes.append(_attr("international", "true"))
    start = _value(attributes, "start_date")
    end = _value(attributes, "end_date")
    statement = f"The user plans a trip to {destination}"
    statement += f" by {mode}" if mode in ("flight", "train", "bus", "ferry", "car") else ""
    statement += f" from {start}" if start else ""
    statement += f" to {end}" if end else ""
    return [
        _Fact(
            "trip",
            f"plan.trip.{slug(destination)}",
            statement + ".",
            tuple(attributes),
        )
    ]


def _moved_since(said: _Said) -> datetime | None:
    """When a move or a switch happened, if the sentence says ("in 2019", "last month")."""
    hint = parse_time_hint(said.text, said.now)
    if hint is None or hint.start is None or hint.start > said.now:
        return None
    return hint.start


def _location(slot: str, key: str, verb: str, group: str) -> _Builder:
    def build(match: re.Match[str], said: _Said) -> list[_Fact]:
        raw = match.groupdict().get(group) or match.groupdict().get(f"{group}2")
        place = _place(raw)
        if place is None:
            return []
        name, country, is_country = place
        if slot == "workplace" and country is None:
            return []  # "I work in marketing / Sales": a field, not a place
        subject, relationship = _subject(match, said)
        if not subject:
            return []
        attributes = [] if is_country else [_attr("city", name, "place")]
        if country is not None:
            attributes.append(_attr("country", country, "place"))
        moved = verb == "moved to"
        return [
            _Fact(
                slot,
                key,
                f"{_who(subject, relationship)} {verb} {name}.",
                tuple(attributes),
                subject,
                relationship,
                valid_from=_moved_since(said) if moved else None,
            )
        ]

    return build


_NOT_EMPLOYERS = frozenset(
    """회사 집 여기 거기 저기 밖 카페 사무실 재택 학교 학원 대학 대학교 병원 은행 공장 가게 식당
    본사 지사 현장 시내 근처 동네 스타트업 중소기업 대기업 외국계 곳 데 거""".split()
)


def _build_employer(match: re.Match[str], said: _Said) -> list[_Fact]:
    raw = (match.groupdict().get("org") or "").strip(" .,;'")
    words = raw.split()
    while words and (words[-1] in en.NOT_NAMES or words[-1].lower() in ("now", "as")):
        words.pop()
    org = " ".join(words)
    if not org or org in _NOT_EMPLOYERS or (words and words[0] in en.NOT_NAMES):
        return []
    place = _place(org)
    if place is not None and place[1] is not None:
        return _location("workplace", "location.work", "works in", "org")(match, said)
    subject, relationship = _subject(match, said)
    if not subject:
        return []
    started = re.search(r"\b(?:started|joined|hired)\b", match.group(0), re.I)
    return [
        _Fact(
            "employer",
            "work.employer",
            f"{_who(subject, relationship)} works at {org}.",
            (_attr("name", org),),
            subject,
            relationship,
            valid_from=_moved_since(said) if started else None,
        )
    ]


_NOT_ROLE_WORDS = frozenset(
    """good great bad big huge terrible little real total complete proud happy lucky really very
    pretty quite such typical bit kind sort""".split()
)


def _build_role(match: re.Match[str], said: _Said) -> list[_Fact]:
    role = re.sub(r"\s+", " ", match["role"].strip(" .,")).strip()
    if not role or any(w.lower() in _NOT_ROLE_WORDS for w in role.split()):
        return []
    subject, relationship = _subject(match, said)
    if not subject:
        return []
    facts = [
        _Fact(
            "role",
            "work.role",
            f"{_who(subject, relationship)} works as {_article(role)}.",
            (_attr("name", role),),
            subject,
            relationship,
        )
    ]
    if match.groupdict().get("org") and "student" not in role.lower():
        facts.extend(_build_employer(match, said))
    return facts


def _article(role: str) -> str:
    if _HANGUL.search(role):
        return role
    return f"{'an' if role[:1].lower() in 'aeiou' else 'a'} {role}"


_NOT_SWITCH_TOPICS = frozenset(
    """flight flights seat seats booking reservation appointment meeting ticket tickets order
    plan plans mind password name address number date time hotel room trip""".split()
)
_SWITCH_TAIL = re.compile(
    r"\s+(?:last|this|next|yesterday|today|recently|ago|in|on|since|for|a\s+few|earlier|after"
    r"|before|because|and|but|from|after|instead|now|already|a\s+while)\b.*$",
    re.I,
)


def _build_switch(match: re.Match[str], said: _Said) -> list[_Fact]:
    groups = match.groupdict()
    topic_raw = re.sub(r"\s+", " ", (groups.get("topic") or "").strip().lower())
    value = _SWITCH_TAIL.sub("", (groups.get("value") or "").strip(" .,'\"")).strip()
    value = re.sub(r"^(?:a|an|the|my)\s+", "", value, flags=re.I)
    if not value or len(value.split()) > 4 or value.lower() in _NOT_ITEM_START:
        return []
    if topic_raw in _NOT_SWITCH_TOPICS or english_stamps(value, said.now.date()):
        return []
    if value in ko.PLACES or _TIME_WORDS.search(value):
        return []
    diet = next((d for w, d in en.DIETS.items() if _has_word(value, w)), None)
    if diet is None:
        diet = next((d for w, d in ko.DIETS.items() if w in value), None)
    if diet is not None or topic_raw in ("diet", "diets"):
        if diet is None:
            return []
        return [
            _Fact(
                "diet",
                "preference.diet",
                f"The user switched to a {diet} diet.",
                (_attr("diet", diet),),
                valid_from=_moved_since(said),
            )
        ]
    lowered = value.lower()
    topic = (
        en.SWITCH_TOPICS.get(topic_raw)
        or ko.SWITCH_TOPICS.get(topic_raw)
        or ko.SWITCH_TOPICS.get(topic_raw.replace(" ", ""))
        or en.BRAND_TOPICS.get(lowered)
        or ko.BRAND_TOPICS.get(lowered)
        or ("bank" if re.search(r"은행|뱅크", value) else None)
    )
    if topic is None and topic_raw and not _HANGUL.search(topic_raw):
        return []  # "I changed my shampoo to …" is fine, but an unknown topic word is not one
    key = f"preference.{topic}" if topic else "preference.switched_to"
    what = f" {topic.replace('_', ' ')}" if topic else ""
    return [
        _Fact(
            "switch",
            key,
            f"The user switched{what} to {value}.",
            (_attr("value", value),),
            valid_from=_moved_since(said),
        )
    ]


def _has_word(text: str, word: str) -> bool:
    return re.search(rf"\b{re.escape(word)}\b", text, re.I) is not None


def _build_instruction(match: re.Match[str], said: _Said) -> list[_Fact]:
    instruction = re.sub(r"\s+", " ", match["instruction"]).strip(" .,!")
    if len(instruction) < 4:
        return []
    return [
        _Fact(
            "instruction",
            "habit.instruction",
            f"The user asked the assistant: {instruction}.",
            (_attr("instruction", instruction),),
        )
    ]


_BUILDERS: dict[str, _Builder] = {
    "relation": _build_relation,
    "seat": _build_seat,
    "diet": _build_diet,
    "like": _preference("like", "likes"),
    "dislike": _preference("dislike", "dislikes"),
    "identifier": _build_identifier,
    "email": _build_email,
    "phone": _build_phone,
    "address": _build_address,
    "name": _build_name,
    "birthday": _build_birthday,
    "document": _build_document,
    "allergy": _build_allergy,
    "medication": _build_medication,
    "condition": _build_condition,
    "appointment": _build_appointment,
    "trip": _build_trip,
    "trip_request": _build_trip,
    "home": _location("home", "location.home", "lives in", "place"),
    "moved": _location("home", "location.home", "moved to", "place"),
    "workplace": _location("workplace", "location.work", "works in", "place"),
    "employer": _build_employer,
    "role": _build_role,
    "switch": _build_switch,
    "instruction": _build_instruction,
}
