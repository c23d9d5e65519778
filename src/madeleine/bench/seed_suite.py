"""``madeleine bench seed-suite DIR``: the book's own user-memory evaluation (issue 32).

``DIR`` holds ``cases.jsonl``: one case per line, each a user's multi-session service
conversation and one question (or more) with the key facts its answer needs::

    {"case_id": "seed:layer1_01_bank_account",
     "sessions": [{"session_id": "bank_setup_001", "date": "2024-11-15 10:30:00",
                   "turns": [{"turn_id": "bank_setup_001_1", "speaker": "user", "text": "…"}]}],
     "questions": [{"question": "What was my checking account number again?",
                    "category": "layer1", "key_facts": ["4429853327", "123006800"]}]}

Layers (``category``): 1, a detail from one long session; 2, the right one of several similar
things or the latest of a chain of changes; 3, links across sessions the question never names.

The measure is the dataset's: budgets are counted in **whitespace words** (the memory is
opened with ``token_counter=lambda t: len(t.split())``); a key fact is found when its
normalised tokens (lower case, runs of letters and digits) occur in order, contiguously, in the
first ``B`` words of the text. ``context()`` is asked with ``budget_tokens=B``; the ``search()``
row joins the texts of the ranked turns, best first. A question's recall is the share of its
key facts found; a layer's is the mean over its questions; ``all`` is the mean over questions.
Each case is its own user, so cases never see each other's sessions.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from madeleine.api import Memory
from madeleine.bench.scenarios import mean

DEFAULT_BUDGETS: tuple[int, ...] = (200, 500, 1000)
SOURCES: tuple[str, ...] = ("context", "search")
_TOKEN = re.compile(r"[^\W_]+")
_SEARCH_LIMIT = 100


@dataclass(frozen=True, slots=True)
class SeedQuestion:
    case_id: str
    layer: str
    text: str
    facts: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SeedCase:
    case_id: str
    sessions: tuple[tuple[str, datetime | None, tuple[dict[str, Any], ...]], ...]
    questions: tuple[SeedQuestion, ...]

    @property
    def turns(self) -> int:
        return sum(len(messages) for _, _, messages in self.sessions)


def words(text: str) -> int:
    """The dataset's token counter: whitespace words."""
    return len(text.split())


def normalised(text: str) -> list[str]:
    return [token.casefold() for token in _TOKEN.findall(text)]


def found(fact: str, text: str) -> bool:
    """``fact``'s normalised tokens occur contiguously, in order, in ``text``'s."""
    needle = normalised(fact)
    if not needle:
        return False
    hay = normalised(text)
    width = len(needle)
    first = needle[0]
    return any(
        hay[at] == first and hay[at : at + width] == needle for at in range(len(hay) - width + 1)
    )


def first_words(text: str, budget: int) -> str:
    return " ".join(text.split()[:budget])


def load_cases(directory: Path) -> list[SeedCase]:
    """The cases of ``directory/cases.jsonl`` (see the module for the layout)."""
    path = Path(directory) / "cases.jsonl"
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: a seed-suite directory holds cases.jsonl")
    cases = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if line.strip():
                try:
                    cases.append(_case(json.loads(line)))
                except (KeyError, TypeError, ValueError) as error:
                    raise ValueError(f"{path}:{number}: not a seed-suite case: {error}") from error
    if not cases:
        raise ValueError(f"{path} holds no cases")
    return cases


def _case(raw: dict[str, Any]) -> SeedCase:
    case_id = str(raw["case_id"])
    sessions = []
    for session in raw["sessions"]:
        session_id = str(session["session_id"])
        date = session.get("date")
        when = datetime.fromisoformat(str(date)) if date else None
        messages = tuple(
            {
                "role": "assistant" if turn["speaker"] == "assistant" else "user",
                "content": str(turn["text"]),
                "id": str(turn["turn_id"]),
            }
            for turn in session["turns"]
            if str(turn.get("text", "")).strip()
        )
        sessions.append((session_id, when, messages))
    questions = tuple(
        SeedQuestion(
            case_id,
            str(question.get("category") or "all"),
            str(question["question"]),
            tuple(str(fact) for fact in question["key_facts"] if normalised(str(fact))),
        )
        for question in raw["questions"]
    )
    return SeedCase(case_id, tuple(sessions), tuple(q for q in questions if q.facts))


@dataclass(frozen=True, slots=True)
class SeedOutcome:
    question: SeedQuestion
    source: str  # "context" or "search"
    budget: int
    recall: float
    words: int
    missed: tuple[str, ...]


@dataclass(slots=True)
class SeedSuiteResult:
    budgets: tuple[int, ...]
    outcomes: list[SeedOutcome] = field(default_factory=list)

    @property
    def layers(self) -> list[str]:
        return sorted({o.question.layer for o in self.outcomes})

    def recall(self, source: str, budget: int, layer: str | None = None) -> float:
        return mean(
            [
                o.recall
                for o in self.outcomes
                if o.source == source
                and o.budget == budget
                and (layer is None or o.question.layer == layer)
            ]
        )

    def table(self) -> str:
        layers = self.layers
        counts = {
            layer: len({o.question for o in self.outcomes if o.question.layer == layer})
            for layer in layers
        }
        total = len({o.question for o in self.outcomes})
        lines = [
            "| source | budget (words) | all (n="
            + str(total)
            + ") | "
            + " | ".join(f"{layer} (n={counts[layer]})" for layer in layers)
            + " | mean words |",
            "|---|---:|---:|" + "---:|" * (len(layers) + 1),
        ]
        for source in SOURCES:
            for budget in self.budgets:
                used = [
                    float(o.words)
                    for o in self.outcomes
                    if o.source == source and o.budget == budget
                ]
                if not used:
                    continue
                cells = [f"{self.recall(source, budget):.3f}"]
                cells += [f"{self.recall(source, budget, layer):.3f}" for layer in layers]
                cells.append(f"{mean(used):.0f}")
                lines.append(f"| {source}() | {budget} | " + " | ".join(cells) + " |")
        return "\n".join(lines)

    def failures(self) -> str:
        """Every question with a missed key fact, for the middle budget of ``context()``."""
        budget = self.budgets[len(self.budgets) // 2]
        lines = []
        for o in self.outcomes:
            if o.source == "context" and o.budget == budget and o.missed:
                lines.append(
                    f"- {o.question.case_id} ({o.recall:.2f}, {o.words} words): "
                    f"{o.question.text}\n  missed: {', '.join(o.missed)}"
                )
        return "\n".join(lines) if lines else "(no misses)"


def run_seed_suite(
    cases: Sequence[SeedCase],
    *,
    budgets: Sequence[int] = DEFAULT_BUDGETS,
    data_dir: Path | str | None = None,
    memory_options: dict[str, Any] | None = None,
    progress: Callable[[str, int], Any] | None = None,
) -> SeedSuiteResult:
    """Ingest every case as its own user, then ask each question at every budget."""
    result = SeedSuiteResult(tuple(budgets))
    options = {"background": False, **(memory_options or {}), "token_counter": words}
    with tempfile.TemporaryDirectory(prefix="madeleine-seed-suite-") as scratch:
        where = data_dir if data_dir is not None else Path(scratch)
        with Memory(where, **options) as memory:
            for case in cases:
                for session_id, when, messages in case.sessions:
                    memory.add(
                        list(messages), user_id=case.case_id, session_id=session_id, timestamp=when
                    )
            memory.index_pending(None if progress is None else (lambda n: progress("index", n)))
            for case in cases:
                for question in case.questions:
                    result.outcomes.extend(_ask(memory, question, budgets))
                    if progress is not None:
                        progress("questions", 1)
    return result


def _ask(memory: Memory, question: SeedQuestion, budgets: Iterable[int]) -> list[SeedOutcome]:
    outcomes = []
    for budget in budgets:
        context = memory.context(question.text, user_id=question.case_id, budget_tokens=budget)
        outcomes.append(_outcome(question, "context", budget, context.text))
    hits = memory.search(question.text, user_id=question.case_id, limit=_SEARCH_LIMIT)
    ranked = "\n".join(hit.text for hit in hits if hit.kind == "turn")
    outcomes.extend(_outcome(question, "search", budget, ranked) for budget in budgets)
    return outcomes


def _outcome(question: SeedQuestion, source: str, budget: int, text: str) -> SeedOutcome:
    shown = first_words(text, budget)
    missed = tuple(fact for fact in question.facts if not found(fact, shown))
    recall = 1 - len(missed) / len(question.facts)
    return SeedOutcome(question, source, budget, recall, words(shown), missed)
