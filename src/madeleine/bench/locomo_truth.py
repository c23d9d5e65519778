"""``madeleine bench truth --locomo``: current truth on changes nobody here wrote (issue 31).

The cases (``suites/locomo_truth.json``) were drawn from LoCoMo's development conversations by
a session that read them, not by the people who write the rules: a plan that happened, a
job lost and another found, a test failed then passed, a show that slipped, a pet added.
Each names turns by their ``dia_id`` only — the stale ones, the current ones (and for a
question asked ``as_of`` a date, the ones that held then) — so no LoCoMo text is in the
repository: the conversation is read at run time from the file given.

Each conversation is ingested once per speaker a case is about, that speaker as the user
(as ``bench extraction`` does), and each case's questions are asked of that store:

- **current-first** ("now" questions, asked the day after the last session): among
  ``search(query, limit=10)``, the first hit drawn from a stale or a current turn is drawn
  from a current one (a hit drawn from both counts as current); none is a miss.
- **context has current**: a hit of ``context(query, budget_tokens=500)`` was drawn from a
  current turn.
- **stale marked** (cases where the new statement makes the old one untrue): the context
  has current, and every line of it drawn from a stale turn alone reads "(outdated".
- **as-of first**: current-first for ``search(query, as_of=date, now=date)`` against the
  turns that held at that date.

Split by conversation as ``bench context --locomo``: dev conv-26, conv-30, conv-43; test the
others (conv-41, conv-42).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import Any

from madeleine.api import Memory
from madeleine.bench.extraction import Dialogue, load_dialogues, speaker_messages
from madeleine.bench.locomo_context import SPLITS, split_of
from madeleine.bench.scenarios import mean
from madeleine.bench.truth import CONTEXT_BUDGET, OUTDATED_MARK, SEARCH_LIMIT
from madeleine.records import Hit
from madeleine.text.timeparse import parse_timestamp

CASES_FILE = "locomo_truth.json"


@dataclass(frozen=True, slots=True)
class TruthCase:
    conversation: str
    speaker: str
    kind: str
    stale: frozenset[str]
    current: frozenset[str]
    replaces: bool
    questions: tuple[dict[str, Any], ...]


def load_cases(name: str = CASES_FILE) -> list[TruthCase]:
    raw = json.loads((resources.files("madeleine.bench") / "suites" / name).read_text("utf-8"))
    return [
        TruthCase(
            str(c["conversation"]),
            str(c["speaker"]),
            str(c["kind"]),
            frozenset(c["stale"]),
            frozenset(c["current"]),
            bool(c["replaces"]),
            tuple(c["questions"]),
        )
        for c in raw["cases"]
    ]


@dataclass(frozen=True, slots=True)
class Outcome:
    case: TruthCase
    query: str
    as_of: str | None
    first: bool  # the first hit drawn from a stale or current turn is current
    context_has: bool | None = None
    marked: bool | None = None  # stale lines marked (cases that replace), else None


@dataclass(slots=True)
class LocomoTruthResult:
    outcomes: list[Outcome] = field(default_factory=list)

    def table(self) -> str:
        lines = [
            "| split | cases | now q | current-first | context has current | stale marked | "
            "as-of q | as-of first |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for split in sorted({split_of(o.case.conversation) for o in self.outcomes}):
            mine = [o for o in self.outcomes if split_of(o.case.conversation) == split]
            now = [o for o in mine if o.as_of is None]
            then = [o for o in mine if o.as_of is not None]
            marked = [o.marked for o in now if o.marked is not None]
            cases = len({(o.case.conversation, o.case.speaker, o.case.current) for o in mine})
            lines.append(
                f"| {split} | {cases} | {len(now)} | {_rate([o.first for o in now])} | "
                f"{_rate([bool(o.context_has) for o in now])} | {_rate(marked)} | "
                f"{len(then)} | {_rate([o.first for o in then])} |"
            )
        return "\n".join(lines)

    def failures(self) -> str:
        missed = [
            f"- {o.case.conversation} {o.case.speaker} ({o.case.kind}): {o.query!r}"
            + (f" as of {o.as_of}" if o.as_of else "")
            + f": first {'ok' if o.first else 'MISS'}, context "
            + ("-" if o.context_has is None else "ok" if o.context_has else "MISS")
            + (", stale unmarked" if o.marked is False else "")
            for o in self.outcomes
            if not o.first or o.context_has is False or o.marked is False
        ]
        return "\n".join(missed) if missed else "(no misses)"


def _rate(values: Sequence[bool]) -> str:
    return f"{mean([float(v) for v in values]):.3f}" if values else "-"


def run_locomo_truth(
    locomo: Path,
    observations: Path,
    *,
    split: str = "dev",
    cases: Sequence[TruthCase] | None = None,
    memory_options: dict[str, Any] | None = None,
    progress: Callable[[str, int], Any] | None = None,
) -> LocomoTruthResult:
    """A fresh store per (conversation, speaker) of the split's cases; every question."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    chosen = [
        c
        for c in (cases if cases is not None else load_cases())
        if split == "all" or split_of(c.conversation) == split
    ]
    dialogues = {d.sample_id: d for d in load_dialogues(locomo, observations)}
    missing = sorted({c.conversation for c in chosen} - set(dialogues))
    if missing:
        raise ValueError(f"{locomo} lacks the conversation(s) {', '.join(missing)}")
    result = LocomoTruthResult()
    groups: dict[tuple[str, str], list[TruthCase]] = {}
    for case in chosen:
        groups.setdefault((case.conversation, case.speaker), []).append(case)
    for (conversation, speaker), mine in groups.items():
        dialogue = dialogues[conversation]
        with tempfile.TemporaryDirectory(prefix="madeleine-locomo-truth-") as scratch:
            options = {"background": False, **(memory_options or {})}
            with Memory(Path(scratch) / "store", **options) as memory:
                user = _ingest(memory, dialogue, speaker, progress)
                now = _last_moment(dialogue) + timedelta(days=1)
                for case in mine:
                    for question in case.questions:
                        result.outcomes.append(_ask(memory, user, case, question, now))
                        if progress is not None:
                            progress("questions", 1)
    return result


def _ingest(
    memory: Memory, dialogue: Dialogue, speaker: str, progress: Callable[[str, int], Any] | None
) -> str:
    if speaker not in dialogue.speakers:
        raise ValueError(f"{dialogue.sample_id} has no speaker {speaker!r}")
    user = f"{dialogue.sample_id}-{speaker}"
    for session in dialogue.sessions:
        memory.add(speaker_messages(session, speaker), user_id=user, session_id=session.key)
    memory.index_pending(None if progress is None else (lambda n: progress("index", n)))
    return user


def _last_moment(dialogue: Dialogue) -> datetime:
    return max(s.start for s in dialogue.sessions)


def _ask(
    memory: Memory, user: str, case: TruthCase, question: dict[str, Any], now: datetime
) -> Outcome:
    query = str(question["query"])
    as_of = question.get("as_of")
    if as_of:
        moment = parse_timestamp(str(as_of), "as_of")
        held = frozenset(question.get("current_then") or ())
        hits = memory.search(query, user_id=user, limit=SEARCH_LIMIT, now=moment, as_of=moment)
        return Outcome(case, query, str(as_of), _first_is(hits, held, case.stale | case.current))
    hits = memory.search(query, user_id=user, limit=SEARCH_LIMIT, now=now)
    first = _first_is(hits, case.current, case.stale)
    context = memory.context(query, user_id=user, budget_tokens=CONTEXT_BUDGET, now=now)
    has = any(_drawn(h) & case.current for h in context.items)
    marked = None
    if case.replaces:
        marked = has and _stale_marked(context.text, context.items, case)
    return Outcome(case, query, None, first, has, marked)


def _drawn(hit: Hit) -> set[str]:
    return {str(s) for s in hit.source_ids}


def _first_is(hits: Sequence[Hit], wanted: frozenset[str], others: frozenset[str]) -> bool:
    for hit in hits:
        drawn = _drawn(hit)
        if drawn & wanted:
            return True
        if drawn & others:
            return False
    return False


def _stale_marked(text: str, items: Sequence[Hit], case: TruthCase) -> bool:
    """Every line of the block showing a hit drawn from a stale turn alone is marked."""
    lines = text.splitlines()
    for hit in items:
        drawn = _drawn(hit)
        if not drawn & case.stale or drawn & case.current:
            continue
        probe = _probe(hit)
        shown = [line for line in lines if probe and probe in line]
        if any(OUTDATED_MARK not in line for line in shown):
            return False
    return True


def _probe(hit: Hit) -> str:
    """A piece of the hit's text its context line holds (turns may be cut to sentences)."""
    text = hit.text.split(": ", 1)[1] if hit.kind == "turn" and ": " in hit.text else hit.text
    return text[:40]
