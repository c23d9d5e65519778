"""``madeleine bench truth``: does the current value of a changing fact come first?

Each scenario of the ``truth`` suite is a few dated sessions in which a fact changes — a move,
a new job, a switched preference, a correction ("actually it's Tuesday, not Monday"), a
cancelled plan — among small talk and other topics. Its questions name the value that holds
at the question's moment (``answer``) and the value(s) that do not (``other``)::

    {"query": "Where does Alex live?", "answer": "Denver", "other": "Austin"}
    {"query": "Where did I live last spring?", "as_of": "2024-04-01",
     "answer": "Austin", "other": "Denver"}

A value is a string or a list of alternatives; a passage *mentions* it when it contains one
of them, case-insensitively.

- **now** questions (no ``as_of``) are asked at ``now`` = one day after the scenario's last
  session (or the question's ``now``). *Current-first*: among the search hits (turns and
  facts, ``limit`` 10), the first one that mentions the answer or another value mentions the
  answer (a turn saying both, "Tuesday, not Monday", counts as the answer's); no such hit is
  a miss. *Context has current*: ``context(query, budget_tokens=500).text`` contains the
  answer. *Context current, stale marked*: it contains the answer, and every line of it that
  mentions another value without the answer is marked "(outdated" (a line: a fact, a turn, a
  profile entry).
- **as-of** questions are asked with ``as_of=<date>`` (and ``now`` = that date):
  *as-of first* is current-first against the value that held then.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from madeleine.api import Memory
from madeleine.bench.scenarios import (
    Scenario,
    Split,
    alternatives,
    build_store,
    load_suite,
    mean,
    memory_options,
    mentions,
)
from madeleine.records import Hit

SEARCH_LIMIT = 10
CONTEXT_BUDGET = 500
OUTDATED_MARK = "(outdated"


@dataclass(frozen=True, slots=True)
class TruthQuestion:
    query: str
    answer: tuple[str, ...]
    other: tuple[str, ...]
    as_of: datetime | None = None
    now: datetime | None = None

    @classmethod
    def parse(cls, raw: dict[str, Any]) -> TruthQuestion:
        def moment(key: str) -> datetime | None:
            return datetime.fromisoformat(raw[key]) if raw.get(key) else None

        query = str(raw.get("query", "")).strip()
        if not query:
            raise ValueError(f"a truth question needs a query: {raw!r}")
        return cls(
            query,
            alternatives(raw["answer"]),
            alternatives(raw["other"]),
            moment("as_of"),
            moment("now"),
        )


def first_mention(hits: Sequence[Hit], answer: Sequence[str], other: Sequence[str]) -> str | None:
    """'answer' or 'other': which value the first hit mentioning either mentions (a hit
    mentioning both counts as the answer's); None if no hit mentions either."""
    for hit in hits:
        if mentions(hit.text, answer):
            return "answer"
        if mentions(hit.text, other):
            return "other"
    return None


def presents_current(text: str, answer: Sequence[str], other: Sequence[str]) -> bool:
    """The context holds the answer, and any line stating another value without the answer
    is marked outdated."""
    if not mentions(text, answer):
        return False
    return all(
        OUTDATED_MARK in line or mentions(line, answer)
        for line in text.splitlines()
        if mentions(line, other)
    )


@dataclass(frozen=True, slots=True)
class Outcome:
    scenario: str
    language: str
    question: TruthQuestion
    first: str | None  # 'answer', 'other' or None
    context_has: bool | None  # the context holds the answer (None for as-of questions)
    context_ok: bool | None  # ... and marks every line stating another value without it
    top: str  # the deciding hit's text (or the top hit's), for --verbose

    @property
    def ok(self) -> bool:
        return self.first == "answer"


@dataclass(slots=True)
class TruthResult:
    outcomes: list[Outcome] = field(default_factory=list)
    scenarios: dict[str, int] = field(default_factory=dict)  # language -> scenarios

    def _cells(self, language: str | None) -> list[str]:
        chosen = [o for o in self.outcomes if language is None or o.language == language]
        now = [o for o in chosen if o.question.as_of is None]
        then = [o for o in chosen if o.question.as_of is not None]
        scenarios = (
            sum(self.scenarios.values()) if language is None else self.scenarios.get(language, 0)
        )
        return [
            str(scenarios),
            str(len(now)),
            _rate([o.ok for o in now]),
            _rate([bool(o.context_has) for o in now]),
            _rate([bool(o.context_ok) for o in now]),
            str(len(then)),
            _rate([o.ok for o in then]),
        ]

    def table(self) -> str:
        lines = [
            "| language | scenarios | now q | current-first | context has current "
            "| context current, stale marked | as-of q | as-of first |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for language in sorted(self.scenarios):
            lines.append(f"| {language} | " + " | ".join(self._cells(language)) + " |")
        lines.append("| overall | " + " | ".join(self._cells(None)) + " |")
        return "\n".join(lines)

    def failures(self) -> str:
        lines = []
        for o in self.outcomes:
            missed = not o.ok or o.context_ok is False
            if not missed:
                continue
            when = f" as_of {o.question.as_of:%Y-%m-%d}" if o.question.as_of else ""
            verdict = {"answer": "answer first", "other": "OTHER first", None: "NOT FOUND"}[o.first]
            context = "" if o.context_ok is None else f", context {'ok' if o.context_ok else 'NO'}"
            lines.append(
                f"- {o.scenario}{when}: {o.question.query!r} -> {verdict}{context}; "
                f"answer {'/'.join(o.question.answer)}; top: {o.top[:140]!r}"
            )
        return "\n".join(lines) if lines else "(no misses)"


def _rate(values: Sequence[bool]) -> str:
    return f"{mean([float(v) for v in values]):.3f}" if values else "-"


def ask(memory: Memory, scenario: Scenario, question: TruthQuestion) -> Outcome:
    now = question.as_of or question.now or (scenario.last_time + timedelta(days=1))
    hits = memory.search(
        question.query,
        user_id=scenario.id,
        limit=SEARCH_LIMIT,
        now=now,
        as_of=question.as_of,
    )
    first = first_mention(hits, question.answer, question.other)
    deciding = next(
        (h for h in hits if mentions(h.text, question.answer) or mentions(h.text, question.other)),
        hits[0] if hits else None,
    )
    context_has = context_ok = None
    if question.as_of is None:
        ctx = memory.context(
            question.query, user_id=scenario.id, budget_tokens=CONTEXT_BUDGET, now=now
        )
        context_has = mentions(ctx.text, question.answer)
        context_ok = presents_current(ctx.text, question.answer, question.other)
    return Outcome(
        scenario.id,
        scenario.language,
        question,
        first,
        context_has,
        context_ok,
        deciding.text if deciding else "",
    )


def run_truth(
    *,
    split: Split = "dev",
    languages: Sequence[str] | None = None,
    data_dir: Path | None = None,
    memory_kwargs: dict[str, Any] | None = None,
    scenarios: Sequence[Scenario] | None = None,
    progress: Callable[[str, int], Any] | None = None,
) -> TruthResult:
    """Feed every scenario of the split into a fresh store (``data_dir``, or a temporary
    directory removed afterwards), then ask its questions."""
    chosen = (
        list(scenarios)
        if scenarios is not None
        else load_suite("truth", split=split, languages=languages)
    )
    if not chosen:
        raise ValueError("no truth scenarios selected")
    with tempfile.TemporaryDirectory(prefix="madeleine-truth-") as scratch:
        workdir = Path(data_dir) if data_dir else Path(scratch)
        return _run(workdir, chosen, memory_kwargs, progress)


def _run(
    workdir: Path,
    chosen: Sequence[Scenario],
    memory_kwargs: dict[str, Any] | None,
    progress: Callable[[str, int], Any] | None,
) -> TruthResult:
    result = TruthResult()
    with Memory(workdir, **(memory_kwargs or memory_options(None))) as memory:
        build_store(memory, chosen, progress)
        for scenario in chosen:
            result.scenarios[scenario.language] = result.scenarios.get(scenario.language, 0) + 1
            for raw in scenario.questions:
                result.outcomes.append(ask(memory, scenario, TruthQuestion.parse(raw)))
                if progress is not None:
                    progress("questions", 1)
    return result
