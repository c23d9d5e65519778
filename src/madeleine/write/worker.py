"""Draining the outbox: claim jobs, build episodes, embed, commit them with the job's removal."""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid
from collections.abc import Callable
from typing import Protocol

from madeleine.embed.base import Embedder
from madeleine.kb.indexer import KnowledgeIndexer
from madeleine.store.ports import EventLog, Outbox
from madeleine.store.records import EpisodeRow, IndexJob, StoredEvent, Transaction
from madeleine.text.analyzer import Analyzer
from madeleine.write.episodes import EpisodeText, episode_text
from madeleine.write.facts import FactPipeline
from madeleine.write.graph import GraphPipeline

log = logging.getLogger(__name__)


class IndexerStore(EventLog, Outbox, Protocol):
    """What indexing needs from storage: the log to read and the outbox to drain."""


class Indexer:
    """One batch at a time; safe to run in several threads or processes against one store."""

    def __init__(
        self,
        store: IndexerStore,
        embedder: Embedder,
        analyzer: Analyzer,
        *,
        batch_size: int,
        lease_seconds: float,
        context_chars: int,
        facts: FactPipeline | None = None,
        graph: GraphPipeline | None = None,
    ) -> None:
        self.facts = facts
        self.graph = graph
        self.store = store
        self.embedder = embedder
        self.analyzer = analyzer
        self.batch_size = batch_size
        self.lease_seconds = lease_seconds
        self.context_chars = context_chars
        self.worker_id = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        # called with the users whose episodes a drain committed, once it is done (the
        # searcher's dense index follows them, so a large user's ANN grows with the ingest
        # instead of being built by the first search)
        self.followers: list[Callable[[set[str]], None]] = []
        # the knowledge base's embedding, run when the outbox is empty
        self.kb: KnowledgeIndexer | None = None
        # small jobs run between batches, off the request path (recalls to reinforce)
        self.chores: list[Callable[[], int]] = []
        self._touched: set[str] = set()
        # seconds spent per step since this indexer started: what facts cost at ingest
        self.seconds: dict[str, float] = {
            "episodes": 0.0,
            "graph": 0.0,
            "facts": 0.0,
            "commit": 0.0,
        }

    def run_batch(self) -> int:
        """Index one batch of claimed jobs; return how many jobs were claimed (0 = idle)."""
        jobs = self.store.claim_jobs(self.worker_id, self.batch_size, self.lease_seconds)
        if not jobs:
            return 0 if self.kb is None else self.kb.run_batch()
        with _Heartbeat(self.store, jobs, self.worker_id, self.lease_seconds):
            self._index(jobs)
        return len(jobs)

    def _index(self, jobs: list[IndexJob]) -> None:
        try:
            started = time.perf_counter()
            done, events = self._build(jobs)
            mark = time.perf_counter()
            self.seconds["episodes"] += mark - started
            graph, facts = self.graph, self.facts
            graph_prepared = None
            if graph is not None:
                graph_prepared = graph.prepare([row for _, row in done if row is not None])
                self.seconds["graph"] += time.perf_counter() - mark
                mark = time.perf_counter()
            facts_prepared = None
            if facts is not None:
                facts_prepared = facts.prepare(events)
                self.seconds["facts"] += time.perf_counter() - mark
                mark = time.perf_counter()
            now = time.time()

            def derived(tx: Transaction) -> None:
                if graph is not None and graph_prepared is not None:
                    graph.commit(tx, graph_prepared)
                if facts is not None and facts_prepared is not None:
                    facts.commit(tx, facts_prepared, now)

            self.store.commit_episodes(self.worker_id, done, derived)
            self._touched.update(row.user_id for _, row in done if row is not None)
            self.seconds["commit"] += time.perf_counter() - mark
        except Exception as exc:
            log.exception("indexing a batch of %d jobs failed; they will be retried", len(jobs))
            for job in jobs:
                self.store.fail_job(job, self.worker_id, f"{type(exc).__name__}: {exc}")

    def pending(self) -> int:
        """Work left: queued messages and knowledge-base chunks still to embed."""
        return self.store.pending_jobs() + (0 if self.kb is None else self.kb.pending())

    def drain(self, progress: Callable[[int], None] | None = None) -> int:
        total = 0
        while True:
            claimed = self.run_batch()
            if claimed == 0:
                self.follow()
                return total
            total += claimed
            if progress is not None:
                progress(claimed)

    def follow(self) -> None:
        """Tell the followers which users the batches since the last call touched, and run
        the chores."""
        for chore in self.chores:
            try:
                chore()
            except Exception:  # a chore that failed is tried again next time
                log.exception("a background chore of the indexer failed")
        touched, self._touched = self._touched, set()
        if not touched:
            return
        for follower in self.followers:
            try:
                follower(touched)
            except Exception:  # a cache that could not follow is rebuilt by the next search
                log.exception("a follower of the indexer failed")

    def _build(
        self, jobs: list[IndexJob]
    ) -> tuple[list[tuple[IndexJob, EpisodeRow | None]], list[StoredEvent]]:
        prepared: list[tuple[IndexJob, StoredEvent, StoredEvent | None, EpisodeText]] = []
        done: list[tuple[IndexJob, EpisodeRow | None]] = []
        for job in jobs:
            event = self.store.load_event(job.event_id)
            if event is None:
                done.append((job, None))  # deleted before we got to it: retire the job
                continue
            previous = self.store.previous_event(event)
            prepared.append(
                (job, event, previous, episode_text(event, previous, self.context_chars))
            )
        if not prepared:
            return done, []
        vectors = self.embedder.embed_passages([p[3].embed_text for p in prepared])
        for (job, event, previous, text), vector in zip(prepared, vectors, strict=True):
            row = EpisodeRow(
                user_id=event.user_id,
                session_id=event.session_id,
                kind="turn",
                focus_event_id=event.id,
                context_event_id=None if previous is None else previous.id,
                event_ids=(event.id,),
                source_ids=(event.source_id,),
                speaker=text.speaker,
                prefix=text.prefix,
                body=text.body,
                context=text.context,
                occurred_at=event.occurred_at,
                body_terms=" ".join(self.analyzer.terms(text.body)),
                context_terms=" ".join(self.analyzer.terms(text.context)),
                vector=vector,
            )
            done.append((job, row))
        return done, [p[1] for p in prepared]


class _Heartbeat:
    """Renews the batch's lease every third of it while the batch runs: a live worker keeps
    its jobs however long embedding takes, and a dead one's jobs lapse within one lease."""

    def __init__(
        self, store: IndexerStore, jobs: list[IndexJob], worker: str, lease_seconds: float
    ) -> None:
        self._store = store
        self._jobs = jobs
        self._worker = worker
        self._lease = lease_seconds
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="madeleine-lease", daemon=True)

    def __enter__(self) -> None:
        self._thread.start()

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _beat(self) -> None:
        while not self._stop.wait(self._lease / 3):
            try:
                self._store.renew_jobs(self._jobs, self._worker, self._lease)
            except Exception:  # a closed or busy store: the lease simply runs out
                log.warning("could not renew the lease of %d jobs", len(self._jobs))


class BackgroundWorker:
    """A daemon thread that drains the outbox whenever ``notify`` is called, and polls otherwise.

    Polling picks up work left by other processes and jobs whose lease expired after a crash.
    """

    def __init__(self, indexer: Indexer, poll_seconds: float = 0.5) -> None:
        self._indexer = indexer
        self._poll_seconds = poll_seconds
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._idle = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="madeleine-indexer", daemon=True)
        self._thread.start()

    def notify(self) -> None:
        self._idle.clear()
        self._wake.set()

    def wait_idle(self, timeout: float | None) -> bool:
        self.notify()
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            if self._idle.wait(timeout=0.05 if remaining is None else min(0.05, remaining)):
                if self._indexer.pending() == 0:
                    return True
                kb = self._indexer.kb
                if kb is not None and kb.error is not None:
                    return False  # the knowledge base cannot be embedded now: say so
                self.notify()
            if deadline is not None and time.monotonic() >= deadline:
                return False

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=60)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                while not self._stop.is_set() and self._indexer.run_batch() > 0:
                    pass
                self._indexer.follow()
            except Exception:
                log.exception("the background indexer hit an error; retrying shortly")
            self._idle.set()
            self._wake.wait(timeout=self._poll_seconds)
            self._wake.clear()
