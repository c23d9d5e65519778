"""The storage port: what the engine needs from a backend, as a family of protocols.

The read and write paths are typed against these, never against a backend. A backend owns
its transactions (``Store.transaction`` hands out an opaque ``Transaction`` that the write
path passes back, so episodes, facts, graph edges and vaulted values commit together) and
the whole delete / forget cascade (``Store.delete_event``, ``Store.forget_user``), so no
caller has to know which records derive from a message. Every method is scoped by user
where data is. The embedded backend is ``store.sqlite``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from madeleine.facts.cards import CardDraft
from madeleine.kb.records import (
    CollectionInfo,
    ContextJob,
    KBSnapshot,
    NewVersion,
    VersionInfo,
)
from madeleine.store.audit_rows import AuditEntry, AuditQuery
from madeleine.store.crypto import VaultEntry
from madeleine.store.records import (
    AgentRecord,
    BufferedMessage,
    EpisodeRow,
    FactLinks,
    FactVectors,
    GraphRows,
    IndexJob,
    ItemState,
    LifecycleEntry,
    NewEvent,
    NewMention,
    SessionInfo,
    StateChange,
    StoredEpisode,
    StoredEvent,
    StoredFact,
    Transaction,
    TransitionRecord,
    UserVectors,
)
from madeleine.text.pii import PiiCategory


class EventLog(Protocol):
    """The append-only log of raw inputs (messages, tool results, behavioural events)."""

    def append_events(self, events: Sequence[NewEvent]) -> tuple[list[int], list[int]]:
        """Insert new events with their indexing jobs; (added ids, duplicate ids)."""
        ...

    def load_event(self, event_id: int) -> StoredEvent | None: ...

    def previous_event(self, event: StoredEvent) -> StoredEvent | None: ...

    def event_refs(self, event_ids: Sequence[int]) -> dict[int, tuple[str, str]]:
        """``{id: (external id or ev_<id>, session id)}``."""
        ...

    def events_for_user(self, user_id: str) -> list[StoredEvent]: ...

    def event_by_external_id(self, user_id: str, external_id: str) -> int | None: ...

    def has_user(self, user_id: str) -> bool: ...

    def user_ids(self) -> list[str]:
        """Every user with a logged event, in order."""
        ...

    def events_exist(self, tx: Transaction, event_ids: Sequence[int]) -> bool: ...


class Outbox(Protocol):
    """The write path's durable queue: one indexing job per logged event."""

    def claim_jobs(self, worker: str, limit: int, lease_seconds: float) -> list[IndexJob]: ...

    def fail_job(self, job: IndexJob, worker: str, error: str) -> None: ...

    def pending_jobs(self, user_id: str | None = None) -> int: ...

    def failed_jobs(self, limit: int | None = None) -> list[dict[str, Any]]:
        """Dead-lettered jobs (failed on every attempt), oldest first: event, user, attempts,
        last error; ``limit`` the first few."""
        ...

    def renew_jobs(self, jobs: Sequence[IndexJob], worker: str, lease_seconds: float) -> None:
        """Heartbeat: the worker still holds these jobs (a dead one's lapse quickly)."""
        ...

    def retry_failed(self) -> int:
        """Put dead-lettered jobs back in the queue; how many."""
        ...

    def commit_episodes(
        self,
        worker: str,
        done: Sequence[tuple[IndexJob, EpisodeRow | None]],
        then: Callable[[Transaction], None] | None = None,
    ) -> None:
        """Write episodes and retire their jobs in one transaction; ``then`` writes what else
        was derived from the batch (facts, graph edges) in the same transaction."""
        ...


class EpisodeIndex(Protocol):
    """Retrievable passages with their vectors, lexical index and session digests."""

    def episodes(self, ids: Sequence[int]) -> dict[int, StoredEpisode]: ...

    def episodes_for_user(self, user_id: str) -> list[StoredEpisode]: ...

    def episode_focus(self, episode_id: int) -> int | None: ...

    def user_generation(self, user_id: str) -> tuple[int, int]:
        """(added, changed) counters: a reader's cache of the user is stale when they move."""
        ...

    def user_vectors(
        self, user_id: str, after_id: int = 0, with_vectors: bool = True
    ) -> UserVectors:
        """The user's episodes as arrays; ``with_vectors=False`` leaves the vectors where they
        are (the matrix then has no columns): for a store that searches them itself."""
        ...

    def vector_count(self, user_id: str) -> int:
        """How many episode vectors the user has."""
        ...

    def lexical_search(
        self,
        user_id: str,
        terms: Sequence[str],
        limit: int,
        time_range: tuple[float, float] | None,
        context_weight: float = 0.35,
    ) -> list[tuple[int, float]]:
        """BM25 over analyzed terms: (episode id, score), best first."""
        ...

    def phrase_matches(self, user_id: str, terms: Sequence[str], limit: int) -> list[int]: ...

    def session_search(
        self, user_id: str, terms: Sequence[str], limit: int
    ) -> list[tuple[str, float, str]]:
        """BM25 over session digests: (session id, score, digest keywords)."""
        ...

    def rebuild_missing_digests(self) -> int: ...


class DenseSearch(Protocol):
    """Nearest episodes computed where the vectors live (a database server), so that a
    process never holds a user's vectors: any API replica can serve any user."""

    def nearest(
        self,
        user_id: str,
        query: npt.NDArray[np.float32],
        depth: int,
        time_range: tuple[float, float] | None,
        floor: float | None,
        exact: bool,
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """(episode ids, cosine similarities), best first: the top ``depth``, plus every
        further episode above ``floor``; ``exact`` scans the user's rows, else the ANN index
        answers (with the user filter applied inside its scan)."""
        ...

    def vectors(self, ids: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        """The vectors of these episodes, in this order (a zero row for a deleted one)."""
        ...


class VectorIndex(Protocol):
    """Approximate nearest neighbours for users too large for an exact scan."""

    threshold: int

    def search(
        self,
        user_id: str,
        generation: tuple[int, int],
        ids: npt.NDArray[np.int64],
        matrix: npt.NDArray[np.float32],
        query: npt.NDArray[np.float32],
        limit: int,
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]: ...

    def sync(
        self,
        user_id: str,
        generation: tuple[int, int],
        ids: npt.NDArray[np.int64],
        matrix: npt.NDArray[np.float32],
    ) -> None:
        """Bring the user's index in line with these rows ahead of a search."""
        ...

    def flush(self) -> None:
        """Persist what is only in memory (on close)."""
        ...

    def forget(self, user_id: str) -> None: ...

    def clear(self) -> None: ...


class FactRepository(Protocol):
    """Fact cards with their version chains, sources, routing log and alerts. Writes take
    the caller's transaction."""

    def current(self, tx: Transaction, user_id: str) -> list[StoredFact]: ...

    def lock_user(self, tx: Transaction, user_id: str) -> None:
        """Serialize this user's fact writers (the indexer, an edit) until ``tx`` ends."""
        ...

    def read_current(self, user_id: str) -> list[StoredFact]: ...

    def fetch(self, tx: Transaction, fact_id: int) -> StoredFact | None: ...

    def insert(
        self,
        tx: Transaction,
        user_id: str,
        draft: CardDraft,
        vector: npt.NDArray[np.float32],
        terms: str,
        *,
        status: str,
        extractor: str,
        now: float,
    ) -> int: ...

    def supersede(
        self, tx: Transaction, old_id: int, new_id: int, now: float, valid_to: float | None
    ) -> None: ...

    def correct(self, tx: Transaction, old_id: int, new_id: int, now: float) -> None:
        """``new`` replaces ``old`` for all time (a person's correction): old becomes
        superseded and never held (its validity ends where it starts), so ``as_of`` reads
        find only the new version."""
        ...

    def reinforce(
        self, tx: Transaction, fact_id: int, confidence: float, sources: Sequence[int]
    ) -> None: ...

    def set_support(
        self, tx: Transaction, fact_id: int, confidence: float, sources: Sequence[int]
    ) -> None:
        """Exactly this confidence and these sources (a merge, or the undoing of one)."""
        ...

    def mark_superseded_by(
        self, tx: Transaction, new_id: int, old: StoredFact, now: float
    ) -> None: ...

    def set_status(self, tx: Transaction, fact_id: int, status: str) -> None: ...

    def set_pinned(self, fact_id: int, pinned: bool) -> None: ...

    def log(
        self,
        tx: Transaction,
        user_id: str,
        decision: str,
        fact_id: int | None,
        other_id: int | None,
        detail: dict[str, Any],
        now: float,
    ) -> None: ...

    def upsert_alert(
        self,
        tx: Transaction,
        user_id: str,
        rule: str,
        fingerprint: str,
        severity: str,
        message: str,
        fact_ids: Sequence[str],
        now: float,
    ) -> bool: ...

    def clear_alerts_without(self, tx: Transaction, user_id: str) -> None: ...

    def facts(
        self,
        user_id: str,
        *,
        as_of: float | None = None,
        include_history: bool = False,
        category: str | None = None,
        most_important: int | None = None,
        include_archived: bool = False,
    ) -> list[StoredFact]: ...

    def generation(self, user_id: str) -> int: ...

    def search_rows(self, user_id: str) -> FactVectors: ...

    def get_many(self, ids: Sequence[int]) -> dict[int, StoredFact]: ...

    def get(self, fact_id: int) -> StoredFact | None: ...

    def chain(self, fact_id: int) -> list[StoredFact]: ...

    def lexical(
        self, user_id: str, terms: Sequence[str], limit: int
    ) -> list[tuple[int, float]]: ...

    def routing_log(self, user_id: str, limit: int = 100) -> list[dict[str, Any]]: ...

    def alerts(self, user_id: str) -> list[dict[str, Any]]: ...

    def forget_user(self, tx: Transaction, user_id: str) -> int: ...

    def forget_event_sources(self, tx: Transaction, event_ids: Sequence[int]) -> int: ...


class GraphRepository(Protocol):
    """Entities, aliases and mention edges."""

    def known(self, user_id: str) -> dict[str, str]: ...

    def known_in(self, tx: Transaction, user_id: str, keys: Iterable[str]) -> dict[str, str]: ...

    def write(
        self,
        tx: Transaction,
        user_id: str,
        mentions: Iterable[NewMention],
        vectors: dict[str, npt.NDArray[np.float32]],
    ) -> int: ...

    def rows(
        self,
        user_id: str,
        dim: int,
        *,
        known_ids: npt.NDArray[np.int64] | None = None,
        episode_after: int = 0,
    ) -> GraphRows: ...

    def fact_links(self, user_id: str) -> FactLinks: ...

    def episode_ids_of_events(
        self, tx: Transaction, event_ids: Sequence[int]
    ) -> dict[int, int]: ...

    def counts(self) -> dict[str, int]: ...

    def forget_user(self, tx: Transaction, user_id: str) -> None: ...


class VaultRepository(Protocol):
    """Vaulted PII values, sealed (``store.crypto``); ``tx=None`` reads outside a transaction."""

    def put(
        self, tx: Transaction | None, user_id: str, category: PiiCategory | str, value: str
    ) -> str: ...

    def get(self, tx: Transaction | None, user_id: str, token: str) -> str | None: ...

    def entries(self, tx: Transaction | None, user_id: str) -> list[VaultEntry]: ...

    def delete_tokens(self, tx: Transaction | None, user_id: str, tokens: Iterable[str]) -> int: ...

    def forget_user(self, tx: Transaction | None, user_id: str) -> int: ...

    def putter(self, tx: Transaction | None, user_id: str) -> Callable[[PiiCategory, str], str]: ...

    def getter(self, tx: Transaction | None, user_id: str) -> Callable[[str], str | None]: ...

    def rotate(self, new_key: bytes, batch: int = 500) -> int:
        """Re-seal every value under ``new_key``, the store in use throughout."""
        ...


class ShortTermRepository(Protocol):
    """Conversation buffers and agent states (Redis in the production backend). Expired
    buffers read as absent; an agent's move is refused if another writer moved it first."""

    def append(
        self, user_id: str, session_id: str, message: BufferedMessage, expires_at: float | None
    ) -> int: ...

    def messages(self, user_id: str, session_id: str, now: float) -> list[BufferedMessage]: ...

    def session(self, user_id: str, session_id: str, now: float) -> SessionInfo | None: ...

    def sessions(self, user_id: str, now: float) -> list[SessionInfo]: ...

    def fold(self, user_id: str, session_id: str, summary: str, through: int) -> None: ...

    def clear(self, user_id: str, session_id: str) -> int: ...

    def purge_expired(self, now: float) -> int: ...

    def agent(self, user_id: str, agent_id: str) -> AgentRecord | None: ...

    def move_agent(
        self,
        user_id: str,
        agent_id: str,
        expected_version: int,
        record: AgentRecord,
        transition: TransitionRecord,
    ) -> None: ...

    def transitions(self, user_id: str, agent_id: str, limit: int) -> list[TransitionRecord]: ...

    def export_user(self, user_id: str) -> dict[str, Any]: ...

    def forget_user(self, tx: Transaction, user_id: str) -> int: ...


def close_short_term(repository: ShortTermRepository) -> None:
    """A short-term repository with a connection of its own (Redis) is closed with the store."""
    closer = getattr(repository, "close", None)
    if closer is not None:
        closer()


class SharedCache(Protocol):
    """A cache level every process of a deployment shares (Redis): a user's derived arrays,
    found by the user's epoch (bumped by ``forget``) and tagged with their version."""

    def get(self, kind: str, user_id: str, version: str) -> tuple[str, bytes | None]: ...

    def put(self, kind: str, user_id: str, epoch: str, version: str, payload: bytes) -> None: ...

    def forget(self, user_id: str, kinds: tuple[str, ...] = ...) -> None: ...


class JobSignal(Protocol):
    """Wakes workers when jobs are queued (Redis pub/sub); the outbox stays the queue, so a
    lost signal only delays a job until the next poll."""

    def notify(self) -> None: ...

    def wait(self, timeout: float) -> bool: ...

    def close(self) -> None: ...


class ImportRepository(Protocol):
    """Which files and conversations an import has already indexed, and how."""

    def get(self, user_id: str, source: str, unit: str) -> tuple[str, dict[str, str]] | None: ...

    def put(
        self, user_id: str, source: str, unit: str, stamp: str, digests: dict[str, str]
    ) -> None: ...

    def forget_user(self, tx: Transaction, user_id: str) -> None: ...

    def owners(self, user_id: str, source: str) -> dict[str, tuple[str, str]]:
        """Every passage id the user's imports of ``source`` hold: (unit, text digest)."""
        ...


class KnowledgeRepository(Protocol):
    """The tenant's knowledge base: collections, versioned documents, chunks to embed, and
    one consistent snapshot for the in-memory index (``generation`` says when to reload)."""

    def ensure_collection(self, name: str, description: str | None) -> None: ...

    def collections(self) -> list[CollectionInfo]: ...

    def delete_collection(self, name: str) -> int: ...

    def stale_profiles(self) -> list[tuple[str, str, list[tuple[str, str]]]]: ...

    def set_profile(
        self, name: str, l0: str, l1: str, profile: str, vector: np.ndarray[Any, Any]
    ) -> None: ...

    def add_version(self, version: NewVersion) -> VersionInfo: ...

    def versions(self, collection: str, doc_id: str) -> list[VersionInfo]: ...

    def documents(self, collection: str) -> list[VersionInfo]: ...

    def version_text(self, collection: str, doc_id: str, number: int) -> str: ...

    def delete_document(self, collection: str, doc_id: str) -> bool: ...

    def pending(self, limit: int, *, situated_only: bool = False) -> list[tuple[int, str]]: ...

    def uncontextualized(self, limit: int) -> list[ContextJob]: ...

    def set_contexts(self, contexts: Sequence[tuple[int, str, str, str]]) -> None: ...

    def pending_count(self) -> int: ...

    def set_vectors(self, vectors: Sequence[tuple[int, np.ndarray[Any, Any]]]) -> None: ...

    def reset_vectors(self) -> None: ...

    def generation(self) -> int: ...

    def snapshot(self, dim: int) -> KBSnapshot: ...

    def chunks(self, chunk_ids: Sequence[int]) -> dict[int, tuple[str, str, tuple[str, ...]]]: ...

    def counts(self) -> dict[str, int]: ...


class LifecycleRepository(Protocol):
    """Per-item lifecycle state (importance, pins, archive, recalls) and the log of every
    lifecycle decision, so that maintenance can be explained and undone."""

    def generation(self, user_id: str) -> int:
        """Moves on every change to the user's states (a global clock: never repeats)."""
        ...

    def states(self, user_id: str) -> dict[str, ItemState]: ...

    def change(
        self,
        user_id: str,
        items: Sequence[str],
        decide: Callable[[dict[str, ItemState]], Sequence[StateChange]],
        run: str,
        at: float,
    ) -> list[StateChange]:
        """In one transaction that holds the user's writers off: read the stored states of
        ``items``, let ``decide`` turn them into changes, write the new states and log the
        logged changes under ``run``; the changes made."""
        ...

    def entries(
        self, user_id: str, run: str | None = None, limit: int | None = None
    ) -> list[LifecycleEntry]:
        """Logged changes, newest first (one run's only, with ``run``)."""
        ...

    def mark_undone(self, user_id: str, entry_ids: Sequence[int], at: float) -> None: ...

    def forget_user(self, tx: Transaction, user_id: str) -> int: ...


class AuditRepository(Protocol):
    """Who changed what and when (never the content), kept with the tenant's data."""

    def record(self, entry: AuditEntry) -> int:
        """Store one entry; its id."""
        ...

    def entries(self, query: AuditQuery) -> list[AuditEntry]: ...

    def forget_user(self, tx: Transaction, user_id: str) -> int:
        """Replace the user's id by its pseudonym in their entries; entries changed."""
        ...


class Store(EventLog, Outbox, EpisodeIndex, Protocol):
    """A whole backend: the log, the outbox and the episode index, plus its repositories."""

    facts: FactRepository
    graph: GraphRepository
    vault: VaultRepository
    imports: ImportRepository
    short_term: ShortTermRepository
    cache: SharedCache | None  # a cache level shared by every process (Redis), if any
    kb: KnowledgeRepository
    lifecycle: LifecycleRepository
    audit: AuditRepository
    vectors: VectorIndex
    dense: DenseSearch | None  # set when the store searches vectors itself (PostgreSQL)
    read_only: bool  # opened for reads only: writes raise StoreReadOnlyError

    @property
    def path(self) -> Path | str:
        """Where the data lives (a file, or a database address)."""
        ...

    def transaction(self) -> AbstractContextManager[Transaction]: ...

    def reading(self) -> AbstractContextManager[None]:
        """A block of reads that may share one connection and snapshot (PostgreSQL); the
        embedded store reads its one connection anyway."""
        ...

    def bind_embedder(self, name: str, dim: int) -> None:
        """Record the embedder on first use; raise ``EmbedderMismatchError`` on another."""
        ...

    def reset_indexes(self, embedder_name: str, dim: int) -> int:
        """Drop every derived record and queue the whole log again; events queued."""
        ...

    def meta(self, key: str) -> str | None: ...

    def set_meta(self, key: str, value: str) -> None: ...

    def delete_event(self, event_id: int, user_id: str | None = None) -> bool:
        """Remove a message from the log and every record derived from it."""
        ...

    def forget_user(self, user_id: str) -> dict[str, int]:
        """Erase everything about a user; counts per record kind."""
        ...

    def export_user(self, user_id: str) -> dict[str, Any]: ...

    def stats(self) -> dict[str, Any]: ...

    def integrity(self) -> dict[str, int]: ...

    def check(self) -> dict[str, Any]:
        """The backend's own integrity check plus ``integrity()``; ``ok`` says all is well."""
        ...

    def close(self) -> None: ...
