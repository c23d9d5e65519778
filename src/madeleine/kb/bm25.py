"""BM25 over in-memory postings: the weight of every (chunk, term) pair is computed once
when the index is built, so a query is a gather of a few sparse columns and a sum.

Scores are calibrated against the query's own ceiling — the sum over its known terms of
``idf · (k1 + 1)``, what a chunk would score if it had every term at saturation — so a
calibrated score means the same share of the query in every search, with no batch min-max.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from scipy import sparse


class BM25Postings:
    def __init__(self, documents: Sequence[Sequence[str]], k1: float = 1.2, b: float = 0.75):
        self.k1, self.b = k1, b
        vocabulary: dict[str, int] = {}
        rows: list[int] = []
        cols: list[int] = []
        counts: list[int] = []
        lengths = np.zeros(len(documents), dtype=np.float64)
        for row, terms in enumerate(documents):
            lengths[row] = len(terms)
            tally: dict[int, int] = {}
            for term in terms:
                col = vocabulary.setdefault(term, len(vocabulary))
                tally[col] = tally.get(col, 0) + 1
            rows += [row] * len(tally)
            cols += tally.keys()
            counts += tally.values()
        self.vocabulary = vocabulary
        size = len(documents)
        tf = np.asarray(counts, dtype=np.float64)
        row_index = np.asarray(rows, dtype=np.int64)
        col_index = np.asarray(cols, dtype=np.int64)
        df = np.bincount(col_index, minlength=len(vocabulary)).astype(np.float64)
        self.idf = np.log1p((size - df + 0.5) / (df + 0.5))
        average = float(lengths.mean()) if size and lengths.mean() > 0 else 1.0
        norm = k1 * (1.0 - b + b * lengths[row_index] / average)
        weights = self.idf[col_index] * tf * (k1 + 1.0) / (tf + norm)
        self._matrix = sparse.csc_matrix(
            (weights.astype(np.float32), (row_index, col_index)),
            shape=(size, len(vocabulary)),
        )
        self.size = size

    def columns(self, terms: Sequence[str]) -> npt.NDArray[np.int64]:
        known = [self.vocabulary[t] for t in dict.fromkeys(terms) if t in self.vocabulary]
        return np.asarray(known, dtype=np.int64)

    def scores(self, terms: Sequence[str]) -> tuple[npt.NDArray[np.float32], float]:
        """(score of every chunk, the query's ceiling for calibration)."""
        columns = self.columns(terms)
        if columns.size == 0 or self.size == 0:
            return np.zeros(self.size, dtype=np.float32), 0.0
        gathered = self._matrix[:, columns]
        scores = np.asarray(gathered.sum(axis=1), dtype=np.float32).ravel()
        ceiling = float(self.idf[columns].sum() * (self.k1 + 1.0))
        return scores, ceiling
