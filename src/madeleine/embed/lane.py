"""One thread that runs jobs by priority: queries before passages.

The embedding engine must be called from one thread (its scratch buffers and its OpenMP
team belong to it). With a plain queue a search's query waits behind whatever passage
batch the indexer queued; here a query runs as soon as the job in progress ends, and the
embedder splits passage batches into short jobs so that wait stays short."""

from __future__ import annotations

import itertools
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")

QUERY = 0
PASSAGE = 1
_STOP = 2  # after every queued job


class PriorityLane:
    def __init__(self, name: str) -> None:
        self._jobs: queue.PriorityQueue[tuple[int, int, Any]] = queue.PriorityQueue()
        self._order = itertools.count()  # FIFO within a priority
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, priority: int, work: Callable[..., T], *args: Any) -> Future[T]:
        if self._closed:
            raise RuntimeError("this embedding lane is closed")
        future: Future[T] = Future()
        self._jobs.put((priority, next(self._order), (future, work, args)))
        return future

    def close(self) -> None:
        """Let the thread end once the queued jobs are done (idempotent; no join, so an
        embedder's finalizer may call it from any thread, the lane's own included)."""
        self._closed = True
        self._jobs.put((_STOP, next(self._order), None))

    def _run(self) -> None:
        while True:
            _, _, job = self._jobs.get()
            if job is None:
                return
            _run_one(*job)
            # nothing of the finished job stays on this frame while it waits for the next:
            # its arguments (a model, a store's searcher through a callback) would be kept
            # alive by an idle thread
            del job


def _run_one(future: Future[Any], work: Callable[..., Any], args: tuple[Any, ...]) -> None:
    if not future.set_running_or_notify_cancel():
        return
    try:
        future.set_result(work(*args))
    except BaseException as exc:  # handed to the caller, who re-raises it
        future.set_exception(exc)
