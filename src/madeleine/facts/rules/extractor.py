"""The extractor proper: sentences in, one card draft per fact out. Reads each sentence with
the pattern tables, skips questions, hypotheticals and negations, hands every match to the
builder of its kind and merges what the builders return."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from madeleine.facts.cards import CardDraft, Category, MemoryType, Stability
from madeleine.facts.extract import ExtractInput
from madeleine.facts.rules import (
    changes,
    disclosure,
    en,
    health,
    identity,
    ko,
    learning,
    people,
    phrases,
    plans,
    preferences,
    project,
)
from madeleine.facts.rules.common import (
    BACKSTORY_CHARS,
    HEDGED,
    Builder,
    Fact,
    Said,
    attribute_value,
    clip,
)

_LATIN = re.compile(r"[A-Za-z]")


# ------------------------------------------------------------------------ filing


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
    "habit": _Slot(Category.PREFERENCE, _SEMANTIC, _VOLATILE, 0.5),
    "loyalty": _Slot(Category.ACCOUNT, _SEMANTIC, _STABLE, 0.85),
    "care_id": _Slot(Category.HEALTH, _SEMANTIC, _STABLE, 0.8),
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
    "home_area": _Slot(Category.LOCATION, _SEMANTIC, _VOLATILE, 0.6),
    "appointment": _Slot(Category.PLAN, _EPISODIC, _VOLATILE, 0.7),
    "move": _Slot(Category.PLAN, _EPISODIC, _VOLATILE, 0.75),
    "avoid": _Slot(Category.PREFERENCE, _SEMANTIC, _VOLATILE, 0.6),
    "account_closed": _Slot(Category.ACCOUNT, _SEMANTIC, _VOLATILE, 0.7),
    "project": _Slot(Category.PROJECT, _SEMANTIC, _VOLATILE, 0.7),
    "trip": _Slot(Category.PLAN, _EPISODIC, _VOLATILE, 0.75),
    "learning": _Slot(Category.EDUCATION, _SEMANTIC, _VOLATILE, 0.5),
    "instruction": _Slot(Category.HABIT, _PROCEDURAL, _STABLE, 0.7, multi_valued=True),
    # an open card (disclosure.py): what the user said of themselves that no slot rule read
    disclosure.OPEN_SLOT: _Slot(
        Category.OTHER, _SEMANTIC, _VOLATILE, 0.3, multi_valued=True, current=False
    ),
}


# ------------------------------------------------------------------------- engine


class RuleExtractor:
    """The offline extractor: deterministic, no model, English and Korean."""

    name = "rules"

    def __init__(self, open_cards: bool = True) -> None:
        self.open_cards = open_cards  # an open card for what no slot rule read

    def extract(self, window: Sequence[ExtractInput]) -> list[CardDraft]:
        said = [m for m in window if m.role == "user" and m.text.strip()]
        sentences = [(m, s, user) for m in said for s, user in _spoken(m)]
        people, home = _context((m, s) for m, s, user in sentences if user)
        drafts: list[CardDraft] = []
        open_cards: list[tuple[Fact, Said]] = []  # of the message being read
        for index, (message, sentence, user) in enumerate(sentences):
            context = Said(sentence, message, people, home)
            facts = _read(context) if user else []
            if self.open_cards and user and not facts and not message.project:
                open_cards.extend((fact, context) for fact in disclosure.open_facts(context))
            if message.project:
                facts.extend(project.project_facts(context, message.project))
            drafts.extend(_draft(fact, context) for fact in facts)
            last = index + 1 == len(sentences) or sentences[index + 1][0] is not message
            if last and open_cards:
                first = open_cards[0][1]
                drafts.extend(
                    _draft(f, first) for f in disclosure.joined([f for f, _ in open_cards])
                )
                open_cards = []
        return _merge(drafts)


_TURN = re.compile(r"^\s*(?P<speaker>user|assistant|human|ai)\s*:\s*", re.I)


def _spoken(message: ExtractInput) -> list[tuple[str, bool]]:
    """The sentences of a message, each with whether the user said it. A message of a code
    project may be a transcript ("user: …" / "assistant: …" lines, as imported sessions are):
    its assistant lines feed project facts only, never facts about the user."""
    lines = message.text.splitlines()
    if not message.project or not any(_TURN.match(line) for line in lines):
        return [(s, True) for s in split_sentences(message.text)]
    spoken: list[tuple[str, bool]] = []
    user = True
    for line in lines:
        turn = _TURN.match(line)
        if turn is not None:
            user = turn["speaker"].lower() in ("user", "human")
            line = line[turn.end() :]
        spoken.extend((s, user) for s in split_sentences(line))
    return spoken


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


_GENERIC = frozenset({"like", "dislike", "switch", "avoid", "habit"})
_CONTEXT_KINDS = frozenset({"relation", "home", "moved"})


def _rows(said: Said) -> list[tuple[str, re.Pattern[str]]]:
    rows: list[tuple[str, re.Pattern[str]]] = []
    if _LATIN.search(said.text):
        rows.extend(en.PATTERNS)
    if said.korean:
        rows.extend(ko.PATTERNS)
    return [r for r in rows if r[0] not in _GENERIC] + [r for r in rows if r[0] in _GENERIC]


def _read(said: Said, kinds: frozenset[str] | None = None) -> list[Fact]:
    text = said.text
    question = _asks(said)
    requested = bool(en.REQUEST.search(text) or (said.korean and ko.REQUEST.search(text)))
    taken: list[tuple[int, int]] = []
    facts: list[Fact] = []
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


def _asks(said: Said) -> bool:
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


def _blocked(match: re.Match[str], said: Said, kind: str) -> bool:
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
        for fact in _read(Said(sentence, message), _CONTEXT_KINDS):
            if fact.slot == "relationship" and fact.relationship:
                people[fact.subject] = fact.relationship
            elif fact.slot == "home" and fact.subject == "user":
                home = attribute_value(fact.attributes, "country") or home
    return people, home


def _draft(fact: Fact, said: Said) -> CardDraft:
    slot = _SLOTS[fact.slot]
    message = said.message.text.strip()
    backstory = message if len(message) <= BACKSTORY_CHARS else clip(said.text)
    valid_from = fact.valid_from or (said.now if slot.current else None)
    statement = fact.statement
    if said.korean:  # stated in the language the user spoke
        statement = phrases.korean_statement(fact) or statement
    memory_type = slot.memory_type
    if fact.slot == disclosure.OPEN_SLOT and any(a.name == "when" for a in fact.attributes):
        memory_type = _EPISODIC  # something that happened (or will) at a time
    return CardDraft(
        statement=clip(statement, 1000),
        category=slot.category,
        subject=fact.subject,
        relationship=fact.relationship,
        backstory=backstory,
        attributes=list(fact.attributes),
        key=fact.key,
        multi_valued=slot.multi_valued,
        memory_type=memory_type,
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
            if kept.subject != draft.subject or kept.key != draft.key:
                continue
            if _fits(kept, draft):
                merged[index] = _union(kept, draft)
                break
            if _refines(kept, draft):  # "개발자" and "백엔드 개발자" of one message: one role
                merged[index] = _union(draft, kept)
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


def _refines(kept: CardDraft, draft: CardDraft) -> bool:
    """Whether ``draft`` says the same single value of one message more fully: every shared
    attribute of the two contains the other's value, and the draft's is longer somewhere."""
    if kept.multi_valued or kept.sources != draft.sources:
        return False
    old = {a.name: a.value.casefold() for a in kept.attributes}
    new = {a.name: a.value.casefold() for a in draft.attributes}
    shared = set(old) & set(new)
    if not shared or not all(old[n] in new[n] for n in shared):
        return False
    return any(len(new[n]) > len(old[n]) for n in shared) or len(new) > len(old)


def _union(kept: CardDraft, draft: CardDraft) -> CardDraft:
    names = {a.name for a in kept.attributes}
    extra = [a for a in draft.attributes if a.name not in names]
    statement = kept.statement
    if extra and names <= {a.name for a in draft.attributes}:
        statement = draft.statement  # "works as a nurse" → "works as a nurse at Acme"
    elif extra and draft.statement not in statement:
        statement = clip(f"{statement} {draft.statement}", 1000)
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


# every pattern kind -> the builder that files its matches
_BUILDERS: dict[str, Builder] = {
    **people.BUILDERS,
    **preferences.BUILDERS,
    **identity.BUILDERS,
    **health.BUILDERS,
    **plans.BUILDERS,
    **changes.BUILDERS,
    **learning.BUILDERS,
}
