"""LoCoMo: ingest each conversation as one user, ask every question, score retrieval.

Reads the public ``locomo10.json`` layout. Category 5 (adversarial) questions point at turns
the question was adapted from, so they are reported apart from categories 1-4.
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from madeleine.api import Memory
from madeleine.bench.metrics import ndcg_at, percentile, recall_at, session_recall
from madeleine.store.backends import is_url
from madeleine.text.timeparse import parse_timestamp

CATEGORY_NAMES = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
_DIA_ID = re.compile(r"D(\d+):(\d+)")
# Stages switched off for the plain single-channel baselines.
# a single channel as it recalls: the plain recipe (no score stages), no diversification
_PLAIN: Mapping[str, Any] = {"recipe": "plain", "diversify": False}


@dataclass(frozen=True, slots=True)
class Question:
    conversation: str
    text: str
    category: int
    evidence: frozenset[str]
    answer: str | None = None  # the dataset's answer (category 5 has none)


@dataclass(frozen=True, slots=True)
class Conversation:
    sample_id: str
    sessions: list[tuple[str, str, list[dict[str, Any]]]]  # (session id, date, messages)
    questions: list[Question]

    @property
    def turns(self) -> int:
        return sum(len(messages) for _, _, messages in self.sessions)


def parse_evidence(raw: Iterable[str]) -> frozenset[str]:
    """Normalize evidence ids; tolerate 'D8:6; D9:17' and 'D:11:26' style typos."""
    found: set[str] = set()
    for item in raw:
        text = str(item).replace("D:", "D")
        found.update(f"D{a}:{b}" for a, b in _DIA_ID.findall(text))
    return frozenset(found)


def session_of(dia_id: str) -> str:
    match = _DIA_ID.match(dia_id)
    return f"session_{match.group(1)}" if match else dia_id


def load_locomo(path: Path) -> list[Conversation]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a list of LoCoMo samples")
    conversations = []
    for sample in data:
        convo = sample["conversation"]
        numbers = sorted(
            int(key.split("_")[1])
            for key, value in convo.items()
            if re.fullmatch(r"session_\d+", key) and isinstance(value, list)
        )
        sessions = []
        for number in numbers:
            key = f"session_{number}"
            messages = []
            for turn in convo[key]:
                content = str(turn.get("text", ""))
                caption = turn.get("blip_caption")
                if caption:
                    content = f"{content} [shares a photo: {caption}]".strip()
                if not content.strip():
                    continue
                messages.append(
                    {
                        "role": "user",
                        "name": turn["speaker"],
                        "content": content,
                        "id": turn["dia_id"],
                    }
                )
            sessions.append((key, convo.get(f"{key}_date_time", ""), messages))
        questions = [
            Question(
                conversation=sample["sample_id"],
                text=str(qa["question"]),
                category=int(qa["category"]),
                evidence=parse_evidence(qa.get("evidence", [])),
                answer=None if qa.get("answer") is None else str(qa["answer"]),
            )
            for qa in sample.get("qa", [])
            if qa.get("question")
        ]
        conversations.append(Conversation(sample["sample_id"], sessions, questions))
    return conversations


@dataclass(slots=True)
class CategoryScores:
    count: int = 0
    sums: dict[str, float] = field(default_factory=lambda: defaultdict(float))

    def add(self, values: dict[str, float]) -> None:
        self.count += 1
        for key, value in values.items():
            self.sums[key] += value

    def mean(self, key: str) -> float:
        return self.sums[key] / self.count if self.count else float("nan")


METRICS = (
    "R@1",
    "R@5",
    "R@10",
    "S_any@5",
    "S_any@10",
    "S_all@5",
    "S_all@10",
    "NDCG@10",
)


def score_question(ranked: Sequence[str], evidence: frozenset[str]) -> dict[str, float]:
    relevant = set(evidence)
    sessions = {session_of(e) for e in relevant}
    any5, all5 = session_recall(ranked, sessions, 5, session_of)
    any10, all10 = session_recall(ranked, sessions, 10, session_of)
    return {
        "R@1": recall_at(ranked, relevant, 1),
        "R@5": recall_at(ranked, relevant, 5),
        "R@10": recall_at(ranked, relevant, 10),
        "S_any@5": any5,
        "S_any@10": any10,
        "S_all@5": all5,
        "S_all@10": all10,
        "NDCG@10": ndcg_at(ranked, relevant, 10),
    }


@dataclass(frozen=True, slots=True)
class Variant:
    """One search configuration evaluated on the same store: channels and stage switches."""

    channels: Sequence[str] | None = None
    stages: Mapping[str, Any] | None = None


# Each pipeline stage switched off (or, for opt-in stages, on) against the defaults, plus the
# single-channel baselines: the ablation table of docs/benchmarks.md.
ABLATION: dict[str, Variant] = {
    "defaults": Variant(),
    "fusion = rrf": Variant(stages={"fusion": "rrf"}),
    "no windows": Variant(stages={"windows": False}),
    "no session digests": Variant(stages={"sessions": False}),
    "no entities": Variant(stages={"entities": False}),
    "no dated lift": Variant(stages={"dated": False}),
    "no time stage": Variant(stages={"time": False}),
    "no diversify": Variant(stages={"diversify": False}),
    "no strength": Variant(stages={"strength": False}),
    "no graph": Variant(channels=("dense", "bm25", "facts")),
    "no facts": Variant(channels=("dense", "bm25", "graph")),
    "+ rerank (default chain)": Variant(stages={"rerank": True}),
    "bm25 only": Variant(channels=("bm25",), stages=_PLAIN),
    "dense only": Variant(channels=("dense",), stages=_PLAIN),
}


@dataclass(slots=True)
class LocomoResult:
    by_category: dict[int, CategoryScores]
    overall: CategoryScores
    ingest_turns: int
    ingest_seconds: float
    latencies_ms: list[float]
    indexing_seconds: dict[str, float] = field(default_factory=dict)
    facts: int = 0

    def table(self) -> str:
        header = f"| {'category':<16} | {'n':>4} | " + " | ".join(f"{m:>8}" for m in METRICS) + " |"
        rule = "|" + "|".join("-" * len(cell) for cell in header.split("|")[1:-1]) + "|"
        lines = [header, rule]
        for category in sorted(self.by_category):
            scores = self.by_category[category]
            label = f"{category} {CATEGORY_NAMES.get(category, '?')}"
            lines.append(_row(label, scores))
        lines.append(_row("1-4 overall", self.overall))
        return "\n".join(lines)

    def latency(self, quantile: float) -> float:
        return percentile(self.latencies_ms, quantile)

    def summary(self) -> str:
        rate = self.ingest_turns / self.ingest_seconds if self.ingest_seconds else float("nan")
        steps = self.indexing_seconds
        indexing = sum(steps.values())
        facts_line = (
            f"facts: {self.facts} current cards; extraction + statement embedding "
            f"{steps.get('facts', 0.0):.1f} s of {indexing:.1f} s indexing "
            f"({100 * steps.get('facts', 0.0) / indexing:.1f} %)\n"
            if indexing
            else ""
        )
        return (
            f"ingest: {self.ingest_turns} turns in {self.ingest_seconds:.1f} s "
            f"({rate:.1f} turns/s, indexing included)\n"
            + facts_line
            + f"search: {len(self.latencies_ms)} queries, "
            f"p50 {percentile(self.latencies_ms, 0.5):.1f} ms, "
            f"p95 {percentile(self.latencies_ms, 0.95):.1f} ms"
        )


def _row(label: str, scores: CategoryScores) -> str:
    return (
        f"| {label:<16} | {scores.count:>4} | "
        + " | ".join(f"{scores.mean(m):>8.3f}" for m in METRICS)
        + " |"
    )


def run_locomo(
    path: Path,
    *,
    data_dir: Path | None = None,
    channels: Sequence[str] | None = None,
    limit: int = 10,
    conversations: Sequence[str] | None = None,
    progress: Callable[[str, int], Any] | None = None,
    memory_options: dict[str, Any] | None = None,
) -> LocomoResult:
    """Ingest every conversation into a fresh store and evaluate every question."""
    results = run_locomo_variants(
        path,
        {"main": channels},
        data_dir=data_dir,
        limit=limit,
        conversations=conversations,
        progress=progress,
        memory_options=memory_options,
    )
    return results["main"]


def run_locomo_variants(
    path: Path,
    variants: Mapping[str, Variant | Sequence[str] | None],
    *,
    data_dir: Path | str | None = None,
    limit: int = 10,
    conversations: Sequence[str] | None = None,
    progress: Callable[[str, int], Any] | None = None,
    memory_options: dict[str, Any] | None = None,
) -> dict[str, LocomoResult]:
    """One ingest, several configurations (a channel list or a ``Variant``): same-run numbers
    that compare fairly."""
    configs = {
        name: value if isinstance(value, Variant) else Variant(channels=value)
        for name, value in variants.items()
    }
    corpus = load_locomo(path)
    if conversations:
        corpus = [c for c in corpus if c.sample_id in set(conversations)]
    if not corpus:
        raise ValueError("no LoCoMo conversations selected")
    workdir: Path | str
    if isinstance(data_dir, str) and is_url(data_dir):
        workdir = data_dir
    else:
        workdir = Path(data_dir) if data_dir else Path(tempfile.mkdtemp(prefix="madeleine-locomo-"))
    options = {"background": False, **(memory_options or {})}
    by_category: dict[str, dict[int, CategoryScores]] = {
        name: defaultdict(CategoryScores) for name in variants
    }
    overall = {name: CategoryScores() for name in variants}
    latencies: dict[str, list[float]] = {name: [] for name in variants}
    ingest_turns = 0
    ingest_seconds = 0.0
    with Memory(workdir, **options) as memory:
        for convo in corpus:
            started = time.perf_counter()
            for session_id, date, messages in convo.sessions:
                timestamp = parse_timestamp(date, "session date") if date else None
                memory.add(
                    messages, user_id=convo.sample_id, session_id=session_id, timestamp=timestamp
                )
            memory.index_pending(None if progress is None else (lambda n: progress("index", n)))
            ingest_seconds += time.perf_counter() - started
            ingest_turns += convo.turns
            for question in convo.questions:
                for name, config in configs.items():
                    t0 = time.perf_counter()
                    hits = memory.search(
                        question.text,
                        user_id=convo.sample_id,
                        limit=limit,
                        channels=config.channels,
                        stages=dict(config.stages) if config.stages else None,
                    )
                    latencies[name].append((time.perf_counter() - t0) * 1000)
                    ranked = [source for hit in hits for source in hit.source_ids]
                    scores = score_question(ranked, question.evidence)
                    by_category[name][question.category].add(scores)
                    if question.category in (1, 2, 3, 4):
                        overall[name].add(scores)
                if progress is not None:
                    progress("questions", 1)
        indexing_seconds = memory.stats()["indexing_seconds"]
        facts = sum(len(memory.facts(convo.sample_id)) for convo in corpus)
    return {
        name: LocomoResult(
            dict(by_category[name]),
            overall[name],
            ingest_turns,
            ingest_seconds,
            latencies[name],
            indexing_seconds,
            facts,
        )
        for name in variants
    }
