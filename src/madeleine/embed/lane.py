"""Worker threads that run jobs by priority: queries before passages.

The embedding engine keeps scratch buffers and an OpenMP team per model and calling thread,
so each worker calls its own model (the embedder keeps one per worker thread). With a plain
queue a search's query waits behind whatever passage batch the indexer queued; here a query
runs as soon as the first worker finishes its job in progress, no passage job starts while a
query waits or runs (they would share its cores), and the embedder splits passage batches
into short jobs so that wait stays short. Queries run on the first worker only: each thread
that runs a multi-threaded query keeps its own OpenMP team, and two teams' idle threads spin
against each other (query p50 14 ms with one team, 24 ms when two workers took turns).

Several single-threaded workers embed passages faster than one worker with as many OpenMP
threads: measured on 2 cores with LoCoMo turns, 16.2 texts/s with one two-thread worker,
19.2 with two one-thread workers (short sequences leave a team's threads waiting on each
other at every matrix product)."""

from __future__ import annotations

import heapq
import itertools
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")

QUERY = 0
PASSAGE = 1
_STOP = 2  # after every queued job


class PriorityLane:
    def __init__(self, name: str, workers: int = 1) -> None:
        if workers < 1:
            raise ValueError(f"a lane needs at least one worker, not {workers}")
        self._jobs: list[tuple[int, int, Any]] = []  # a heap: priority, then FIFO
        self._order = itertools.count()
        self._changed = threading.Condition()
        self._closed = False
        self._busy = 0  # workers running a job
        self._queries = 0  # of which running a query
        self._first_busy = False
        self.workers = workers
        self._threads = [
            threading.Thread(target=self._run, name=name, daemon=True) for _ in range(workers)
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, priority: int, work: Callable[..., T], *args: Any) -> Future[T]:
        future: Future[T] = Future()
        with self._changed:
            if self._closed:
                raise RuntimeError("this embedding lane is closed")
            heapq.heappush(self._jobs, (priority, next(self._order), (future, work, args)))
            self._changed.notify_all()  # a query wakes the first worker, whichever waits
        return future

    def on_every_worker(self, work: Callable[..., T], *args: Any) -> list[T]:
        """Run ``work`` once on each worker (to load each worker's model up front, so memory
        does not step up later when a second worker first gets a job)."""
        met = threading.Barrier(self.workers, timeout=600)

        def once() -> T:
            result = work(*args)
            met.wait()  # hold this worker so that every other one takes a copy
            return result

        jobs = [self.submit(PASSAGE, once) for _ in range(self.workers)]
        return [job.result() for job in jobs]

    def on_first_worker(self) -> bool:
        return threading.current_thread() is self._threads[0]

    def alone(self) -> bool:
        """Whether the calling worker is the only one running a job and no passage waits:
        its job may then take every core."""
        with self._changed:
            return self._busy <= 1 and not any(p == PASSAGE for p, _, _ in self._jobs)

    def close(self) -> None:
        """Let the threads end once the queued jobs are done (idempotent; no join, so an
        embedder's finalizer may call it from any thread, a worker's own included)."""
        with self._changed:
            if self._closed:
                return
            self._closed = True
            for _ in self._threads:
                heapq.heappush(self._jobs, (_STOP, next(self._order), None))
            self._changed.notify_all()

    def _startable(self, first: bool) -> bool:
        if not self._jobs:
            return False
        if self._jobs[0][0] == QUERY:
            return first
        if self._queries:
            return False
        # a passage goes to the first worker when it is free (alone, it may use every core:
        # one message indexed on its own is not slowed down); the others help when it is busy
        return first or self._first_busy or self._jobs[0][0] == _STOP

    def _run(self) -> None:
        first = threading.current_thread() is self._threads[0]
        while True:
            with self._changed:
                while not self._startable(first):
                    self._changed.wait()
                priority, _, job = heapq.heappop(self._jobs)
                if job is None:
                    return
                self._busy += 1
                self._queries += priority == QUERY
                self._first_busy |= first
                if first:
                    self._changed.notify_all()  # the others may help now
            try:
                _run_one(*job)
            finally:
                with self._changed:
                    self._busy -= 1
                    self._queries -= priority == QUERY
                    self._first_busy &= not first
                    self._changed.notify_all()
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
