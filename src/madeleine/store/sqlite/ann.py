"""Approximate nearest neighbours for large users: one usearch HNSW file per user.

The vectors' source of truth is the store; an index file is a cache that can always be
thrown away. It is brought in line with the rows it is asked about (new ids added, removed
ids dropped) and saved after each change, so the next process loads instead of rebuilding.
"""

from __future__ import annotations

import logging
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from madeleine.store.private import private_directory, tighten_existing
from madeleine.store.sqlite.lexical import scope_token

log = logging.getLogger(__name__)


@dataclass(slots=True)
class _Loaded:
    index: Any
    ids: npt.NDArray[np.int64]
    generation: tuple[int, int]
    unsaved: int = 0  # changes since the file was written


class UsearchFiles:
    """``threshold``: a user's vector count from which the dense channel asks this index
    instead of scanning every vector."""

    def __init__(self, directory: Path, threshold: int) -> None:
        self.directory = directory
        self.threshold = threshold
        self._loaded: dict[str, _Loaded] = {}
        self._lock = threading.Lock()

    def search(
        self,
        user_id: str,
        generation: tuple[int, int],
        ids: npt.NDArray[np.int64],
        matrix: npt.NDArray[np.float32],
        query: npt.NDArray[np.float32],
        limit: int,
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """(ids, cosine similarities) of the ``limit`` nearest rows, best first."""
        matches = self._index_for(user_id, generation, ids, matrix).search(query, limit)
        keys = np.asarray(matches.keys, dtype=np.int64)
        distances = np.asarray(matches.distances, dtype=np.float32)
        return keys, (1.0 - distances).astype(np.float32)

    def sync(
        self,
        user_id: str,
        generation: tuple[int, int],
        ids: npt.NDArray[np.int64],
        matrix: npt.NDArray[np.float32],
    ) -> None:
        """Bring the user's index in line with the rows now (the indexer calls this after
        committing, so the first search does not build the whole index)."""
        self._index_for(user_id, generation, ids, matrix)

    def flush(self) -> None:
        """Write every index with unsaved changes (on close)."""
        with self._lock:
            for user_id, loaded in self._loaded.items():
                if loaded.unsaved:
                    self._save(user_id, loaded)

    def _save(self, user_id: str, loaded: _Loaded) -> None:
        private_directory(self.directory)
        path = self.directory / f"{scope_token(user_id)}.usearch"
        partial = path.with_suffix(".usearch.tmp")
        loaded.index.save(str(partial))
        tighten_existing(partial)  # the user's vectors: owner-only, like the database
        partial.replace(path)  # a crash mid-write leaves the previous file, never half of one
        loaded.unsaved = 0

    def forget(self, user_id: str) -> None:
        with self._lock:
            self._loaded.pop(user_id, None)
            for path in self.directory.glob(scope_token(user_id) + ".*"):
                path.unlink(missing_ok=True)

    def clear(self) -> None:
        """Every user's index (the vectors are being rebuilt)."""
        with self._lock:
            self._loaded.clear()
            shutil.rmtree(self.directory, ignore_errors=True)

    def _index_for(
        self,
        user_id: str,
        generation: tuple[int, int],
        ids: npt.NDArray[np.int64],
        matrix: npt.NDArray[np.float32],
    ) -> Any:
        """Bring the user's HNSW index in line with the rows: add new ids, drop removed ones."""
        from usearch.index import Index

        with self._lock:
            loaded = self._loaded.get(user_id)
            if loaded is not None and loaded.generation == generation:
                return loaded.index
            path = self.directory / f"{scope_token(user_id)}.usearch"
            if loaded is None:
                index = None
                if path.exists():
                    try:
                        index = Index.restore(str(path), view=False)
                    except Exception as exc:
                        log.warning("ANN index %s unreadable (%s); rebuilding it", path, exc)
                        index = None
                if index is None or index.ndim != matrix.shape[1]:
                    index = Index(ndim=matrix.shape[1], metric="cos", dtype="f32")
                known = (
                    np.asarray(index.keys, dtype=np.int64) if len(index) else np.zeros(0, np.int64)
                )
            else:
                index, known = loaded.index, loaded.ids
            stale = np.setdiff1d(known, ids, assume_unique=True)
            for key in stale:
                index.remove(int(key))
            missing = ~np.isin(ids, known, assume_unique=True)
            if missing.any():
                log.info("adding %d vectors to the ANN index of a user", int(missing.sum()))
                index.add(ids[missing], matrix[missing])
            changes = int(missing.sum()) + int(stale.size)
            unsaved = changes + (0 if loaded is None else loaded.unsaved)
            current = _Loaded(index, ids.copy(), generation, unsaved)
            self._loaded[user_id] = current
            # written when a quarter of it is new since the last write (and on close): the
            # file is a cache, so what a crash loses is re-added from the store next time
            if unsaved and unsaved * 4 >= len(index):
                self._save(user_id, current)
            return index
