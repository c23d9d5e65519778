"""``madeleine bench context``: key-fact recall of the context block within a token budget.

Each question of the ``context`` suite lists the key facts an agent needs to answer it or act
on it; a key fact is a short string or a list of alternatives, found when one of them occurs
in ``context(query, budget_tokens=B).text``, case-insensitively::

    {"kind": "proactive", "query": "Set up autopay for my phone bill from my checking account",
     "facts": [["closes at the end of the month", "closing"], "checking"]}

Kinds, reported apart:
- ``single``: the facts are in one session;
- ``multi``: the facts are spread over several sessions;
- ``proactive``: the request touches a plan, account, document or health matter, and a fact
  said in another session, often months earlier, changes what the agent should do (the
  checking account closes at the end of the month; the passport expires next month; the
  patient number given when the appointment was booked).

A question's recall is the share of its key facts found; a cell is the mean over questions.
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

KINDS: tuple[str, ...] = ("single", "multi", "proactive")
KIND_NAMES = {"single": "single-session", "multi": "multi-session", "proactive": "proactive"}
DEFAULT_BUDGETS: tuple[int, ...] = (200, 500, 1000)


@dataclass(frozen=True, slots=True)
class KeyFactQuestion:
    kind: str
    query: str
    facts: tuple[tuple[str, ...], ...]
    now: datetime | None = None

    @classmethod
    def parse(cls, raw: dict[str, Any]) -> KeyFactQuestion:
        kind = raw.get("kind")
        if kind not in KINDS:
            raise ValueError(f"question kind must be one of {KINDS}: {raw!r}")
        query = str(raw.get("query", "")).strip()
        facts = raw.get("facts")
        if not query or not isinstance(facts, list) or not facts:
            raise ValueError(f"a context question needs a query and key facts: {raw!r}")
        now = datetime.fromisoformat(raw["now"]) if raw.get("now") else None
        return cls(str(kind), query, tuple(alternatives(f) for f in facts), now)


def recall(text: str, facts: Sequence[Sequence[str]]) -> float:
    """Share of the key facts that occur in ``text``."""
    return sum(mentions(text, f) for f in facts) / len(facts)


@dataclass(frozen=True, slots=True)
class Outcome:
    scenario: str
    language: str
    question: KeyFactQuestion
    budget: int
    recall: float
    missing: tuple[str, ...]
    tokens: int


@dataclass(slots=True)
class ContextResult:
    budgets: tuple[int, ...]
    outcomes: list[Outcome] = field(default_factory=list)

    def languages(self) -> list[str]:
        return sorted({o.language for o in self.outcomes})

    def cell(self, kind: str, budget: int, language: str | None) -> tuple[float, int]:
        values = [
            o.recall
            for o in self.outcomes
            if o.question.kind == kind
            and o.budget == budget
            and (language is None or o.language == language)
        ]
        return mean(values), len(values)

    def table(self) -> str:
        languages = self.languages()
        header = (
            "| kind | budget | "
            + " | ".join(f"{lang} recall (n)" for lang in languages)
            + " | overall recall (n) | mean tokens |"
        )
        lines = [header, "|---|---:|" + "---:|" * (len(languages) + 2)]
        for kind in KINDS:
            for budget in self.budgets:
                cells = []
                for language in [*languages, None]:
                    value, n = self.cell(kind, budget, language)
                    cells.append(f"{value:.3f} ({n})" if n else "-")
                used = [
                    float(o.tokens)
                    for o in self.outcomes
                    if o.question.kind == kind and o.budget == budget
                ]
                cells.append(f"{mean(used):.0f}" if used else "-")
                lines.append(f"| {KIND_NAMES[kind]} | {budget} | " + " | ".join(cells) + " |")
        for budget in self.budgets:
            cells = []
            for language in [*languages, None]:
                values = [
                    o.recall
                    for o in self.outcomes
                    if o.budget == budget and (language is None or o.language == language)
                ]
                cells.append(f"{mean(values):.3f} ({len(values)})" if values else "-")
            used = [float(o.tokens) for o in self.outcomes if o.budget == budget]
            cells.append(f"{mean(used):.0f}" if used else "-")
            lines.append(f"| all kinds | {budget} | " + " | ".join(cells) + " |")
        return "\n".join(lines)

    def failures(self) -> str:
        lines = [
            f"- {o.scenario} [{o.question.kind}, {o.budget}]: {o.question.query!r} "
            f"recall {o.recall:.2f}, missing {', '.join(o.missing)}"
            for o in self.outcomes
            if o.recall < 1.0
        ]
        return "\n".join(lines) if lines else "(no misses)"


def ask(
    memory: Memory, scenario: Scenario, question: KeyFactQuestion, budgets: Sequence[int]
) -> list[Outcome]:
    now = question.now or (scenario.last_time + timedelta(days=1))
    outcomes = []
    for budget in budgets:
        ctx = memory.context(question.query, user_id=scenario.id, budget_tokens=budget, now=now)
        missing = tuple(f[0] for f in question.facts if not mentions(ctx.text, f))
        outcomes.append(
            Outcome(
                scenario.id,
                scenario.language,
                question,
                budget,
                recall(ctx.text, question.facts),
                missing,
                ctx.tokens,
            )
        )
    return outcomes


def parse_budgets(raw: str) -> tuple[int, ...]:
    try:
        budgets = tuple(int(part) for part in raw.split(",") if part.strip())
    except ValueError:
        raise ValueError(f"--budgets must be comma-separated integers, got {raw!r}") from None
    if not budgets or any(b < 1 for b in budgets):
        raise ValueError(f"--budgets must be positive integers, got {raw!r}")
    return budgets


def run_context(
    *,
    split: Split = "dev",
    budgets: Sequence[int] = DEFAULT_BUDGETS,
    languages: Sequence[str] | None = None,
    data_dir: Path | None = None,
    memory_kwargs: dict[str, Any] | None = None,
    scenarios: Sequence[Scenario] | None = None,
    progress: Callable[[str, int], Any] | None = None,
) -> ContextResult:
    """Feed every scenario of the split into a fresh store (``data_dir``, or a temporary
    directory removed afterwards), then build each question's context at every budget."""
    chosen = (
        list(scenarios)
        if scenarios is not None
        else load_suite("context", split=split, languages=languages)
    )
    if not chosen:
        raise ValueError("no context scenarios selected")
    with tempfile.TemporaryDirectory(prefix="madeleine-context-") as scratch:
        workdir = Path(data_dir) if data_dir else Path(scratch)
        return _run(workdir, chosen, memory_kwargs, progress, budgets)


def _run(
    workdir: Path,
    chosen: Sequence[Scenario],
    memory_kwargs: dict[str, Any] | None,
    progress: Callable[[str, int], Any] | None,
    budgets: Sequence[int],
) -> ContextResult:
    result = ContextResult(tuple(budgets))
    with Memory(workdir, **(memory_kwargs or memory_options(None))) as memory:
        build_store(memory, chosen, progress)
        for scenario in chosen:
            for raw in scenario.questions:
                result.outcomes.extend(
                    ask(memory, scenario, KeyFactQuestion.parse(raw), result.budgets)
                )
                if progress is not None:
                    progress("questions", 1)
    return result
