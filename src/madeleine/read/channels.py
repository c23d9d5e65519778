"""Recall channels: each proposes candidates on its own, and fusion decides.

A ``Channel`` recalls over the user's passages (dense, BM25, graph) and feeds fusion; a
``MergedChannel`` scores records of its own (facts; later knowledge-base chunks) and merges
them into the passage ranking by their calibrated score. ``start`` begins work that can
overlap the query embedding; channels that need the query vector wait for it in ``recall``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from madeleine.embed.base import Vectors
from madeleine.read.dense import DenseIndex, UserRows
from madeleine.read.graph import GraphIndex, GraphRecall
from madeleine.read.query import QueryAnalysis
from madeleine.read.request import SearchRequest
from madeleine.records import Hit
from madeleine.store.ports import EpisodeIndex
from madeleine.store.records import StoredEpisode


@dataclass(slots=True)
class Recall:
    """One channel's candidates: rows (positions in ``UserRows``) best first, raw scores
    and scores calibrated to 0–1 against a fixed reference (never batch min-max)."""

    rows: npt.NDArray[np.int64]
    raw: npt.NDArray[np.float32]
    calibrated: npt.NDArray[np.float32]


@dataclass(slots=True)
class Query:
    """One search in flight: what every channel and stage reads."""

    request: SearchRequest
    analysis: QueryAnalysis
    rows: UserRows
    depth: int  # candidates each channel contributes
    vector: Future[Vectors] | None  # the query embedding, computed on a worker thread
    graph: GraphRecall | None = None  # the graph walk, once run: its fact scores and paths
    prepared: dict[str, Any] = field(default_factory=dict)  # a channel's work from ``start``
    loaded: dict[int, StoredEpisode] = field(default_factory=dict)  # episodes read so far

    def episodes(self, store: EpisodeIndex, ids: Sequence[int]) -> dict[int, StoredEpisode]:
        """Episodes by id, each read from the store at most once per query (the dated and
        rerank stages and the hydration of hits often want the same ones)."""
        missing = [i for i in ids if i not in self.loaded]
        if missing:
            self.loaded.update(store.episodes(missing))
        return {i: self.loaded[i] for i in ids if i in self.loaded}

    @property
    def passage_range(self) -> tuple[float, float] | None:
        """The time range passages must fall in: the query's, ended at ``as_of`` when
        given (what had been said by then)."""
        request = self.request
        if request.as_of is None:
            return request.time_range
        start, end = request.time_range or (float("-inf"), float("inf"))
        return start, min(end, request.as_of)

    def query_vector(self) -> npt.NDArray[np.float32] | None:
        return None if self.vector is None else self.vector.result()[0]


class Channel(Protocol):
    name: str
    waits_for_vector: bool

    def start(self, query: Query) -> None: ...

    def recall(self, query: Query, earlier: Mapping[str, Recall]) -> Recall: ...


class MergedChannel(Protocol):
    name: str

    def start(self, query: Query) -> None: ...

    def merge(self, query: Query, hits: list[Hit]) -> list[Hit]: ...


class BM25Channel:
    """BM25 over analyzed terms (Korean morphology, English stems), scoped to the user."""

    name = "bm25"
    waits_for_vector = False

    def __init__(self, store: EpisodeIndex, reference: float) -> None:
        self._store = store
        self._reference = reference

    def start(self, query: Query) -> None:
        return None

    def recall(self, query: Query, earlier: Mapping[str, Recall]) -> Recall:
        found = self._store.lexical_search(
            query.request.user_id, query.analysis.terms, query.depth, query.passage_range
        )
        ids = np.fromiter((i for i, _ in found), dtype=np.int64, count=len(found))
        raw = np.fromiter((s for _, s in found), dtype=np.float32, count=len(found))
        rows = query.rows.rows_of(ids)
        keep = rows >= 0  # indexed after the rows were read: picked up next query
        calibrated = (raw / (raw + self._reference)).astype(np.float32)
        return Recall(rows[keep], raw[keep], calibrated[keep])


class DenseChannel:
    """Cosine similarity to the query vector, mapped linearly from the embedder's range."""

    name = "dense"
    waits_for_vector = True

    def __init__(self, dense: DenseIndex, similarity_range: tuple[float, float]) -> None:
        self._dense = dense
        self._low, self._high = similarity_range

    def start(self, query: Query) -> None:
        return None

    def recall(self, query: Query, earlier: Mapping[str, Recall]) -> Recall:
        vector = query.query_vector()
        assert vector is not None, "the dense channel runs only with a query vector"
        low, high = self._low, self._high
        rows, sims = self._dense.scores(
            query.rows, query.request.user_id, vector, query.depth, query.passage_range, floor=low
        )
        calibrated = np.clip((sims - low) / (high - low), 0.0, 1.0).astype(np.float32)
        return Recall(rows, sims, calibrated)


class GraphChannel:
    """Personalized PageRank over the entity–passage–fact graph from the query's seeds.

    Seeded by the entities the query names, the walk needs no vector: it runs at ``start``,
    on this thread, while the query is embedded. When the names find too few entities the
    seeds come from the query vector's similarity to entity names: the walk then starts on
    the embedding thread as soon as the vector is there, while this thread runs BM25 and the
    stage lookups. Seeded by the best dense hits too (``passage_seeds``), it has to wait
    for them."""

    name = "graph"
    waits_for_vector = True

    def __init__(
        self, graph: GraphIndex, pool: ThreadPoolExecutor, dim: int, passage_seeds: int
    ) -> None:
        self._graph = graph
        self._pool = pool
        self._dim = dim
        self._passage_seeds = passage_seeds

    def _seeded_by_dense(self, query: Query) -> bool:
        return bool(self._passage_seeds) and "dense" in query.request.channels

    def start(self, query: Query) -> None:
        if self._seeded_by_dense(query):
            return
        pending = query.vector
        if pending is None or pending.done() or not self._needs_vector(query):
            walked: Future[GraphRecall] = Future()
            walked.set_result(self.walk(query, None))
            query.prepared[self.name] = walked
        else:
            query.prepared[self.name] = self._pool.submit(self.walk, query, None)

    def _needs_vector(self, query: Query) -> bool:
        return self._graph.needs_vector(
            query.request.user_id,
            query.rows,
            self._dim,
            query.analysis.rewritten or query.request.query,
            query.analysis.entities,
        )

    def recall(self, query: Query, earlier: Mapping[str, Recall]) -> Recall:
        pending: Future[GraphRecall] | None = query.prepared.pop(self.name, None)
        if pending is not None:
            graph = pending.result()
        else:
            dense = earlier.get("dense")
            seeds = None
            if dense is not None and self._passage_seeds:
                seeds = (dense.rows[: self._passage_seeds], dense.calibrated[: self._passage_seeds])
            graph = self.walk(query, seeds)
        query.graph = graph
        return Recall(graph.rows, graph.raw, graph.calibrated)

    def walk(
        self,
        query: Query,
        passage_seeds: tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]] | None,
    ) -> GraphRecall:
        return self._graph.recall(
            query.request.user_id,
            query.rows,
            query.analysis.rewritten or query.request.query,  # the user's own name seeds nothing
            query.analysis.entities,
            query.query_vector,  # read only when the query's names seed too little
            self._dim,
            passage_seeds,
            excluded=query.analysis.user_names,
        )
