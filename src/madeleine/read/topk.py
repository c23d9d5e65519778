"""The leading candidates of a score array, without sorting every passage of a large user.

Stages and selection look at a few dozen leaders among the rows that have a score; a
large user has 100,000 rows of which a few thousand score. Partitioning only the scoring
rows costs a tenth of partitioning them all.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Rows = npt.NDArray[np.int64]


def top_positive(scores: npt.NDArray[np.float64], k: int, *, ordered: bool = True) -> Rows:
    """Rows of the ``k`` highest positive scores, ties broken by lower row (whatever the
    partition did); with ``ordered``, best first."""
    candidates = np.flatnonzero(scores > 0)
    if k <= 0 or candidates.size == 0:
        return np.zeros(0, dtype=np.int64)
    if candidates.size > k:
        values = scores[candidates]
        cut = values[np.argpartition(-values, k - 1)[k - 1]]  # the k-th best score
        above = candidates[values > cut]
        tied = candidates[values == cut][: k - above.size]  # ties at the cut: lower rows
        candidates = np.sort(np.concatenate([above, tied]))
    if ordered:
        candidates = candidates[np.argsort(-scores[candidates], kind="stable")]
    return candidates.astype(np.int64, copy=False)
