"""Facts as search hits: the supersession and validity filter, calibrated scores, decay.

A fact competes with turns on the same calibrated scale (cosine mapped from the embedder's
fixed range, BM25 as s / (s + ref)), times ``fact_weight``. Current truth by default;
``as_of`` keeps the versions that held at that time; ``include_history`` keeps every version.
Volatile facts decay with the ``fact`` half-life; stable and pinned ones are exempt.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from madeleine.config import Settings
from madeleine.read.lru import UserLRU
from madeleine.sorted_ids import positions
from madeleine.store.facts import FactStore, FactVectors

_CACHED_USERS = 256


@dataclass(frozen=True, slots=True)
class FactQuery:
    user_id: str
    terms: Sequence[str]
    vector: npt.NDArray[np.float32] | None  # None: no dense scoring
    lexical: bool
    fusion: str
    as_of: float | None
    include_history: bool
    time_range: tuple[float, float] | None
    now: float
    decay: bool
    limit: int
    graph: dict[int, float] | None = None  # fact id -> the graph channel's calibrated score


@dataclass(frozen=True, slots=True)
class FactLexical:
    rows: FactVectors
    bm25: npt.NDArray[np.float64] | None  # raw BM25 per row; None: not asked or no terms


@dataclass(frozen=True, slots=True)
class ScoredFact:
    number: int
    score: float
    explain: dict[str, Any]


class FactIndex:
    """Scores one user's facts per query; their vectors are cached until the user's fact stamp
    moves (every change to the user's facts moves it, whichever process made it)."""

    def __init__(
        self, facts: FactStore, settings: Settings, similarity_range: tuple[float, float]
    ) -> None:
        self._facts = facts
        self._settings = settings
        self._low, self._high = similarity_range
        self._cache: UserLRU[tuple[int, FactVectors]] = UserLRU(_CACHED_USERS)

    def rows(self, user_id: str) -> FactVectors:
        generation = self._facts.generation(user_id)
        cached = self._cache.get(user_id)
        if cached is not None and cached[0] == generation:
            return cached[1]
        loaded = self._facts.search_rows(user_id)
        self._cache.put(user_id, (generation, loaded))
        return loaded

    def lexical(self, user_id: str, terms: Sequence[str], enabled: bool) -> FactLexical:
        """The SQL half of a fact search (the rows, BM25): run while the query is embedded."""
        rows = self.rows(user_id)
        size = rows.ids.size
        if not enabled or not terms or size == 0:
            return FactLexical(rows, None)
        raw = np.zeros(size, dtype=np.float64)
        found = self._facts.lexical(user_id, terms, size)
        if found:
            ids = np.fromiter((i for i, _ in found), dtype=np.int64, count=len(found))
            scores = np.fromiter((s for _, s in found), dtype=np.float64, count=len(found))
            at = positions(rows.ids, ids)
            known = at >= 0  # written after the rows were read: skipped
            raw[at[known]] = scores[known]
        return FactLexical(rows, raw)

    def search(self, query: FactQuery, lexical: FactLexical | None = None) -> list[ScoredFact]:
        prepared = lexical or self.lexical(query.user_id, query.terms, query.lexical)
        rows = prepared.rows
        size = rows.ids.size
        if size == 0 or query.limit <= 0:
            return []
        allowed = _valid(rows, query)
        channels: dict[str, tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]] = {}
        if query.vector is not None and rows.matrix.shape[1] == query.vector.shape[0]:
            raw = (rows.matrix @ query.vector).astype(np.float64)
            calibrated = np.clip((raw - self._low) / (self._high - self._low), 0.0, 1.0)
            channels["dense"] = (raw, calibrated)
        if query.lexical and prepared.bm25 is not None:
            raw = prepared.bm25
            channels["bm25"] = (raw, raw / (raw + self._settings.fusion.bm25_reference))
        if not channels:
            return []
        fused = self._fuse(channels, allowed, query.fusion)
        graph = np.zeros(size, dtype=np.float64)
        if query.graph:
            reached = np.fromiter(query.graph, dtype=np.int64, count=len(query.graph))
            at = positions(rows.ids, reached)
            present = at >= 0
            scores = np.fromiter(query.graph.values(), dtype=np.float64, count=reached.size)
            graph[at[present]] = scores[present]
            fused += self._settings.graph.weight * graph  # added, as for passages
        fused *= self._settings.facts.weight
        factor = None
        half_life = self._settings.stages.half_life_days.get("fact")
        if query.decay and half_life:
            moment = np.where(np.isnan(rows.valid_from), rows.recorded_at, rows.valid_from)
            age_days = np.maximum(query.now - moment, 0.0) / 86_400.0
            factor = np.where(rows.exempt, 1.0, np.power(0.5, age_days / half_life))
            fused *= factor
        fused[~allowed] = 0.0
        positive = int((fused > 0).sum())
        take = min(positive, query.limit)
        if take <= 0:
            return []
        best = np.argpartition(-fused, take - 1)[:take]
        best = best[np.argsort(-fused[best], kind="stable")]
        results: list[ScoredFact] = []
        for row in best.tolist():
            explain: dict[str, Any] = {
                "fusion": query.fusion,
                "channels": {
                    name: {
                        "rank": int((raw[allowed] > raw[row]).sum()) + 1,
                        "score": round(float(raw[row]), 6),
                        "calibrated": round(float(cal[row]), 6),
                    }
                    for name, (raw, cal) in channels.items()
                    if raw[row] > 0
                },
                "fact_weight": self._settings.facts.weight,
            }
            if graph[row] > 0:
                explain["channels"]["graph"] = {"calibrated": round(float(graph[row]), 6)}
            if factor is not None:
                explain["decay"] = {
                    "factor": round(float(factor[row]), 6),
                    "exempt": bool(rows.exempt[row]),
                }
            results.append(ScoredFact(int(rows.ids[row]), float(fused[row]), explain))
        return results

    def _fuse(
        self,
        channels: dict[str, tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]],
        allowed: npt.NDArray[np.bool_],
        fusion: str,
    ) -> npt.NDArray[np.float64]:
        scores = np.zeros(allowed.size, dtype=np.float64)
        if fusion == "rrf":
            k = self._settings.fusion.rrf_k
            for raw, _ in channels.values():
                present = np.flatnonzero(allowed & (raw > 0))
                order = present[np.argsort(-raw[present], kind="stable")]
                scores[order] += 1.0 / (k + np.arange(1, order.size + 1))
            return scores / (len(channels) / (k + 1))
        weights = {
            "dense": self._settings.fusion.dense_weight,
            "bm25": 1.0 - self._settings.fusion.dense_weight,
        }
        norm = sum(weights[name] for name in channels) or 1.0
        for name, (_, calibrated) in channels.items():
            scores += weights[name] / norm * calibrated
        return scores


def _valid(rows: FactVectors, query: FactQuery) -> npt.NDArray[np.bool_]:
    """The supersession and validity filter, the same rule as ``Memory.facts``."""
    opens_before = np.isnan(rows.valid_from)
    ends_never = np.isnan(rows.valid_to)
    if query.as_of is not None:
        allowed = (opens_before | (rows.valid_from <= query.as_of)) & (
            ends_never | (rows.valid_to > query.as_of)
        )
    elif query.include_history:
        allowed = np.ones(rows.ids.size, dtype=bool)
    else:
        allowed = ~rows.superseded
    if query.time_range is not None:
        start, end = query.time_range
        allowed &= opens_before | (rows.valid_from <= end)
        allowed &= ends_never | (rows.valid_to >= start)
    return allowed
