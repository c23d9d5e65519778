"""Corrections: "Actually it's Tuesday, not Monday", "땅콩이 아니라 복숭아 알레르기래요".

A correction names no topic — only the wrong value and the right one — so no extractor can
read a fact from it alone. What it corrects is the fact the user said earlier that holds the
wrong value; the correction is that earlier statement said again with the right value. This
module finds corrections in a message, picks the statement they correct, and rewrites it;
the write path extracts the rewritten statement as a new version that supersedes the old
fact (``madeleine.write.facts``).

Only messages with a correction cue ("actually", "correction", "I meant", "정정", "잘못")
count: "I'm a nurse, not a doctor" is not a correction of "my sister is a doctor".
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, replace
from datetime import datetime

from madeleine.facts.cards import Attribute, CardDraft, Category, MemoryType, Stability
from madeleine.facts.extract import ExtractInput

_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_CUE = re.compile(
    r"\b(?:actually|correction|correct\s+that|oops|sorry|i\s+meant|my\s+(?:mistake|bad)"
    r"|wrong|misread|mixed\s+up|turns\s+out|came\s+back|after\s+all|typo)\b"
    r"|정정|잘못|착각|헷갈|다시\s*보니|알고\s*보니|확인해\s*보니|검사해\s*보니",
    re.IGNORECASE,
)
_WORD = r"[A-Za-z0-9](?:[\w'-]|[.:](?=\w))*"
_VALUE = rf"{_WORD}(?:\s+{_WORD}){{0,3}}"
# "it's Tuesday, not Monday", "tree nuts not peanuts": the new value ends the text before
_EN_NOT = re.compile(rf",?\s+not\s+(?P<old>{_VALUE})(?=\s*(?:[.!;,)]|$))", re.I)
# "not Monday but Tuesday"
_EN_NOT_BUT = re.compile(rf"\bnot\s+(?P<old>{_VALUE}),?\s+but\s+(?P<new>{_VALUE})", re.I)
# where the words of a value "X, not Y" start: after "it's", "is", "I meant", a comma
_EN_VALUE_START = re.compile(
    r"(?:^|[.!?;:,]|\b(?:is|it's|its|was|are|were|be|meant|actually|correction|and|but|so"
    r"|says?|said)\b)\s*(?=[^.!?;:,]*$)",
    re.I,
)
_KO_WORD = r"[\uac00-\ud7a3A-Za-z0-9]+"
# "땅콩이 아니라 복숭아", "목요일 아니고 금요일이에요"
_KO_NOT_BUT = re.compile(rf"(?P<old>{_KO_WORD})\s*아니(?:라|고)\s+(?P<new>{_KO_WORD})")
# "금요일이에요, 목요일 아니고요"
_KO_BUT_NOT = re.compile(
    rf"(?P<new>{_KO_WORD})\s*,\s*(?P<old>{_KO_WORD})\s*아니(?:고요|고|에요|야)"
)
_LEADING = re.compile(
    r"^(?:(?:actually|correction|oops|sorry|so|well|no|and|but|it's|it\s+is|its|it|that's"
    r"|that\s+is|is|was|are|were|the|a|an|my|on|at|in)\b[\s,:]*)+",
    re.I,
)
_TRAILING = re.compile(r"\s+(?:after\s+all|anymore|any\s+more|either|though|then)$", re.I)
# particles and endings that follow a Korean value: "땅콩이", "금요일이에요"
_KO_ENDING = re.compile(
    r"(?:이에요|예요|이래요|래요|이야|이고|입니다|이|가|은|는|을|를|으로|로|요)$"
)
_NOT_VALUES = frozenset(
    """i me it this that there here so too really sure true right yet now then just only
    quite that's it's yes no one thing what""".split()
)


@dataclass(frozen=True, slots=True)
class Correction:
    """The wrong value, the right one, and the message that said so."""

    old: str
    new: str
    said: ExtractInput


def corrections_in(message: ExtractInput) -> list[Correction]:
    """The corrections a user message makes (none without a correction cue)."""
    if message.role != "user" or not _CUE.search(message.text):
        return []
    found: list[Correction] = []
    text = message.text.replace("’", "'")
    pairs = [(m["old"], _before(text[: m.start()])) for m in _EN_NOT.finditer(text)]
    pairs += [(m["old"], m["new"]) for m in _EN_NOT_BUT.finditer(text)]
    for raw_old, raw_new in pairs:
        old, new = _english(raw_old), _english(raw_new)
        if old and new and old.casefold() != new.casefold():
            found.append(Correction(old, new, message))
    for pattern in (_KO_NOT_BUT, _KO_BUT_NOT):
        for match in pattern.finditer(text):
            old, new = _korean(match["old"]), _korean(match["new"])
            if old and new and old != new:
                found.append(Correction(old, new, message))
    return found


def _before(text: str) -> str:
    """The value that ends ``text`` ("Actually it's Tuesday" → "Tuesday"): the words after
    the last copula, "I meant" or punctuation, at most four."""
    starts = [m.end() for m in _EN_VALUE_START.finditer(text)]
    words = text[max(starts, default=0) :].split()
    return " ".join(words[-4:])


def _english(value: str) -> str | None:
    value = _TRAILING.sub("", _LEADING.sub("", value.strip(" .,'\""))).strip(" .,'\"")
    if not value or value.casefold() in _NOT_VALUES or len(value) < 2:
        return None
    return value


def _korean(value: str) -> str | None:
    if not _HANGUL.search(value):
        return _english(value)
    stripped = _KO_ENDING.sub("", value)
    return stripped if len(stripped) >= 2 else value


def mentions(text: str | None, value: str) -> bool:
    """Whether ``text`` holds ``value`` as a word (Korean: as a word start, since particles
    follow it: "땅콩이")."""
    if not text:
        return False
    if _HANGUL.search(value):
        return re.search(rf"(?<![\uac00-\ud7a3]){re.escape(value)}", text) is not None
    return re.search(rf"(?<!\w){re.escape(value)}(?!\w)", text, re.IGNORECASE) is not None


def card_mentions(card: CardDraft, value: str) -> bool:
    return (
        mentions(card.backstory, value)
        or mentions(card.statement, value)
        or any(mentions(a.value, value) for a in card.attributes)
    )


def _swap(text: str, correction: Correction) -> str:
    if _HANGUL.search(correction.old):
        pattern = rf"(?<![\uac00-\ud7a3]){re.escape(correction.old)}"
        return re.sub(pattern, correction.new, text)
    pattern = rf"(?<!\w){re.escape(correction.old)}(?!\w)"
    return re.sub(pattern, correction.new, text, flags=re.IGNORECASE)


def restated(card: CardDraft, correction: Correction) -> ExtractInput:
    """The statement the correction fixes, said again with the right value, as if in the
    correcting message (its id, session and time)."""
    text = card.backstory or card.statement
    return replace(correction.said, text=_swap(text, correction), role="user")


def rewritten(card: CardDraft, correction: Correction) -> CardDraft:
    """The card with the right value, when re-reading the statement gives no fact of its
    slot: statement and values swapped, the correcting message as its source."""
    attributes = [
        Attribute(name=a.name, type=a.type, value=_swap(a.value, correction), unit=a.unit)
        for a in card.attributes
    ]
    return card.model_copy(
        update={
            "statement": _swap(card.statement, correction),
            "attributes": attributes,
            "backstory": correction.said.text[:1000],
            "sources": [correction.said.event_id],
            "valid_from": correction.said.occurred_at,
            "valid_to": None,
        }
    )


def as_said_in(draft: CardDraft, correction: Correction) -> CardDraft:
    """A draft read from the restated statement, credited to the correcting message."""
    return draft.model_copy(
        update={
            "backstory": correction.said.text[:1000],
            "sources": [correction.said.event_id],
            "valid_from": draft.valid_from or correction.said.occurred_at,
        }
    )


def said_versions(
    sentence: str, said_at: datetime, event_id: int, correction: Correction
) -> tuple[CardDraft, CardDraft]:
    """When no fact holds the wrong value ("the meeting with my landlord is on Thursday"),
    the sentence that said it and its corrected form become two versions of one statement
    card, the second superseding the first: what was said, and what holds."""
    key = "said." + hashlib.sha1(sentence.casefold().encode()).hexdigest()[:12]
    fixed = _swap(sentence, correction)
    korean = _HANGUL.search(sentence) is not None
    said, corrected = (
        ("사용자가 말했다", "사용자가 정정했다")
        if korean
        else (
            "The user said",
            "The user corrected it",
        )
    )
    wrong = f"({correction.old[:60]} 아님)" if korean else f"(not {correction.old[:60]})"
    old = _statement_card(key, f"{said}: {sentence[:900]}", sentence, correction.old, said_at)
    new = _statement_card(
        key,
        f"{corrected}: {fixed[:860]} {wrong}",
        correction.said.text,
        correction.new,
        correction.said.occurred_at,
    )
    old.sources.append(event_id)
    new.sources.append(correction.said.event_id)
    return old, new


def _statement_card(
    key: str, statement: str, backstory: str, value: str, at: datetime
) -> CardDraft:
    return CardDraft(
        statement=statement,
        category=Category.OTHER,
        subject="user",
        relationship=None,
        multi_valued=False,
        valid_to=None,
        backstory=backstory[:1000],
        attributes=[Attribute(name="value", type="text", value=value[:200], unit=None)],
        key=key,
        memory_type=MemoryType.EPISODIC,
        stability=Stability.VOLATILE,
        importance=0.5,
        confidence=0.8,
        valid_from=at,
    )
