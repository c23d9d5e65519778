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


class PriorityLane:
    def __init__(self, name: str) -> None:
        self._jobs: queue.PriorityQueue[tuple[int, int, Any]] = queue.PriorityQueue()
        self._order = itertools.count()  # FIFO within a priority
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, priority: int, work: Callable[..., T], *args: Any) -> Future[T]:
        future: Future[T] = Future()
        self._jobs.put((priority, next(self._order), (future, work, args)))
        return future

    def _run(self) -> None:
        while True:
            _, _, (future, work, args) = self._jobs.get()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(work(*args))
            except BaseException as exc:  # handed to the caller, who re-raises it
                future.set_exception(exc)
