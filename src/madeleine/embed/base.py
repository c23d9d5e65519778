"""The seam between Madeleine and any sentence embedder."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]


class Embedder(Protocol):
    """Maps texts to L2-normalized float32 vectors; ``name`` and ``dim`` are stored with data."""

    name: str
    dim: int
    # Cosine values that mean "unrelated" and "as related as it gets" for this model; fusion
    # maps scores onto [0, 1] against this fixed range (never against the batch's own min/max).
    similarity_range: tuple[float, float]

    def embed_passages(self, texts: Sequence[str]) -> Vectors: ...

    def embed_queries(self, texts: Sequence[str]) -> Vectors: ...


@runtime_checkable
class QueueingEmbedder(Protocol):
    """An embedder that queues query embeddings itself (ahead of passages) and hands back a
    future: concurrent searches then wait together in its queue instead of one by one."""

    def submit_queries(self, texts: Sequence[str]) -> Future[Vectors]: ...


def normalize_rows(vectors: npt.NDArray[np.floating]) -> Vectors:
    """L2-normalize each row; zero rows stay zero instead of becoming NaN."""
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim == 1:
        matrix = matrix[None, :]
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(matrix / norms, dtype=np.float32)
