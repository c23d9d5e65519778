"""Which lines of a context block state something a later line changed.

The truth stage demotes a turn whose fact was superseded and says so in
``explain["truth"]`` (``by``, ``since``, ``current``); the context marks that turn itself.
When no fact knows the change, the truth stage still lifts a later turn that announces one
above an earlier leading turn (``explain["truth"]["newer_than"]``, or ``replaces`` when a fact
does know it). This module carries those changes to the other lines of the block:

- the earlier turn the later one was lifted over is outdated;
- so is an earlier turn (of an earlier day) that names the same particular thing as a later
  turn announcing a change outright, not only "now" ("my Honda Civic needs brakes" … "sold
  the old Civic, got a Tesla"; "allergic to peanuts" … "it's tree nuts, not peanuts");
- an assistant turn echoing an outdated turn right before it ("Austin is a fun place!"),
  whether this module or the truth stage marked that turn;
- a fact said in the same session as an outdated turn and about the same thing;
- a fact no rule superseded that names the same particular thing as a turn said a day or
  more after it, in another session, announcing a change ("The user banks with Chase" …
  "switched banks, everything at Chase is closed now"): no card is presented as current
  when a later turn of the block on its topic says otherwise.

Each gets "(outdated: said 2024-01-12; later: 2024-05-03)" — the date it was said and the
date of what changed it — so an agent reads the change instead of two contradicting lines.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import pairwise

from madeleine.records import Hit

DAY = 86_400.0
# words announcing a change: a later turn without them does not overrule an earlier one
CHANGE = re.compile(
    r"\b(?:now|anymore|any\s+more|no\s+longer|instead|actually|correction|changed?|switched"
    r"|moved|updated?|rescheduled|postponed|pushed|cancell?ed|called\s+off|quit|stopped"
    r"|dropped|left|joined|replaced|sold|became|turns\s+out|not\s+\w+\s+after\s+all"
    r"|lately|these\s+days|nowadays|from\s+now\s+on|gave\s+up|i'?m\s+over|ported|hired)\b"
    r"|이제|대신|바꿨|바뀌|옮겼|이사|이직|취소|변경|정정|아니라|그만|끊었|요즘|해지"
    r"|갈아탔|넘어왔|시작했",
    re.IGNORECASE,
)


_WEAK_CHANGE = frozenset({"now", "이제", "요즘", "대신"})  # "대신": also "on behalf of"
LEADING = 3  # a later turn among this many leading hits may vouch for "newer than" alone


@dataclass(frozen=True, slots=True)
class Line:
    """A turn or fact of the block, with its particular words (no query or request words)."""

    hit: Hit
    words: frozenset[str]
    direct: bool  # a hit of the search, not a neighbouring turn
    rank: int = 1_000  # its place among the search's hits


def is_assistant(hit: Hit) -> bool:
    return (hit.speaker or "").lower() == "assistant" or hit.text.startswith("assistant:")


def _lifted_over(hit: Hit) -> str:
    truth = hit.explain.get("truth")
    if not isinstance(truth, dict):
        return ""
    return str(truth.get("newer_than") or truth.get("replaces") or "")


def _known_change(hit: Hit) -> str:
    """The turn a fact-backed change replaced (the truth stage's ``replaces``)."""
    truth = hit.explain.get("truth")
    return str(truth.get("replaces", "")) if isinstance(truth, dict) else ""


def _announces(line: Line) -> bool:
    """A user turn that says something changed (the truth stage lifting it over an earlier
    one is not enough: it lifts any later turn with "now" in it)."""
    if is_assistant(line.hit):
        return False
    return bool(_known_change(line.hit)) or (
        (line.direct or bool(_lifted_over(line.hit))) and bool(CHANGE.search(line.hit.text))
    )


def _vouched(anchor: Line) -> bool:
    """Whether the truth stage's "newer than" can be taken alone: the later turn leads the
    search and says outright that something changed (not only "now": "I'm baking now")."""
    return anchor.rank < LEADING and _strong(anchor)


def note(said: Hit, later: Hit) -> str:
    return outdated_note(later.timestamp, said.timestamp)


def outdated_note(later: datetime, said: datetime) -> str:
    return f" (outdated: said {said:%Y-%m-%d}; later: {later:%Y-%m-%d})"


def outdated(
    turns: Sequence[Line],
    facts: Sequence[Line],
    order: Callable[[Hit], tuple[float, int]],
    marked: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Id → note for each turn or fact of the block that a later turn of it changed;
    ``marked``: the turns the truth stage already marked, with their notes."""
    marked = marked or {}
    notes: dict[str, str] = {}
    anchors = [t for t in turns if _announces(t)]
    for anchor in anchors:
        known = _known_change(anchor.hit)
        when = anchor.hit.timestamp.timestamp()
        for line in turns:
            hit = line.hit
            if hit.id in notes or hit.id in marked or is_assistant(hit):
                continue
            if hit.session_id == anchor.hit.session_id:
                continue
            if hit.timestamp.timestamp() > when - DAY or not anchor.words - line.words:
                continue  # not earlier, or the same statement said again
            lifted = hit.id == _lifted_over(anchor.hit) and _vouched(anchor)
            if hit.id == known or lifted or (line.words & anchor.words and _strong(anchor)):
                notes[hit.id] = note(hit, anchor.hit)
    for fact in facts:
        later = _later_change(fact, anchors)
        if later is not None:
            notes[fact.hit.id] = note(fact.hit, later.hit)
    told = {**marked, **notes}
    changed = {t.hit.id: t for t in turns if t.hit.id in told}
    if not changed:
        return notes
    by_session = sorted(turns, key=lambda t: (t.hit.session_id, order(t.hit)))
    for previous, line in pairwise(by_session):
        if (
            previous.hit.id in changed
            and line.hit.id not in notes
            and is_assistant(line.hit)
            and line.hit.session_id == previous.hit.session_id
            and line.words & previous.words
        ):
            notes[line.hit.id] = told[previous.hit.id]
    for fact in facts:
        if fact.hit.id in notes:
            continue
        for turn in changed.values():
            if fact.hit.session_id == turn.hit.session_id and fact.words & turn.words:
                notes[fact.hit.id] = told[turn.hit.id]
                break
    return notes


def _later_change(fact: Line, anchors: Sequence[Line]) -> Line | None:
    """The first turn announcing a change, said a day or more after the fact held from and
    in another session, that names a particular thing the fact names."""
    since = fact.hit.timestamp.timestamp()
    for anchor in anchors:
        if anchor.hit.session_id == fact.hit.session_id:
            continue  # the fact's own telling, or what was said with it
        if anchor.hit.timestamp.timestamp() < since + DAY:
            continue
        if fact.words & anchor.words and _strong(anchor):
            return anchor
    return None


def _strong(line: Line) -> bool:
    return strong_change(line.hit.text)


def strong_change(text: str) -> bool:
    """Says outright that something changed: not only "now" ("I'm still at Ally, now with
    savings too" restates the card)."""
    return any(m.group(0).lower() not in _WEAK_CHANGE for m in CHANGE.finditer(text))


def particular(
    common: Iterable[frozenset[str]], share: float
) -> Callable[[frozenset[str]], frozenset[str]]:
    """A filter keeping the words found in at most ``share`` of ``common`` (at least 3):
    those that name a particular thing among these passages."""
    counts: dict[str, int] = {}
    total = 0
    for words in common:
        total += 1
        for word in words:
            counts[word] = counts.get(word, 0) + 1
    most = max(3, int(total * share))

    def keep(words: frozenset[str]) -> frozenset[str]:
        return frozenset(w for w in words if counts.get(w, 0) <= most)

    return keep
