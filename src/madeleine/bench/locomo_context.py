"""``madeleine bench context --locomo``: key-fact recall of ``context()`` on questions nobody
here wrote (issue 31: a second opinion on the project's own context suite).

Each LoCoMo conversation is ingested as one user (both speakers' turns, at their sessions'
dates, as ``bench locomo`` does). Its questions of categories 1–4 (5 is adversarial: the
event never happened) become key-fact questions, with no hand-written label:

- the **key facts** are the answer's parts: split on commas and semicolons, and on "and"
  between short sides that each have an article or none does ("Pottery and painting" → two
  facts, "a safe and loving home" → one); parts of two characters or fewer and stop words
  alone are dropped;
- a question counts only when every key fact occurs **literally** (case aside, on word
  boundaries) in the text of its evidence turns: an answer the dataset paraphrased ("Yes",
  a count, a date computed from a session's date) cannot be found in any context by string,
  so it would measure the matcher, not the memory. Dates are left out for that reason.

Recall of a question at a budget = share of its key facts found in
``context(question, user_id=, budget_tokens=B).text``; a cell is the mean over questions.
The split is by conversation, so that no speaker is in both: ``dev`` = conv-26, conv-30,
conv-43 (tune on these), ``test`` = every other conversation (conv-41, conv-42 of the
development file, and any conversation of another file): report it, never tune on it.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from madeleine.api import Memory
from madeleine.bench.locomo import Conversation, load_locomo
from madeleine.bench.scenarios import mean
from madeleine.text.timeparse import parse_timestamp

DEV_CONVERSATIONS = frozenset({"conv-26", "conv-30", "conv-43"})
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
SPLITS = ("dev", "test", "all")
_PART = re.compile(r"\s*[,;]\s*")
_AND = re.compile(r"\s+and\s+", re.I)
_SHORT_SIDE = 3  # words: "pottery and painting" splits, "a safe and loving home" does not
_MIN_CHARS = 3
_ARTICLES = frozenset({"a", "an", "the", "my", "his", "her", "their", "our"})
_STOP = frozenset(
    "the a an of to in on at for with and or but is was are were be been it this that my his "
    "her their our your yes no not".split()
)


@dataclass(frozen=True, slots=True)
class AnswerQuestion:
    conversation: str
    text: str
    category: int
    facts: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class LocomoDialogue:
    sample_id: str
    sessions: tuple[tuple[str, str, tuple[dict[str, Any], ...]], ...]  # id, date, messages
    questions: tuple[AnswerQuestion, ...]
    skipped: int  # questions of categories 1-4 whose answer is not literal in its evidence


def split_of(sample_id: str) -> str:
    return "dev" if sample_id in DEV_CONVERSATIONS else "test"


def key_facts(answer: str) -> tuple[str, ...]:
    """The answer's parts (see the module)."""
    parts: list[str] = []
    for piece in _PART.split(answer.strip().rstrip(".")):
        sides = _AND.split(piece)
        if len(sides) > 1 and _a_list(sides):
            parts.extend(sides)
        else:
            parts.append(piece)
    kept = []
    for part in parts:
        part = part.strip().strip("\"'").strip()
        if len(part) < _MIN_CHARS or part.casefold() in _STOP:
            continue
        kept.append(part)
    return tuple(dict.fromkeys(kept))


def _a_list(sides: Sequence[str]) -> bool:
    """Whether "x and y" names two things: short sides, each with an article or none with
    one ("the beach and the lake"; not "a safe and loving home", one noun phrase)."""
    if any(len(side.split()) > _SHORT_SIDE or not side.strip() for side in sides):
        return False
    articled = [side.split()[0].casefold() in _ARTICLES for side in sides]
    return all(articled) or not any(articled)


def occurs(fact: str, text: str) -> bool:
    """``fact`` in ``text``, case aside, not inside a longer word."""
    pattern = r"(?<!\w)" + r"\s+".join(re.escape(w) for w in fact.split()) + r"(?!\w)"
    return re.search(pattern, text, re.IGNORECASE) is not None


def load_dialogues(path: Path) -> list[LocomoDialogue]:
    """The conversations as ``bench locomo`` reads them, with their kept questions."""
    return [_dialogue(conversation) for conversation in load_locomo(path)]


def _dialogue(conversation: Conversation) -> LocomoDialogue:
    said = {str(m["id"]): str(m["content"]) for _, _, ms in conversation.sessions for m in ms}
    questions = []
    skipped = 0
    for question in conversation.questions:
        if question.category not in CATEGORIES or question.answer is None:
            continue
        facts = key_facts(question.answer)
        evidence = " ".join(said.get(d, "") for d in question.evidence)
        if not facts or not all(occurs(f, evidence) for f in facts):
            skipped += 1
            continue
        questions.append(
            AnswerQuestion(conversation.sample_id, question.text, question.category, facts)
        )
    sessions = tuple((key, date, tuple(ms)) for key, date, ms in conversation.sessions)
    return LocomoDialogue(conversation.sample_id, sessions, tuple(questions), skipped)


@dataclass(frozen=True, slots=True)
class Outcome:
    question: AnswerQuestion
    budget: int
    recall: float
    tokens: int


@dataclass(slots=True)
class LocomoContextResult:
    budgets: tuple[int, ...]
    outcomes: list[Outcome] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)  # per split

    def _cell(self, split: str, category: int | None, budget: int) -> tuple[float, int]:
        values = [
            o.recall
            for o in self.outcomes
            if o.budget == budget
            and (split == "all" or split_of(o.question.conversation) == split)
            and (category is None or o.question.category == category)
        ]
        return mean(values), len(values)

    def table(self) -> str:
        splits = sorted({split_of(o.question.conversation) for o in self.outcomes})
        lines = [
            "| split | budget | "
            + " | ".join(f"{name} (n)" for name in CATEGORIES.values())
            + " | all (n) | mean tokens |",
            "|---|---:|" + "---:|" * (len(CATEGORIES) + 2),
        ]
        for split in splits:
            for budget in self.budgets:
                cells = []
                for category in [*CATEGORIES, None]:
                    value, n = self._cell(split, category, budget)
                    cells.append(f"{value:.3f} ({n})" if n else "-")
                used = [
                    float(o.tokens)
                    for o in self.outcomes
                    if o.budget == budget and split_of(o.question.conversation) == split
                ]
                cells.append(f"{mean(used):.0f}")
                lines.append(f"| {split} | {budget} | " + " | ".join(cells) + " |")
        return "\n".join(lines)

    def summary(self) -> str:
        kept = len({(o.question.conversation, o.question.text) for o in self.outcomes})
        dropped = sum(self.skipped.values())
        return (
            f"{kept} questions whose answers occur literally in their evidence turns; "
            f"{dropped} others of categories 1-4 left out (paraphrased, counts, dates)"
        )


def run_locomo_context(
    path: Path,
    *,
    split: str = "dev",
    budgets: Sequence[int] = (200, 500, 1000),
    data_dir: Path | str | None = None,
    memory_options: dict[str, Any] | None = None,
    progress: Callable[[str, int], Any] | None = None,
) -> LocomoContextResult:
    """Ingest the conversations of the split, ask every kept question at every budget."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    chosen = [d for d in load_dialogues(path) if split == "all" or split_of(d.sample_id) == split]
    if not chosen:
        raise ValueError(f"no LoCoMo conversations in the {split} split of {path}")
    result = LocomoContextResult(tuple(budgets))
    with tempfile.TemporaryDirectory(prefix="madeleine-locomo-context-") as scratch:
        where = data_dir if data_dir is not None else Path(scratch)
        with Memory(where, **{"background": False, **(memory_options or {})}) as memory:
            for dialogue in chosen:
                _ingest(memory, dialogue, progress)
                key = split_of(dialogue.sample_id)
                result.skipped[key] = result.skipped.get(key, 0) + dialogue.skipped
                for question in dialogue.questions:
                    result.outcomes.extend(_ask(memory, question, budgets))
                    if progress is not None:
                        progress("questions", 1)
    return result


def _ingest(
    memory: Memory, dialogue: LocomoDialogue, progress: Callable[[str, int], Any] | None
) -> None:
    for session_id, date, messages in dialogue.sessions:
        timestamp = parse_timestamp(date, "session date") if date else None
        memory.add(
            list(messages), user_id=dialogue.sample_id, session_id=session_id, timestamp=timestamp
        )
    memory.index_pending(None if progress is None else (lambda n: progress("index", n)))


def _ask(memory: Memory, question: AnswerQuestion, budgets: Iterable[int]) -> list[Outcome]:
    outcomes = []
    for budget in budgets:
        context = memory.context(question.text, user_id=question.conversation, budget_tokens=budget)
        found = sum(occurs(fact, context.text) for fact in question.facts)
        outcomes.append(Outcome(question, budget, found / len(question.facts), context.tokens))
    return outcomes
