"""One BLAS thread while a search runs.

numpy's bundled OpenBLAS splits a matrix-vector product of more than ~9,000 entries over
every core, then keeps its worker threads spinning for a while after. A search's products
are small (the query against 6,000 entity names, a few facts, 50 MMR candidates, a user
below the ANN threshold): on one thread they take a fraction of a millisecond, while on a
busy 2-core machine the split product took 2-8 ms and the spinning workers took the core
the next query's embedding and SQLite lookups run on (scale bench at 100,000 episodes:
search p50 48 -> 38 ms with one thread). The result is the same bits: each output of a
matrix-vector product is one dot product, whichever thread computes it.

OpenBLAS has one thread count per process, so the limit holds from the first search that
starts to the last that ends (a product elsewhere in the process meanwhile also runs on
one thread), and the previous count is restored then. Without numpy's OpenBLAS (another
BLAS, another platform) nothing is changed.
"""

from __future__ import annotations

import ctypes
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

_NAMES = (  # numpy's wheels mangle the symbols (64-bit ints); plain builds do not
    ("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
    ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
    ("openblas_get_num_threads", "openblas_set_num_threads"),
)

Controls = tuple[Callable[[], int], Callable[[int], None]]


def openblas_controls() -> Controls | None:
    """(get, set) of the thread count of numpy's bundled OpenBLAS, None when not found."""
    try:
        import numpy

        libs = Path(numpy.__file__).parent.parent / "numpy.libs"
        candidates = sorted(libs.glob("libscipy_openblas*.so*")) + sorted(
            libs.glob("libopenblas*.so*")
        )
        for path in candidates:
            library: Any = ctypes.CDLL(str(path))
            for get_name, set_name in _NAMES:
                getter = getattr(library, get_name, None)
                setter = getattr(library, set_name, None)
                if getter is not None and setter is not None:
                    getter.restype = ctypes.c_int
                    setter.argtypes = [ctypes.c_int]
                    setter.restype = None
                    return getter, setter
    except OSError as exc:
        log.info("numpy's OpenBLAS not loadable (%s): BLAS threads left as they are", exc)
    return None


class BlasThreads:
    """``limited()``: BLAS on ``threads`` threads inside, the previous count restored when
    the last concurrent user leaves."""

    def __init__(self, threads: int = 1, controls: Controls | None = None) -> None:
        self._threads = threads
        self._controls = controls
        self._lock = threading.Lock()
        self._inside = 0
        self._saved = 0

    @classmethod
    def for_numpy(cls, threads: int = 1) -> BlasThreads:
        return cls(threads, openblas_controls())

    @contextmanager
    def limited(self) -> Iterator[None]:
        if self._controls is None:
            yield
            return
        get, set_threads = self._controls
        with self._lock:
            if self._inside == 0:
                self._saved = get()
                if self._saved != self._threads:
                    set_threads(self._threads)
            self._inside += 1
        try:
            yield
        finally:
            with self._lock:
                self._inside -= 1
                if self._inside == 0 and self._saved != self._threads:
                    set_threads(self._saved)
