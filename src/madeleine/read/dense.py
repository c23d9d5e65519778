"""Dense recall: exact cosine search over a cached per-user matrix, the store's ANN index
when the user is large — or, for a store that searches vectors itself (PostgreSQL), the
store's query, with only the user's row metadata cached here."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from madeleine.read.shared import decode_rows, encode_rows, through
from madeleine.sorted_ids import positions
from madeleine.store.ports import DenseSearch, EpisodeIndex, SharedCache, VectorIndex
from madeleine.store.records import UserVectors


@dataclass(slots=True)
class UserRows:
    """One user's episodes as parallel arrays (ascending episode id), with session neighbours.

    ``prev``/``next`` give the row of the neighbouring turn in the same session (-1 if none);
    ``session`` indexes into ``session_names``.
    """

    generation: tuple[int, int]
    ids: npt.NDArray[np.int64]
    times: npt.NDArray[np.float64]
    matrix: npt.NDArray[np.float32]
    session_names: list[str]
    session: npt.NDArray[np.int64]
    prev: npt.NDArray[np.int64]
    next: npt.NDArray[np.int64]
    kinds: npt.NDArray[np.str_]
    pinned: npt.NDArray[np.bool_]
    session_index: dict[str, int] = field(default_factory=dict)  # name -> position
    # where the vectors are when ``matrix`` has no columns (they stayed in the store)
    fetch: DenseSearch | None = None

    def rows_of(self, episode_ids: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Row positions of episode ids (ids are ascending); -1 where an id is unknown."""
        return positions(self.ids, episode_ids)

    def row_vectors(self, rows: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        """The vectors of these rows: from the cached matrix, or asked of the store."""
        if self.fetch is None or self.matrix.shape[1]:
            return self.matrix[rows]
        return self.fetch.vectors(self.ids[rows])


def _neighbours(
    sessions: list[str], times: npt.NDArray[np.float64], ids: npt.NDArray[np.int64]
) -> tuple[list[str], npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    names = list(dict.fromkeys(sessions))
    index = {name: i for i, name in enumerate(names)}
    session = np.fromiter((index[s] for s in sessions), dtype=np.int64, count=len(sessions))
    order = np.lexsort((ids, times, session))
    prev = np.full(len(sessions), -1, dtype=np.int64)
    nxt = np.full(len(sessions), -1, dtype=np.int64)
    if order.size > 1:
        same = session[order[1:]] == session[order[:-1]]
        prev[order[1:][same]] = order[:-1][same]
        nxt[order[:-1][same]] = order[1:][same]
    return names, session, prev, nxt


def _rows(
    generation: tuple[int, int], loaded: UserVectors, fetch: DenseSearch | None = None
) -> UserRows:
    names, session, prev, nxt = _neighbours(loaded.sessions, loaded.times, loaded.ids)
    return UserRows(
        generation,
        loaded.ids,
        loaded.times,
        loaded.matrix,
        names,
        session,
        prev,
        nxt,
        np.asarray(loaded.kinds, dtype=np.str_),
        loaded.pinned,
        {name: i for i, name in enumerate(names)},
        fetch,
    )


class DenseIndex:
    """Keeps each searched user's vectors in memory, refreshed by the store's change counters.

    Appends load only the new rows; a deletion or re-index reloads the user. The store stays
    the source of truth, so the cache and the ANN files can always be thrown away.
    """

    def __init__(
        self,
        store: EpisodeIndex,
        ann: VectorIndex,
        in_store: DenseSearch | None = None,
        shared: SharedCache | None = None,
    ) -> None:
        self._store = store
        # only row metadata is shared (when the store searches vectors itself): a user's
        # vectors never leave the database
        self._shared = shared if in_store is not None else None
        self._ann = ann
        self._in_store = in_store  # the store searches vectors itself: none are loaded here
        self._cache: dict[str, UserRows] = {}
        self._lock = threading.Lock()

    def forget(self, user_id: str) -> None:
        """Drop the user's cached rows (the user was erased: counters restart from zero)."""
        with self._lock:
            self._cache.pop(user_id, None)

    def follow(self, user_ids: set[str]) -> None:
        """After an ingest: refresh the rows of these users when they are large enough for
        the ANN index, and bring their index in line (the first search then finds it built).
        Small users are left to their next search."""
        if self._in_store is not None:
            return  # the store's own index follows every write
        for user_id in user_ids:
            with self._lock:
                cached = self._cache.get(user_id)
            size = cached.ids.size if cached is not None else self._store.vector_count(user_id)
            if size < self._ann.threshold:
                continue
            rows = self.rows(user_id)
            if rows.ids.size >= self._ann.threshold:
                self._ann.sync(user_id, rows.generation, rows.ids, rows.matrix)

    def size(self, user_id: str) -> int:
        return int(self.rows(user_id).ids.size)

    def scores(
        self,
        cache: UserRows,
        user_id: str,
        query: npt.NDArray[np.float32],
        depth: int,
        time_range: tuple[float, float] | None,
        floor: float | None = None,
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """(rows, cosine scores) of the dense channel's candidates, best first.

        Exact search scores every row (a matrix-vector product) and returns the top ``depth``,
        plus every further row above ``floor``; above the ANN threshold the HNSW index
        returns the top ``depth`` only.
        """
        empty = (np.zeros(0, np.int64), np.zeros(0, np.float32))
        if cache.ids.size == 0:
            return empty
        if self._in_store is not None:
            exact = cache.ids.size < self._ann.threshold or time_range is not None
            ids, sims = self._in_store.nearest(user_id, query, depth, time_range, floor, exact)
            rows = cache.rows_of(ids)
            keep = rows >= 0  # an episode indexed after the rows were read waits
            return rows[keep], sims[keep]
        if cache.ids.size >= self._ann.threshold and time_range is None:
            keys, sims = self._ann.search(
                user_id, cache.generation, cache.ids, cache.matrix, query, depth
            )
            rows = cache.rows_of(keys)
            keep = rows >= 0
            return rows[keep], sims[keep]
        scores = cache.matrix @ query
        if time_range is not None:
            outside = (cache.times < time_range[0]) | (cache.times > time_range[1])
            scores = np.where(outside, -np.inf, scores).astype(np.float32)
        count = min(depth, int(np.isfinite(scores).sum()))
        if floor is not None:
            count = max(count, int((scores > floor).sum()))
        if count <= 0:
            return empty
        top = (
            np.argpartition(-scores, count - 1)[:count]
            if count < scores.size
            else np.arange(scores.size)
        )
        top = top[np.argsort(-scores[top], kind="stable")]
        return top.astype(np.int64), scores[top]

    def rows(self, user_id: str) -> UserRows:
        """The user's current rows, reloaded only when the store says they changed."""
        generation = self._store.user_generation(user_id)
        with self._lock:
            cache = self._cache.get(user_id)
            if cache is not None and cache.generation == generation:
                return cache
            loads = self._in_store is None
            if cache is not None and cache.generation[1] == generation[1] and cache.ids.size:
                fresh = self._store.user_vectors(
                    user_id, after_id=int(cache.ids[-1]), with_vectors=loads
                )
                merged = UserVectors(
                    np.concatenate([cache.ids, fresh.ids]),
                    np.concatenate([cache.times, fresh.times]),
                    np.vstack([cache.matrix, fresh.matrix]) if fresh.ids.size else cache.matrix,
                    [cache.session_names[i] for i in cache.session] + fresh.sessions,
                    [str(k) for k in cache.kinds] + fresh.kinds,
                    np.concatenate([cache.pinned, fresh.pinned]),
                )
                cache = _rows(generation, merged, self._in_store)
            else:
                loaded = through(
                    self._shared,
                    "rows",
                    user_id,
                    f"{generation[0]}.{generation[1]}",
                    lambda: self._store.user_vectors(user_id, with_vectors=loads),
                    encode_rows,
                    decode_rows,
                )
                cache = _rows(generation, loaded, self._in_store)
            self._cache[user_id] = cache
            return cache
