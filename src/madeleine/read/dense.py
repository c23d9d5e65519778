"""Dense recall: exact cosine search over a cached per-user matrix, ANN (usearch) when large."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from madeleine.read.fusion import ChannelHit
from madeleine.store.base import UserVectors
from madeleine.store.sqlite import SQLiteStore, scope_token

log = logging.getLogger(__name__)


@dataclass(slots=True)
class _UserCache:
    generation: tuple[int, int]
    ids: npt.NDArray[np.int64]
    times: npt.NDArray[np.float64]
    matrix: npt.NDArray[np.float32]
    ann: Any = None
    ann_ids: npt.NDArray[np.int64] | None = None
    ann_generation: tuple[int, int] | None = None


class DenseIndex:
    """Keeps each searched user's vectors in memory, refreshed by the store's change counters.

    Appends load only the new rows; a deletion or re-index reloads the user. The store stays
    the source of truth, so the cache and the ANN files can always be thrown away.
    """

    def __init__(self, store: SQLiteStore, ann_dir: Path, ann_threshold: int) -> None:
        self._store = store
        self._ann_dir = ann_dir
        self._ann_threshold = ann_threshold
        self._cache: dict[str, _UserCache] = {}
        self._lock = threading.Lock()

    def forget(self, user_id: str) -> None:
        with self._lock:
            self._cache.pop(user_id, None)
        for path in self._ann_dir.glob(scope_token(user_id) + ".*"):
            path.unlink(missing_ok=True)

    def size(self, user_id: str) -> int:
        return int(self._refresh(user_id).ids.size)

    def search(
        self,
        user_id: str,
        query: npt.NDArray[np.float32],
        limit: int,
        time_range: tuple[float, float] | None,
    ) -> list[ChannelHit]:
        cache = self._refresh(user_id)
        if cache.ids.size == 0:
            return []
        if cache.ids.size >= self._ann_threshold and time_range is None:
            return self._ann_search(user_id, cache, query, limit)
        scores = cache.matrix @ query
        if time_range is not None:
            outside = (cache.times < time_range[0]) | (cache.times > time_range[1])
            scores = np.where(outside, -np.inf, scores)
        count = min(limit, int(np.isfinite(scores).sum()))
        if count <= 0:
            return []
        top = (
            np.argpartition(-scores, count - 1)[:count]
            if count < scores.size
            else np.arange(scores.size)
        )
        top = top[np.argsort(-scores[top], kind="stable")][:count]
        return [ChannelHit(int(cache.ids[i]), float(scores[i])) for i in top]

    def _refresh(self, user_id: str) -> _UserCache:
        generation = self._store.user_generation(user_id)
        with self._lock:
            cache = self._cache.get(user_id)
            if cache is not None and cache.generation == generation:
                return cache
            if cache is not None and cache.generation[1] == generation[1] and cache.ids.size:
                fresh = self._store.user_vectors(user_id, after_id=int(cache.ids[-1]))
                cache = _UserCache(
                    generation,
                    np.concatenate([cache.ids, fresh.ids]),
                    np.concatenate([cache.times, fresh.times]),
                    np.vstack([cache.matrix, fresh.matrix]) if fresh.ids.size else cache.matrix,
                    cache.ann,
                    cache.ann_ids,
                    cache.ann_generation,
                )
            else:
                loaded: UserVectors = self._store.user_vectors(user_id)
                cache = _UserCache(generation, loaded.ids, loaded.times, loaded.matrix)
            self._cache[user_id] = cache
            return cache

    def _ann_search(
        self, user_id: str, cache: _UserCache, query: npt.NDArray[np.float32], limit: int
    ) -> list[ChannelHit]:
        index = self._ann_for(user_id, cache)
        matches = index.search(query, limit)
        keys = np.asarray(matches.keys, dtype=np.int64)
        distances = np.asarray(matches.distances, dtype=np.float32)
        return [ChannelHit(int(k), float(1.0 - d)) for k, d in zip(keys, distances, strict=True)]

    def _ann_for(self, user_id: str, cache: _UserCache) -> Any:
        """Bring the user's HNSW index in line with the cache: add new ids, drop removed ones."""
        from usearch.index import Index

        with self._lock:
            if cache.ann is not None and cache.ann_generation == cache.generation:
                return cache.ann
            index = cache.ann
            path = self._ann_dir / f"{scope_token(user_id)}.usearch"
            if index is None:
                if path.exists():
                    try:
                        index = Index.restore(str(path), view=False)
                    except Exception as exc:
                        log.warning("ANN index %s unreadable (%s); rebuilding it", path, exc)
                        index = None
                if index is None or index.ndim != cache.matrix.shape[1]:
                    index = Index(ndim=cache.matrix.shape[1], metric="cos", dtype="f32")
                known = (
                    np.asarray(index.keys, dtype=np.int64) if len(index) else np.zeros(0, np.int64)
                )
            else:
                known = cache.ann_ids if cache.ann_ids is not None else np.zeros(0, np.int64)
            stale = np.setdiff1d(known, cache.ids, assume_unique=True)
            for key in stale:
                index.remove(int(key))
            missing = ~np.isin(cache.ids, known, assume_unique=True)
            if missing.any():
                log.info("adding %d vectors to the ANN index of a user", int(missing.sum()))
                index.add(cache.ids[missing], cache.matrix[missing])
            if missing.any() or stale.size:
                self._ann_dir.mkdir(parents=True, exist_ok=True)
                index.save(str(path))
            cache.ann = index
            cache.ann_ids = cache.ids.copy()
            cache.ann_generation = cache.generation
            return index
