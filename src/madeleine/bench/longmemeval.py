"""LongMemEval: one user per question, ingest its haystack, ask the question, score retrieval.

Reads the public ``longmemeval_s.json`` / ``longmemeval_m.json`` / ``longmemeval_oracle.json``
layout (a list of question objects, each carrying its own haystack of dated sessions).
Scores are reported at two granularities: sessions (evidence = ``answer_session_ids``) and
turns (evidence = turns marked ``has_answer``). Abstention questions (``*_abs``) have no
evidence to find, so they are skipped and counted. ``official=True`` indexes user turns only,
as in the paper's retrieval setting; evidence that only an assistant said is then unfindable.
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from madeleine.api import Memory
from madeleine.bench.locomo import CategoryScores
from madeleine.bench.metrics import distinct, ndcg_at, percentile, session_recall
from madeleine.text.timeparse import parse_timestamp

KS = (5, 10)
NDCG_K = 10
SESSION_METRICS = ("S_any@5", "S_any@10", "S_all@5", "S_all@10", "S_NDCG@10")
TURN_METRICS = ("T_any@5", "T_any@10", "T_all@5", "T_all@10", "T_NDCG@10")
METRICS = SESSION_METRICS + TURN_METRICS
ABSTENTION_SUFFIX = "_abs"

_DATE = re.compile(
    r"^\s*(\d{4})/(\d{1,2})/(\d{1,2})\s*(?:\(\s*[A-Za-z]{2,9}\.?\s*\))?\s*"
    r"(?:(\d{1,2}):(\d{2})(?::(\d{2}))?)?\s*$"
)
_REQUIRED = (
    "question_id",
    "question_type",
    "question",
    "haystack_session_ids",
    "haystack_dates",
    "haystack_sessions",
    "answer_session_ids",
)


def parse_date(value: object, argument: str = "date") -> datetime:
    """Parse LongMemEval's "2023/05/20 (Sat) 02:21" (UTC); ISO-8601 and the rest also pass.

    ``parse_timestamp`` does not know the slash-and-weekday layout, so it is handled here
    and everything else is delegated to it. Raises ``ValueError`` naming ``argument``.
    """
    if isinstance(value, str):
        match = _DATE.match(value)
        if match:
            year, month, day, hour, minute, second = match.groups()
            try:
                return datetime(
                    int(year),
                    int(month),
                    int(day),
                    int(hour or 0),
                    int(minute or 0),
                    int(second or 0),
                    tzinfo=UTC,
                )
            except ValueError as exc:
                raise ValueError(f"{argument} is not a valid date: {value!r} ({exc})") from exc
    try:
        return parse_timestamp(value, argument)
    except TypeError as exc:
        raise ValueError(str(exc)) from exc


def turn_id(session_id: str, index: int) -> str:
    """The message id given to turn ``index`` (0-based, all roles) of a session.

    Hits report these ids in ``source_ids``, so a retrieved turn maps back to the dataset.
    """
    return f"{session_id}:{index}"


@dataclass(frozen=True, slots=True)
class Turn:
    index: int
    role: str
    content: str
    has_answer: bool


@dataclass(frozen=True, slots=True)
class Session:
    session_id: str
    date: datetime
    turns: list[Turn]


@dataclass(frozen=True, slots=True)
class Question:
    question_id: str
    question_type: str
    text: str
    answer: str
    date: datetime | None
    sessions: list[Session]
    answer_sessions: frozenset[str]

    @property
    def abstention(self) -> bool:
        return self.question_id.endswith(ABSTENTION_SUFFIX)

    def evidence_turns(self, official: bool = False) -> frozenset[str]:
        """Turns marked ``has_answer``; user turns only in the official setting, as in
        LongMemEval's own retrieval evaluation."""
        return frozenset(
            turn_id(session.session_id, turn.index)
            for session in self.sessions
            for turn in session.turns
            if turn.has_answer and (turn.role == "user" or not official)
        )

    def indexed_turns(self, official: bool = False) -> int:
        """Turns the runner hands to ``Memory.add`` (``official``: user turns only)."""
        return sum(1 for _, _, messages in ingest_batches(self, official) for _ in messages)


def load_longmemeval(path: Path) -> list[Question]:
    """Read and validate a LongMemEval file; a malformed one raises ``ValueError`` saying where."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc})") from exc
    if not isinstance(data, list):
        raise ValueError(
            f"{path}: expected a JSON list of LongMemEval questions, got {type(data).__name__}"
        )
    return [_question(item, f"{path}: question [{n}]") for n, item in enumerate(data)]


def _question(item: object, where: str) -> Question:
    if not isinstance(item, dict):
        raise ValueError(f"{where} must be an object, got {type(item).__name__}")
    missing = [key for key in _REQUIRED if key not in item]
    if missing:
        raise ValueError(f"{where} is missing {', '.join(repr(k) for k in missing)}")
    qid = item["question_id"]
    if not isinstance(qid, str) or not qid.strip():
        raise ValueError(f"{where}: 'question_id' must be a non-empty string")
    where = f"{where} ({qid})"
    for key in ("question_type", "question"):
        if not isinstance(item[key], str) or not item[key].strip():
            raise ValueError(f"{where}: {key!r} must be a non-empty string")
    lists = {key: item[key] for key in _REQUIRED[3:]}
    for key, value in lists.items():
        if not isinstance(value, list):
            raise ValueError(f"{where}: {key!r} must be a list, got {type(value).__name__}")
    ids, dates, sessions = (
        lists["haystack_session_ids"],
        lists["haystack_dates"],
        lists["haystack_sessions"],
    )
    if not len(ids) == len(dates) == len(sessions):
        raise ValueError(
            f"{where}: haystack_session_ids, haystack_dates and haystack_sessions must have "
            f"the same length, got {len(ids)}, {len(dates)} and {len(sessions)}"
        )
    raw_date = item.get("question_date")
    return Question(
        question_id=qid,
        question_type=item["question_type"],
        text=item["question"],
        answer=str(item.get("answer", "")),
        date=None if raw_date is None else parse_date(raw_date, f"{where}: question_date"),
        sessions=[
            _session(sid, date, turns, f"{where}: haystack session [{n}]")
            for n, (sid, date, turns) in enumerate(zip(ids, dates, sessions, strict=True))
        ],
        answer_sessions=frozenset(
            _string(sid, f"{where}: answer_session_ids[{n}]")
            for n, sid in enumerate(lists["answer_session_ids"])
        ),
    )


def _session(session_id: object, date: object, turns: object, where: str) -> Session:
    sid = _string(session_id, f"{where}: its id")
    where = f"{where} ({sid})"
    if not isinstance(turns, list):
        raise ValueError(f"{where} must be a list of turns, got {type(turns).__name__}")
    parsed: list[Turn] = []
    for index, turn in enumerate(turns):
        at = f"{where}, turn [{index}]"
        if not isinstance(turn, dict):
            raise ValueError(f"{at} must be an object, got {type(turn).__name__}")
        role, content = turn.get("role"), turn.get("content")
        if not isinstance(role, str) or not role.strip():
            raise ValueError(f"{at}: 'role' must be a non-empty string")
        if not isinstance(content, str):
            raise ValueError(f"{at}: 'content' must be a string")
        parsed.append(Turn(index, role, content, turn.get("has_answer") is True))
    return Session(sid, parse_date(date, f"{where}: haystack date"), parsed)


def _string(value: object, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{where} must be a non-empty string, got {value!r}")
    return value


def select_questions(
    questions: Sequence[Question],
    *,
    types: Iterable[str] | None = None,
    limit: int | None = None,
) -> tuple[list[Question], int]:
    """(scored questions, abstention questions skipped): type filter, then the first ``limit``."""
    if limit is not None and limit < 1:
        raise ValueError(f"the number of questions must be at least 1, got {limit}")
    wanted = set(types) if types else None
    matching = [q for q in questions if wanted is None or q.question_type in wanted]
    if not matching and wanted is not None:
        available = sorted({q.question_type for q in questions})
        raise ValueError(
            f"no LongMemEval questions of type {sorted(wanted)}; the file has {available}"
        )
    scored = [q for q in matching if not q.abstention]
    skipped = len(matching) - len(scored)
    return (scored if limit is None else scored[:limit]), skipped


def ingest_batches(
    question: Question, official: bool = False, max_chars: int | None = None
) -> list[tuple[str, datetime, list[dict[str, Any]]]]:
    """(session id, date, messages) per haystack session, each message id'd by ``turn_id``.

    Empty turns are dropped (``Memory.add`` rejects them) without renumbering the rest, so
    ids stay aligned with the dataset's turn positions.
    """
    batches = []
    for session in question.sessions:
        messages = []
        for turn in session.turns:
            if official and turn.role != "user":
                continue
            content = turn.content.replace("\x00", "")
            if max_chars is not None:
                content = content[:max_chars]
            if not content.strip():
                continue
            messages.append(
                {
                    "role": turn.role,
                    "content": content,
                    "id": turn_id(session.session_id, turn.index),
                }
            )
        if messages:
            batches.append((session.session_id, session.date, messages))
    return batches


# Turns retrieved per question: sessions are ranked by their first turn in this list, so that
# the top 10 sessions are 10 distinct sessions, as in LongMemEval's session-level evaluation.
SESSION_POOL = 50


def _same(item: str) -> str:
    return item


def score_ranked(ranked: Sequence[str], relevant: frozenset[str], prefix: str) -> dict[str, float]:
    """recall_any/recall_all at each k and NDCG@10 over the first distinct ranked ids.

    Used for sessions (ids: session ids) and turns (ids: ``turn_id``s) alike; any means at
    least one evidence id in the top k, all means every one of them.
    """
    ranked = distinct(ranked)
    scores: dict[str, float] = {}
    for k in KS:
        found_any, found_all = session_recall(ranked, set(relevant), k, _same)
        scores[f"{prefix}_any@{k}"] = found_any
        scores[f"{prefix}_all@{k}"] = found_all
    scores[f"{prefix}_NDCG@{NDCG_K}"] = ndcg_at(ranked, set(relevant), NDCG_K)
    return scores


@dataclass(slots=True)
class TypeScores:
    """Session metrics over every scored question; turn metrics over those with marked turns."""

    sessions: CategoryScores = field(default_factory=CategoryScores)
    turns: CategoryScores = field(default_factory=CategoryScores)

    def mean(self, key: str) -> float:
        return (self.turns if key.startswith("T_") else self.sessions).mean(key)


@dataclass(slots=True)
class LongMemEvalResult:
    by_type: dict[str, TypeScores]
    overall: TypeScores
    skipped_abstention: int
    without_turn_evidence: int
    without_session_evidence: int
    official: bool
    ingest_turns: int
    ingest_seconds: float
    latencies_ms: list[float]

    def table(self) -> str:
        width = max([len("question type"), len("overall"), *map(len, self.by_type)])
        cells = [f"{'question type':<{width}}", f"{'n':>4}"]
        cells += [f"{m:>9}" for m in SESSION_METRICS] + [f"{'n_turn':>6}"]
        cells += [f"{m:>9}" for m in TURN_METRICS]
        header = "| " + " | ".join(cells) + " |"
        rule = "|" + "|".join("-" * len(cell) for cell in header.split("|")[1:-1]) + "|"
        lines = [header, rule]
        lines += [_row(name, self.by_type[name], width) for name in sorted(self.by_type)]
        lines.append(_row("overall", self.overall, width))
        return "\n".join(lines)

    def latency(self, quantile: float) -> float:
        return percentile(self.latencies_ms, quantile)

    def summary(self) -> str:
        rate = self.ingest_turns / self.ingest_seconds if self.ingest_seconds else float("nan")
        indexed = "user only, official setting" if self.official else "user and assistant"
        lines = [
            f"questions: {self.overall.sessions.count} scored, "
            f"{self.skipped_abstention} abstention skipped, "
            f"{self.without_turn_evidence} without has_answer turns (left out of T_ metrics)",
            f"ingest: {self.ingest_turns} turns ({indexed}) in {self.ingest_seconds:.1f} s "
            f"({rate:.1f} turns/s, indexing included)",
            f"search: {len(self.latencies_ms)} queries, "
            f"p50 {self.latency(0.5):.1f} ms, p95 {self.latency(0.95):.1f} ms",
        ]
        if self.without_session_evidence:
            lines.insert(
                1,
                f"questions: {self.without_session_evidence} without answer_session_ids "
                "(left out of every metric)",
            )
        return "\n".join(lines)


def _row(label: str, scores: TypeScores, width: int) -> str:
    def cell(metric: str) -> str:
        source = scores.turns if metric.startswith("T_") else scores.sessions
        return f"{scores.mean(metric):>9.3f}" if source.count else f"{'-':>9}"

    cells = [f"{label:<{width}}", f"{scores.sessions.count:>4}"]
    cells += [cell(m) for m in SESSION_METRICS] + [f"{scores.turns.count:>6}"]
    cells += [cell(m) for m in TURN_METRICS]
    return "| " + " | ".join(cells) + " |"


def run_longmemeval(
    source: Path | Sequence[Question],
    *,
    data_dir: Path | None = None,
    channels: Sequence[str] | None = None,
    official: bool = False,
    types: Iterable[str] | None = None,
    questions: int | None = None,
    progress: Callable[[str, int], Any] | None = None,
    memory_options: dict[str, Any] | None = None,
) -> LongMemEvalResult:
    """Ingest each selected question's haystack as its own user in one store, then search.

    ``source`` is a file or already-loaded questions (the CLI loads once to size its progress
    bars). ``data_dir`` must be empty or absent: leftovers from another run would be
    searched too. Without it a temporary store is used and removed afterwards.
    """
    corpus = load_longmemeval(source) if isinstance(source, str | Path) else list(source)
    selected, skipped = select_questions(corpus, types=types, limit=questions)
    if not selected:
        raise ValueError("no LongMemEval questions selected (all were abstention questions)")
    if data_dir is not None:
        data_dir = Path(data_dir)
        if data_dir.exists() and (not data_dir.is_dir() or any(data_dir.iterdir())):
            raise ValueError(f"{data_dir} is not empty; the benchmark needs a fresh store")
        return _run(selected, skipped, data_dir, channels, official, progress, memory_options)
    with tempfile.TemporaryDirectory(prefix="madeleine-longmemeval-") as tmp:
        return _run(selected, skipped, Path(tmp), channels, official, progress, memory_options)


def _run(
    selected: Sequence[Question],
    skipped: int,
    workdir: Path,
    channels: Sequence[str] | None,
    official: bool,
    progress: Callable[[str, int], Any] | None,
    memory_options: dict[str, Any] | None,
) -> LongMemEvalResult:
    options = {"background": False, **(memory_options or {})}
    by_type: dict[str, TypeScores] = defaultdict(TypeScores)
    overall = TypeScores()
    latencies: list[float] = []
    ingest_turns = 0
    ingest_seconds = 0.0
    no_turn_evidence = no_session_evidence = 0
    on_index = None if progress is None else (lambda n: progress("index", n))
    with Memory(workdir, **options) as memory:
        max_chars = memory.settings.limits.max_message_chars
        for question in selected:
            started = time.perf_counter()
            for session_id, date, messages in ingest_batches(question, official, max_chars):
                result = memory.add(
                    messages, user_id=question.question_id, session_id=session_id, timestamp=date
                )
                ingest_turns += result.count
            memory.index_pending(on_index)
            ingest_seconds += time.perf_counter() - started

            t0 = time.perf_counter()
            hits = memory.search(
                question.text,
                user_id=question.question_id,
                limit=SESSION_POOL,
                channels=channels,
                now=question.date,
            )
            latencies.append((time.perf_counter() - t0) * 1000)
            if progress is not None:
                progress("questions", 1)

            if not question.answer_sessions:
                no_session_evidence += 1
                continue
            ranked_sessions = [hit.session_id for hit in hits]
            session_scores = score_ranked(ranked_sessions, question.answer_sessions, "S")
            for scores in (by_type[question.question_type], overall):
                scores.sessions.add(session_scores)
            evidence = question.evidence_turns(official)
            if not evidence:
                no_turn_evidence += 1
                continue
            ranked_turns = [source for hit in hits for source in hit.source_ids]
            turn_scores = score_ranked(ranked_turns, evidence, "T")
            for scores in (by_type[question.question_type], overall):
                scores.turns.add(turn_scores)
    return LongMemEvalResult(
        by_type=dict(by_type),
        overall=overall,
        skipped_abstention=skipped,
        without_turn_evidence=no_turn_evidence,
        without_session_evidence=no_session_evidence,
        official=official,
        ingest_turns=ingest_turns,
        ingest_seconds=ingest_seconds,
        latencies_ms=latencies,
    )
