"""Where ids sit in an ascending id array: the one lookup behind every row, entity and fact
position (rows are kept in id order, so a binary search replaces a dictionary)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


def positions(ascending: npt.NDArray[np.int64], wanted: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Index of each wanted id in ``ascending``; -1 where it is not there (deleted, or
    written after the array was read)."""
    wanted = np.asarray(wanted, dtype=np.int64)
    if ascending.size == 0:
        return np.full(wanted.shape, -1, dtype=np.int64)
    found = np.minimum(np.searchsorted(ascending, wanted), ascending.size - 1).astype(np.int64)
    return np.where(ascending[found] == wanted, found, -1)
