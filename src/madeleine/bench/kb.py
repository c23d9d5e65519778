"""``madeleine bench kb korquad PATH``: question → paragraph retrieval on KorQuAD v1.

Each paragraph becomes a document (its article title as title) of one collection, ingested
through ``KnowledgeBase.add_document`` like any user's documents; each question must find
its paragraph. One ingest serves every row: the pipeline, the pipeline with the dense
channel on every query (no lexical cascade), the pipeline without Korean morphology
(character bigrams instead of MeCab-ko, same chunks), BM25 alone (MeCab-ko and
whitespace tokens) and dense alone. A row's recall@k counts distinct documents among its
first hits; search time is the whole ``search_kb`` call, query embedding included.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from madeleine.kb.records import KBSnapshot
from madeleine.kb.search import KBRequest, KnowledgeSearcher
from madeleine.store.ports import KnowledgeRepository
from madeleine.text.analyzer import Analyzer, MultilingualAnalyzer

Progress = Callable[[str, int], None]
COLLECTION = "korquad"


@dataclass(slots=True)
class KBRow:
    name: str
    recall: dict[int, float]
    mrr: float
    p50_ms: float
    p95_ms: float


@dataclass(slots=True)
class KBResult:
    documents: int
    questions: int
    chunks: int
    ingest_seconds: float
    embed_seconds: float
    split_questions: int
    rows: list[KBRow]

    def table(self) -> str:
        lines = [
            f"KorQuAD v1: {self.documents} paragraphs as documents ({self.chunks} chunks), "
            f"{self.questions} questions ({self.split_questions} split into parts)",
            f"ingest: add_document {self.ingest_seconds:.1f} s, embedding "
            f"{self.embed_seconds:.1f} s",
            "",
            "| run | R@1 | R@5 | R@10 | MRR | search p50 | p95 |",
            "|---|---|---|---|---|---|---|",
        ]
        for row in self.rows:
            lines.append(
                f"| {row.name} | {row.recall[1]:.3f} | {row.recall[5]:.3f} | "
                f"{row.recall[10]:.3f} | {row.mrr:.3f} | {row.p50_ms:.1f} ms | "
                f"{row.p95_ms:.1f} ms |"
            )
        return "\n".join(lines)


class _Whitespace:
    """Tokens split on spaces, lower-cased: the baseline a Korean analyzer must beat."""

    name = "whitespace"

    def terms(self, text: str) -> list[str]:
        return [t.strip(".,?!()[]\"'“”‘’").lower() for t in text.split() if t.strip()]

    def proper_nouns(self, text: str) -> list[str]:
        return []


class _Reanalyzed:
    """The store's KB seen through another analyzer: same chunks, terms analyzed again."""

    def __init__(self, repository: KnowledgeRepository, analyzer: Analyzer) -> None:
        self._repo = repository
        self._analyzer = analyzer

    def __getattr__(self, name: str) -> Any:
        return getattr(self._repo, name)

    def snapshot(self, dim: int) -> KBSnapshot:
        snapshot = self._repo.snapshot(dim)
        texts = self._repo.chunks([int(i) for i in snapshot.chunk_ids])
        terms = []
        for chunk_id, version in zip(snapshot.chunk_ids, snapshot.chunk_version, strict=True):
            text, _, section = texts[int(chunk_id)]
            title = snapshot.version_title[int(version)]
            terms.append(" ".join(self._analyzer.terms(f"{title}\n{' '.join(section)}\n{text}")))
        return replace(snapshot, chunk_terms=terms)


def load_korquad(path: Path) -> tuple[list[tuple[str, str, str]], list[tuple[str, str]]]:
    """([(doc id, title, paragraph)], [(question, doc id)])."""
    data = json.loads(path.read_text(encoding="utf-8"))
    documents: list[tuple[str, str, str]] = []
    questions: list[tuple[str, str]] = []
    for a, article in enumerate(data["data"]):
        for p, paragraph in enumerate(article["paragraphs"]):
            doc_id = f"{a}-{p}"
            documents.append((doc_id, article["title"], paragraph["context"]))
            questions += [(qa["question"], doc_id) for qa in paragraph["qas"]]
    return documents, questions


def run_korquad(
    path: Path,
    *,
    limit_questions: int | None = None,
    workdir: Path | None = None,
    progress: Progress | None = None,
) -> KBResult:
    from madeleine.api import Memory
    from madeleine.kb.decompose import decompose

    documents, questions = load_korquad(path)
    if limit_questions is not None:
        questions = questions[:limit_questions]
    tick = progress or (lambda stage, n: None)
    with tempfile.TemporaryDirectory() as scratch:
        directory = workdir or Path(scratch)
        with Memory(directory, background=False) as mem:
            engine = mem._open()
            kb = mem.kb(COLLECTION, description="KorQuAD v1 paragraphs (Korean Wikipedia)")
            started = time.perf_counter()
            for doc_id, title, text in documents:
                kb.add_document(text, doc_id=doc_id, title=title, format="text")
                tick("ingest", 1)
            ingest = time.perf_counter() - started
            started = time.perf_counter()
            mem.index_pending(lambda n: tick("embed", n))
            embedded = time.perf_counter() - started
            chunks = engine.store.kb.counts()["kb_chunks"]
            settings = mem.settings.kb
            embedder = engine.embedder

            def searcher(
                analyzer: Analyzer | None, dense_always: bool = False
            ) -> KnowledgeSearcher:
                repo = (
                    engine.store.kb if analyzer is None else _Reanalyzed(engine.store.kb, analyzer)
                )
                return KnowledgeSearcher(
                    repo,
                    analyzer or engine.analyzer,
                    engine.searcher.query_vector,
                    embedder.dim,
                    embedder.similarity_range,
                    settings.model_copy(update={"dense_margin": 0.0}) if dense_always else settings,
                )

            runs: list[tuple[str, KnowledgeSearcher, tuple[str, ...]]] = [
                ("Madeleine pipeline (MeCab-ko + e5, fused)", engine.knowledge, ("bm25", "dense")),
                (
                    "pipeline, e5 on every query (no lexical cascade)",
                    searcher(None, dense_always=True),
                    ("bm25", "dense"),
                ),
                (
                    "pipeline without morphology (bigrams + e5)",
                    searcher(MultilingualAnalyzer(morphology=False)),
                    ("bm25", "dense"),
                ),
                ("BM25 alone, MeCab-ko terms", engine.knowledge, ("bm25",)),
                ("BM25 alone, whitespace tokens", searcher(_Whitespace()), ("bm25",)),
                ("dense alone (e5)", engine.knowledge, ("dense",)),
            ]
            rows = []
            for name, run, channels in runs:
                engine.searcher.forget_queries()
                run.index()  # built before the clock starts, as in a warm server
                rows.append(_measure(name, run, channels, questions, tick))
    split = sum(len(decompose(q)) > 1 for q, _ in questions)
    return KBResult(len(documents), len(questions), chunks, ingest, embedded, split, rows)


def _measure(
    name: str,
    searcher: KnowledgeSearcher,
    channels: tuple[str, ...],
    questions: Sequence[tuple[str, str]],
    tick: Progress,
) -> KBRow:
    ranks: list[int | None] = []
    times: list[float] = []
    for question, doc_id in questions:
        request = KBRequest(
            query=question,
            principal=None,
            collections=None,
            limit=30,
            moment=time.time(),
            channels=channels,
        )
        started = time.perf_counter()
        hits = searcher.search(request)
        times.append((time.perf_counter() - started) * 1000)
        seen = list(dict.fromkeys(h.doc_id for h in hits))
        ranks.append(seen.index(doc_id) + 1 if doc_id in seen else None)
        tick("search", 1)
    count = len(questions) or 1
    recall = {k: sum(r is not None and r <= k for r in ranks) / count for k in (1, 5, 10)}
    mrr = sum(1 / r for r in ranks if r is not None) / count
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))] if ordered else 0.0
    return KBRow(name, recall, mrr, statistics.median(times) if times else 0.0, p95)
