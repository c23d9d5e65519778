"""Test doubles for the seams where the real part is slow, not unavailable."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np

from madeleine.embed.base import Vectors, normalize_rows

_WORD = re.compile(r"\w+")


class HashingEmbedder:
    """Bag of words hashed into ``dim`` buckets: texts that share words are similar, texts
    that share none are orthogonal. Deterministic and instant, for tests of the pipeline's
    mechanics (not of meaning: use the real embedder for that)."""

    name = "test-hashing"
    similarity_range = (0.0, 1.0)

    def __init__(self, dim: int = 64) -> None:
        self.dim = dim

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        matrix = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.casefold()):
                bucket = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest())
                matrix[row, bucket % self.dim] += 1.0
        return normalize_rows(matrix)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        return self.embed_passages(texts)
