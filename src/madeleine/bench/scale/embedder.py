"""A stand-in embedder that gives synthetic turns pooled vectors, so bulk ingest skips embedding."""

from __future__ import annotations

import re
import zlib
from collections.abc import Mapping, Sequence

import numpy as np

from madeleine.embed.base import Embedder, Vectors, normalize_rows

_DATED_PREFIX = re.compile(r"^\[\d{1,2} [^\]\d]+ \d{4}\] ")
_REPLYING = "\n(replying to "


class PooledEmbedder:
    """The real embedder's identity with pooled passage vectors: base vector + seeded noise.

    It presents the real embedder's ``name``/``dim``/``similarity_range`` (the store binds the
    name) and embeds queries for real. A passage is matched to its base by parsing the episode
    text ("[8 May 2023] Speaker: text\\n(replying to …)") and looking the body up in
    ``base_of``; anything unknown (planted facts, foreign text) is embedded for real. Until
    ``set_pool`` is called, or with ``passthrough`` set, every passage is embedded for real.
    """

    def __init__(
        self,
        real: Embedder,
        base_of: Mapping[str, int],
        *,
        noise: float = 0.25,
        seed: int = 0,
    ) -> None:
        self.real = real
        self.name = real.name
        self.dim = real.dim
        self.similarity_range = real.similarity_range
        self.base_of = base_of
        self.noise = noise
        self.seed = seed
        self.passthrough = True
        self.pooled = 0  # passages that got a pooled vector
        self.embedded = 0  # passages embedded for real
        self.recorded: list[list[str]] | None = None  # passthrough batches, when recording
        self._pool: Vectors | None = None

    def set_pool(self, vectors: Vectors) -> None:
        """Install the base vectors (rows indexed like the pool) and start pooling."""
        if vectors.ndim != 2 or vectors.shape[1] != self.dim:
            raise ValueError(f"pool vectors must have shape (n, {self.dim})")
        self._pool = normalize_rows(vectors)
        self.passthrough = False

    def base_for(self, text: str) -> int | None:
        """The pool row of an episode's embed text, or None if its body is not in the pool."""
        match = _DATED_PREFIX.match(text)
        rest = text[match.end() :] if match else text
        found = self.base_of.get(rest)
        if found is not None:
            return found
        at = rest.find(_REPLYING)
        while at >= 0:  # the body itself might contain the marker: try every cut
            found = self.base_of.get(rest[:at])
            if found is not None:
                return found
            at = rest.find(_REPLYING, at + 1)
        return None

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        if self.passthrough or self._pool is None:
            self.embedded += len(texts)
            if self.recorded is not None:
                self.recorded.append(list(texts))
            return self.real.embed_passages(texts)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        misses: list[int] = []
        for i, text in enumerate(texts):
            base = self.base_for(text)
            if base is None or base >= len(self._pool):
                misses.append(i)
            else:
                out[i] = self._noisy(self._pool[base], text)
        if misses:
            out[misses] = self.real.embed_passages([texts[i] for i in misses])
        self.embedded += len(misses)
        self.pooled += len(texts) - len(misses)
        return out

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        return self.real.embed_queries(texts)

    def _noisy(self, base: Vectors, text: str) -> Vectors:
        # Seeded by the text, so a turn gets the same vector whatever batch it lands in.
        rng = np.random.default_rng([self.seed, zlib.crc32(text.encode("utf-8"))])
        noise = rng.standard_normal(self.dim).astype(np.float32) * (self.noise / self.dim**0.5)
        vector: Vectors = base + noise
        vector /= np.float32(np.linalg.norm(vector))
        return vector
