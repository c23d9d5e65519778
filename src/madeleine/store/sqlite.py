"""Embedded store: one SQLite file in WAL mode holding the log, the outbox and every index."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from madeleine.errors import EmbedderMismatchError, StoreClosedError
from madeleine.store.base import (
    EpisodeRow,
    IndexJob,
    NewEvent,
    StoredEpisode,
    StoredEvent,
    UserVectors,
)

SCHEMA_VERSION = "1"
_EVENT_COLUMNS = (
    "id, user_id, session_id, kind, role, name, content, metadata, occurred_at, recorded_at, "
    "external_id"
)
_EPISODE_COLUMNS = (
    "id, user_id, session_id, kind, focus_event_id, event_ids, source_ids, speaker, prefix, "
    "body, context, occurred_at"
)
# SQLite limits bound parameters per statement; chunk IN (...) lists below it.
_IN_CHUNK = 500


def scope_token(user_id: str) -> str:
    """The lexical-index token that scopes a document to its user (no raw id in the index)."""
    return "u" + hashlib.sha256(user_id.encode("utf-8")).hexdigest()[:24]


def scoped_any_match(user_id: str, columns: str, terms: Sequence[str]) -> str | None:
    """An FTS5 query for any of ``terms`` in ``columns``, inside the user's scope (None when
    no term is left)."""
    unique = list(dict.fromkeys(t for t in terms if t))
    if not unique:
        return None
    alternatives = " OR ".join('"' + t.replace('"', "") + '"' for t in unique)
    return f'scope : "{scope_token(user_id)}" AND {columns} : ({alternatives})'


class SQLiteStore:
    """Thread-safe: each thread gets its own connection; writers use ``BEGIN IMMEDIATE``."""

    def __init__(self, path: Path, busy_timeout_ms: int = 30_000) -> None:
        self.path = path
        self._busy_timeout_ms = busy_timeout_ms
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._connections_lock = threading.Lock()
        self._closed = False
        # Stores of derived records in the same file (facts, vault) register how to erase
        # theirs, inside the same transaction as the log's deletion.
        self.on_delete_events: list[Callable[[sqlite3.Connection, list[int]], None]] = []
        self.on_forget_user: list[Callable[[sqlite3.Connection, str], None]] = []
        schema = resources.files("madeleine.store").joinpath("schema.sql").read_text("utf-8")
        conn = self._conn()
        conn.executescript("BEGIN IMMEDIATE;" + schema + "COMMIT;")
        with self._write() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', ?)",
                (SCHEMA_VERSION,),
            )

    # -- connections and transactions ---------------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        if self._closed:
            raise StoreClosedError("this Memory is closed")
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(
                self.path,
                timeout=self._busy_timeout_ms / 1000,
                isolation_level=None,
                check_same_thread=False,
            )
            conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout_ms)}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
            # Deleted memories must not linger in free pages of the file.
            conn.execute("PRAGMA secure_delete = ON")
            self._local.conn = conn
            with self._connections_lock:
                self._connections.append(conn)
        return conn

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction taken up front, so concurrent writers wait instead of failing."""
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def connection(self) -> sqlite3.Connection:
        """This thread's connection, for stores of other records sharing the file."""
        return self._conn()

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        """A write transaction (``BEGIN IMMEDIATE``) for stores of other records."""
        return self._write()

    def close(self) -> None:
        with self._connections_lock:
            for conn in self._connections:
                with suppress(sqlite3.Error):
                    conn.close()
            self._connections.clear()
        self._closed = True

    # -- embedder bookkeeping -----------------------------------------------------------------

    def bind_embedder(self, name: str, dim: int) -> None:
        """Record the embedder on first use; refuse a different one later."""
        with self._write() as conn:
            rows = dict(
                conn.execute(
                    "SELECT key, value FROM meta WHERE key IN ('embedder', 'embedder_dim')"
                ).fetchall()
            )
            if not rows:
                conn.executemany(
                    "INSERT INTO meta(key, value) VALUES (?, ?)",
                    [("embedder", name), ("embedder_dim", str(dim))],
                )
                return
        if rows.get("embedder") != name or rows.get("embedder_dim") != str(dim):
            raise EmbedderMismatchError(
                f"this store was indexed with embedder {rows.get('embedder')!r} "
                f"(dim {rows.get('embedder_dim')}), not {name!r} (dim {dim}); open it with the "
                "same embedder, or rebuild the indexes with `madeleine reindex --embedder ...`"
            )

    def reset_indexes(self, embedder_name: str, dim: int) -> int:
        """Drop every derived index and queue the whole log again; returns events queued."""
        now = time.time()
        with self._write() as conn:
            conn.execute("DELETE FROM episodes")
            conn.execute("DELETE FROM episode_vectors")
            conn.execute("DELETE FROM episodes_fts")
            conn.execute("DELETE FROM session_digests")
            conn.execute("DELETE FROM session_fts")
            # facts are derived from the log too: drawn again, their chains rebuilt by event time
            for table in ("facts", "fact_sources", "facts_fts", "alerts", "routing_log"):
                conn.execute(f"DELETE FROM {table}")
            conn.execute("UPDATE user_state SET changed_gen = changed_gen + 1")
            conn.execute("DELETE FROM outbox")
            queued = conn.execute(
                "INSERT INTO outbox(event_id, user_id, enqueued_at) "
                "SELECT id, user_id, ? FROM events ORDER BY id",
                (now,),
            ).rowcount
            conn.executemany(
                "INSERT INTO meta(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                [("embedder", embedder_name), ("embedder_dim", str(dim))],
            )
        return int(queued)

    def meta(self, key: str) -> str | None:
        row = self._conn().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        with self._write() as conn:
            conn.execute(
                "INSERT INTO meta(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    # -- the log --------------------------------------------------------------------------------

    def append_events(self, events: Sequence[NewEvent]) -> tuple[list[int], list[int]]:
        """Insert new events and their outbox jobs atomically; return (added ids, duplicate ids)."""
        added: list[int] = []
        duplicates: list[int] = []
        now = time.time()
        with self._write() as conn:
            for event in events:
                existing = self._find_duplicate(conn, event)
                if existing is not None:
                    duplicates.append(existing)
                    continue
                cursor = conn.execute(
                    "INSERT INTO events(user_id, session_id, kind, role, name, content, metadata, "
                    "occurred_at, recorded_at, content_hash, external_id) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        event.user_id,
                        event.session_id,
                        event.kind,
                        event.role,
                        event.name,
                        event.content,
                        json.dumps(event.metadata, ensure_ascii=False),
                        event.occurred_at,
                        now,
                        event.content_hash,
                        event.external_id,
                    ),
                )
                event_id = int(cursor.lastrowid or 0)
                conn.execute(
                    "INSERT INTO outbox(event_id, user_id, enqueued_at) VALUES (?, ?, ?)",
                    (event_id, event.user_id, now),
                )
                added.append(event_id)
        return added, duplicates

    @staticmethod
    def _find_duplicate(conn: sqlite3.Connection, event: NewEvent) -> int | None:
        if event.external_id is not None:
            row = conn.execute(
                "SELECT id FROM events WHERE user_id = ? AND external_id = ?",
                (event.user_id, event.external_id),
            ).fetchone()
            if row is not None:
                return int(row[0])
        row = conn.execute(
            "SELECT id FROM events WHERE user_id = ? AND content_hash = ?",
            (event.user_id, event.content_hash),
        ).fetchone()
        return None if row is None else int(row[0])

    def load_event(self, event_id: int) -> StoredEvent | None:
        row = (
            self._conn()
            .execute(f"SELECT {_EVENT_COLUMNS} FROM events WHERE id = ?", (event_id,))
            .fetchone()
        )
        return None if row is None else _event_from_row(row)

    def event_refs(self, event_ids: Sequence[int]) -> dict[int, tuple[str, str]]:
        """What a caller knows events by: ``{id: (external id or ev_<id>, session id)}``."""
        if not event_ids:
            return {}
        marks = ",".join("?" * len(event_ids))
        rows = (
            self._conn()
            .execute(
                f"SELECT id, external_id, session_id FROM events WHERE id IN ({marks})",
                list(event_ids),
            )
            .fetchall()
        )
        return {int(r[0]): (r[1] if r[1] is not None else f"ev_{r[0]}", str(r[2])) for r in rows}

    def previous_event(self, event: StoredEvent) -> StoredEvent | None:
        row = (
            self._conn()
            .execute(
                f"SELECT {_EVENT_COLUMNS} FROM events WHERE user_id = ? AND session_id = ? "
                "AND (occurred_at < ? OR (occurred_at = ? AND id < ?)) "
                "ORDER BY occurred_at DESC, id DESC LIMIT 1",
                (event.user_id, event.session_id, event.occurred_at, event.occurred_at, event.id),
            )
            .fetchone()
        )
        return None if row is None else _event_from_row(row)

    def events_for_user(self, user_id: str) -> list[StoredEvent]:
        rows = (
            self._conn()
            .execute(
                f"SELECT {_EVENT_COLUMNS} FROM events WHERE user_id = ? ORDER BY occurred_at, id",
                (user_id,),
            )
            .fetchall()
        )
        return [_event_from_row(r) for r in rows]

    # -- the outbox -----------------------------------------------------------------------------

    def claim_jobs(self, worker: str, limit: int, lease_seconds: float) -> list[IndexJob]:
        now = time.time()
        with self._write() as conn:
            rows = conn.execute(
                "SELECT id, event_id, user_id FROM outbox "
                "WHERE (claimed_until IS NULL OR claimed_until < ?) AND attempts < 5 "
                "ORDER BY id LIMIT ?",
                (now, limit),
            ).fetchall()
            conn.executemany(
                "UPDATE outbox SET claimed_by = ?, claimed_until = ?, attempts = attempts + 1 "
                "WHERE id = ?",
                [(worker, now + lease_seconds, r[0]) for r in rows],
            )
        return [IndexJob(int(r[0]), int(r[1]), str(r[2])) for r in rows]

    def fail_job(self, job: IndexJob, worker: str, error: str) -> None:
        with self._write() as conn:
            conn.execute(
                "UPDATE outbox SET claimed_by = NULL, claimed_until = NULL, last_error = ? "
                "WHERE id = ? AND claimed_by = ?",
                (error[:2000], job.outbox_id, worker),
            )

    def pending_jobs(self, user_id: str | None = None) -> int:
        if user_id is None:
            row = self._conn().execute("SELECT count(*) FROM outbox WHERE attempts < 5").fetchone()
        else:
            row = (
                self._conn()
                .execute(
                    "SELECT count(*) FROM outbox WHERE user_id = ? AND attempts < 5", (user_id,)
                )
                .fetchone()
            )
        return int(row[0])

    def failed_jobs(self) -> list[dict[str, Any]]:
        rows = (
            self._conn()
            .execute(
                "SELECT event_id, user_id, attempts, last_error FROM outbox WHERE attempts >= 5"
            )
            .fetchall()
        )
        return [{"event_id": r[0], "user_id": r[1], "attempts": r[2], "error": r[3]} for r in rows]

    def commit_episodes(
        self,
        worker: str,
        done: Sequence[tuple[IndexJob, EpisodeRow | None]],
        then: Callable[[sqlite3.Connection], None] | None = None,
    ) -> None:
        """Write episodes and retire their jobs in one transaction: indexed exactly once.
        ``then`` writes what else was derived from the batch (facts) in the same transaction."""
        now = time.time()
        touched: set[tuple[str, str]] = set()
        with self._write() as conn:
            for job, episode in done:
                owned = conn.execute(
                    "SELECT 1 FROM outbox WHERE id = ? AND claimed_by = ?", (job.outbox_id, worker)
                ).fetchone()
                if owned is None:
                    continue  # another worker took the job over after our lease expired
                conn.execute("DELETE FROM outbox WHERE id = ?", (job.outbox_id,))
                if episode is None:
                    continue  # the event was deleted meanwhile: nothing to index
                if not conn.execute(
                    "SELECT 1 FROM events WHERE id = ?", (episode.focus_event_id,)
                ).fetchone():
                    continue
                self._remove_episode_of_event(conn, episode.focus_event_id)
                episode_id = self._insert_episode(conn, episode, now)
                self._bump(conn, episode.user_id, changed=False)
                self._requeue_stale_successor(conn, episode, episode_id, now)
                touched.add((episode.user_id, episode.session_id))
            for user_id, session_id in touched:
                _refresh_digest(conn, user_id, session_id)
            if then is not None:
                then(conn)

    @staticmethod
    def _insert_episode(conn: sqlite3.Connection, episode: EpisodeRow, now: float) -> int:
        cursor = conn.execute(
            "INSERT INTO episodes(user_id, session_id, kind, focus_event_id, context_event_id, "
            "event_ids, source_ids, speaker, prefix, body, context, occurred_at, indexed_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                episode.user_id,
                episode.session_id,
                episode.kind,
                episode.focus_event_id,
                episode.context_event_id,
                json.dumps(list(episode.event_ids)),
                json.dumps(list(episode.source_ids), ensure_ascii=False),
                episode.speaker,
                episode.prefix,
                episode.body,
                episode.context,
                episode.occurred_at,
                now,
            ),
        )
        episode_id = int(cursor.lastrowid or 0)
        conn.execute(
            "INSERT INTO episode_vectors(episode_id, user_id, vector) VALUES (?, ?, ?)",
            (episode_id, episode.user_id, np.asarray(episode.vector, dtype=np.float32).tobytes()),
        )
        conn.execute(
            "INSERT INTO episodes_fts(rowid, scope, body, context) VALUES (?, ?, ?, ?)",
            (episode_id, scope_token(episode.user_id), episode.body_terms, episode.context_terms),
        )
        return episode_id

    @staticmethod
    def _requeue_stale_successor(
        conn: sqlite3.Connection, episode: EpisodeRow, episode_id: int, now: float
    ) -> None:
        """A turn inserted out of order changes the context of the turn after it: re-index that."""
        row = conn.execute(
            "SELECT id FROM events WHERE user_id = ? AND session_id = ? "
            "AND (occurred_at > ? OR (occurred_at = ? AND id > ?)) "
            "ORDER BY occurred_at, id LIMIT 1",
            (
                episode.user_id,
                episode.session_id,
                episode.occurred_at,
                episode.occurred_at,
                episode.focus_event_id,
            ),
        ).fetchone()
        if row is None:
            return
        successor = int(row[0])
        indexed = conn.execute(
            "SELECT context_event_id FROM episodes WHERE focus_event_id = ?", (successor,)
        ).fetchone()
        if indexed is not None and indexed[0] != episode.focus_event_id:
            _enqueue(conn, successor, episode.user_id, now)

    def _remove_episode_of_event(self, conn: sqlite3.Connection, event_id: int) -> str | None:
        row = conn.execute(
            "SELECT id, user_id FROM episodes WHERE focus_event_id = ?", (event_id,)
        ).fetchone()
        if row is None:
            return None
        self._remove_episode(conn, int(row[0]), str(row[1]))
        return str(row[1])

    def _remove_episode(self, conn: sqlite3.Connection, episode_id: int, user_id: str) -> None:
        conn.execute("DELETE FROM episodes WHERE id = ?", (episode_id,))
        conn.execute("DELETE FROM episode_vectors WHERE episode_id = ?", (episode_id,))
        conn.execute("DELETE FROM episodes_fts WHERE rowid = ?", (episode_id,))
        self._bump(conn, user_id, changed=True)

    @staticmethod
    def _bump(conn: sqlite3.Connection, user_id: str, changed: bool) -> None:
        conn.execute(
            "INSERT INTO user_state(user_id, added_gen, changed_gen) VALUES (?, 1, ?) "
            "ON CONFLICT(user_id) DO UPDATE SET added_gen = added_gen + 1, "
            "changed_gen = changed_gen + excluded.changed_gen",
            (user_id, 1 if changed else 0),
        )

    # -- reads --------------------------------------------------------------------------------

    def has_user(self, user_id: str) -> bool:
        row = (
            self._conn()
            .execute("SELECT 1 FROM events WHERE user_id = ? LIMIT 1", (user_id,))
            .fetchone()
        )
        return row is not None

    def lexical_search(
        self,
        user_id: str,
        terms: Sequence[str],
        limit: int,
        time_range: tuple[float, float] | None,
        context_weight: float = 0.35,
    ) -> list[tuple[int, float]]:
        """BM25 over analyzed terms, scoped by the user's token inside the FTS5 query."""
        match = scoped_any_match(user_id, "{body context}", terms)
        if match is None:
            return []
        sql = "SELECT f.rowid, bm25(episodes_fts, 0.0, 1.0, ?) AS rank FROM episodes_fts AS f "
        params: list[Any] = [context_weight]
        if time_range is not None:
            sql += "JOIN episodes AS e ON e.id = f.rowid WHERE episodes_fts MATCH ? "
            sql += "AND e.occurred_at >= ? AND e.occurred_at <= ? "
            params += [match, time_range[0], time_range[1]]
        else:
            sql += "WHERE episodes_fts MATCH ? "
            params.append(match)
        sql += "ORDER BY rank LIMIT ?"
        params.append(limit)
        rows = self._conn().execute(sql, params).fetchall()
        return [(int(r[0]), -float(r[1])) for r in rows]

    def phrase_matches(self, user_id: str, terms: Sequence[str], limit: int) -> list[int]:
        """Episodes whose text holds ``terms`` as one consecutive phrase (an exact mention)."""
        phrase = " ".join(t.replace('"', "") for t in terms if t)
        if not phrase:
            return []
        match = f'scope : "{scope_token(user_id)}" AND body : "{phrase}"'
        rows = (
            self._conn()
            .execute(
                "SELECT rowid FROM episodes_fts WHERE episodes_fts MATCH ? LIMIT ?", (match, limit)
            )
            .fetchall()
        )
        return [int(r[0]) for r in rows]

    def session_search(
        self, user_id: str, terms: Sequence[str], limit: int
    ) -> list[tuple[str, float, str]]:
        """BM25 over session digests: (session id, score, digest keywords)."""
        match = scoped_any_match(user_id, "body", terms)
        if match is None:
            return []
        rows = (
            self._conn()
            .execute(
                "SELECT d.session_id, bm25(session_fts, 0.0, 1.0) AS rank, d.keywords "
                "FROM session_fts AS f JOIN session_digests AS d ON d.id = f.rowid "
                "WHERE session_fts MATCH ? ORDER BY rank LIMIT ?",
                (match, limit),
            )
            .fetchall()
        )
        return [(str(r[0]), -float(r[1]), str(r[2])) for r in rows]

    def rebuild_missing_digests(self) -> int:
        """Stores indexed before digests existed get them from their episodes (no re-embedding)."""
        with self._write() as conn:
            missing = conn.execute(
                "SELECT DISTINCT e.user_id, e.session_id FROM episodes AS e "
                "LEFT JOIN session_digests AS d "
                "ON d.user_id = e.user_id AND d.session_id = e.session_id WHERE d.id IS NULL"
            ).fetchall()
            for user_id, session_id in missing:
                _refresh_digest(conn, str(user_id), str(session_id))
        return len(missing)

    def user_generation(self, user_id: str) -> tuple[int, int]:
        row = (
            self._conn()
            .execute("SELECT added_gen, changed_gen FROM user_state WHERE user_id = ?", (user_id,))
            .fetchone()
        )
        return (0, 0) if row is None else (int(row[0]), int(row[1]))

    def user_vectors(self, user_id: str, after_id: int = 0) -> UserVectors:
        rows = (
            self._conn()
            .execute(
                "SELECT v.episode_id, e.occurred_at, v.vector, e.session_id, e.kind, "
                "COALESCE(json_extract(ev.metadata, '$.pinned'), 0) "
                "FROM episode_vectors AS v "
                "JOIN episodes AS e ON e.id = v.episode_id "
                "LEFT JOIN events AS ev ON ev.id = e.focus_event_id "
                "WHERE v.user_id = ? AND v.episode_id > ? ORDER BY v.episode_id",
                (user_id, after_id),
            )
            .fetchall()
        )
        if not rows:
            return UserVectors(
                np.zeros(0, dtype=np.int64),
                np.zeros(0),
                np.zeros((0, 0), dtype=np.float32),
                [],
                [],
                np.zeros(0, dtype=np.bool_),
            )
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        times = np.fromiter((r[1] for r in rows), dtype=np.float64, count=len(rows))
        matrix = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(
            len(rows), -1
        )
        pinned = np.fromiter((bool(r[5]) for r in rows), dtype=np.bool_, count=len(rows))
        return UserVectors(
            ids, times, matrix, [str(r[3]) for r in rows], [str(r[4]) for r in rows], pinned
        )

    def episodes(self, ids: Sequence[int]) -> dict[int, StoredEpisode]:
        found: dict[int, StoredEpisode] = {}
        conn = self._conn()
        for start in range(0, len(ids), _IN_CHUNK):
            chunk = list(ids[start : start + _IN_CHUNK])
            marks = ",".join("?" * len(chunk))
            for row in conn.execute(
                f"SELECT {_EPISODE_COLUMNS} FROM episodes WHERE id IN ({marks})", chunk
            ):
                found[int(row[0])] = _episode_from_row(row)
        return found

    def episodes_for_user(self, user_id: str) -> list[StoredEpisode]:
        rows = (
            self._conn()
            .execute(
                f"SELECT {_EPISODE_COLUMNS} FROM episodes WHERE user_id = ? "
                "ORDER BY occurred_at, id",
                (user_id,),
            )
            .fetchall()
        )
        return [_episode_from_row(r) for r in rows]

    # -- deletion -------------------------------------------------------------------------------

    def delete_event(self, event_id: int, user_id: str | None = None) -> bool:
        """Remove a message from the log and every index; re-index the turn that quoted it."""
        now = time.time()
        with self._write() as conn:
            row = conn.execute(
                "SELECT user_id, session_id FROM events WHERE id = ?", (event_id,)
            ).fetchone()
            if row is None or (user_id is not None and row[0] != user_id):
                return False
            user_id, session_id = str(row[0]), str(row[1])
            self._remove_episode_of_event(conn, event_id)
            conn.execute("DELETE FROM outbox WHERE event_id = ?", (event_id,))
            for hook in self.on_delete_events:  # before the row goes: hooks may read it
                hook(conn, [event_id])
            conn.execute("DELETE FROM events WHERE id = ?", (event_id,))
            quoting = conn.execute(
                "SELECT focus_event_id FROM episodes WHERE context_event_id = ?", (event_id,)
            ).fetchall()
            for (successor,) in quoting:
                # Drop the stale episode now so the deleted text is gone from every index at once.
                self._remove_episode_of_event(conn, int(successor))
                _enqueue(conn, int(successor), user_id, now)
            self._bump(conn, user_id, changed=True)
            _refresh_digest(conn, user_id, session_id)
            _purge_lexical_remnants(conn)
        return True

    def episode_focus(self, episode_id: int) -> int | None:
        row = (
            self._conn()
            .execute("SELECT focus_event_id FROM episodes WHERE id = ?", (episode_id,))
            .fetchone()
        )
        return None if row is None else int(row[0])

    def event_by_external_id(self, user_id: str, external_id: str) -> int | None:
        row = (
            self._conn()
            .execute(
                "SELECT id FROM events WHERE user_id = ? AND external_id = ?",
                (user_id, external_id),
            )
            .fetchone()
        )
        return None if row is None else int(row[0])

    def forget_user(self, user_id: str) -> dict[str, int]:
        with self._write() as conn:
            episode_ids = [
                r[0] for r in conn.execute("SELECT id FROM episodes WHERE user_id = ?", (user_id,))
            ]
            for start in range(0, len(episode_ids), _IN_CHUNK):
                chunk = episode_ids[start : start + _IN_CHUNK]
                marks = ",".join("?" * len(chunk))
                conn.execute(f"DELETE FROM episodes_fts WHERE rowid IN ({marks})", chunk)
            counts = {
                "events": conn.execute("DELETE FROM events WHERE user_id = ?", (user_id,)).rowcount,
                "episodes": conn.execute(
                    "DELETE FROM episodes WHERE user_id = ?", (user_id,)
                ).rowcount,
                "vectors": conn.execute(
                    "DELETE FROM episode_vectors WHERE user_id = ?", (user_id,)
                ).rowcount,
                "pending_jobs": conn.execute(
                    "DELETE FROM outbox WHERE user_id = ?", (user_id,)
                ).rowcount,
            }
            conn.execute("DELETE FROM user_state WHERE user_id = ?", (user_id,))
            digest_ids = [
                r[0]
                for r in conn.execute(
                    "SELECT id FROM session_digests WHERE user_id = ?", (user_id,)
                )
            ]
            conn.executemany("DELETE FROM session_fts WHERE rowid = ?", [(i,) for i in digest_ids])
            conn.execute("DELETE FROM session_digests WHERE user_id = ?", (user_id,))
            for hook in self.on_forget_user:
                hook(conn, user_id)
            _purge_lexical_remnants(conn)
        self._conn().execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return counts

    # -- export and stats -----------------------------------------------------------------------

    def export_user(self, user_id: str) -> dict[str, Any]:
        events = self.events_for_user(user_id)
        episodes = self.episodes_for_user(user_id)
        return {
            "user_id": user_id,
            "events": [
                {
                    "id": e.id,
                    "source_id": e.source_id,
                    "session_id": e.session_id,
                    "kind": e.kind,
                    "role": e.role,
                    "name": e.name,
                    "content": e.content,
                    "metadata": e.metadata,
                    "occurred_at": e.occurred_at,
                    "recorded_at": e.recorded_at,
                    "external_id": e.external_id,
                }
                for e in events
            ],
            "episodes": [
                {
                    "id": f"ep_{ep.id}",
                    "kind": ep.kind,
                    "session_id": ep.session_id,
                    "speaker": ep.speaker,
                    "prefix": ep.prefix,
                    "text": ep.body,
                    "context": ep.context,
                    "source_ids": list(ep.source_ids),
                    "occurred_at": ep.occurred_at,
                }
                for ep in episodes
            ],
        }

    def stats(self) -> dict[str, Any]:
        conn = self._conn()

        def count(sql: str) -> int:
            return int(conn.execute(sql).fetchone()[0])

        return {
            "users": count("SELECT count(DISTINCT user_id) FROM events"),
            "sessions": count(
                "SELECT count(*) FROM (SELECT DISTINCT user_id, session_id FROM events)"
            ),
            "events": count("SELECT count(*) FROM events"),
            "episodes": count("SELECT count(*) FROM episodes"),
            "vectors": count("SELECT count(*) FROM episode_vectors"),
            "facts": count("SELECT count(*) FROM facts WHERE status != 'superseded'"),
            "fact_versions": count("SELECT count(*) FROM facts"),
            "alerts": count("SELECT count(*) FROM alerts"),
            "pending_jobs": count("SELECT count(*) FROM outbox WHERE attempts < 5"),
            "failed_jobs": count("SELECT count(*) FROM outbox WHERE attempts >= 5"),
            "embedder": self.meta("embedder"),
            "embedder_dim": self.meta("embedder_dim"),
            "database_bytes": sum(
                p.stat().st_size for p in self.path.parent.glob(self.path.name + "*") if p.is_file()
            ),
        }

    def integrity(self) -> dict[str, int]:
        """Cross-index counts a test or an operator can compare: all equal when consistent."""
        conn = self._conn()
        return {
            "episodes": int(conn.execute("SELECT count(*) FROM episodes").fetchone()[0]),
            "vectors": int(conn.execute("SELECT count(*) FROM episode_vectors").fetchone()[0]),
            "fts": int(conn.execute("SELECT count(*) FROM episodes_fts").fetchone()[0]),
            "orphan_episodes": int(
                conn.execute(
                    "SELECT count(*) FROM episodes "
                    "WHERE focus_event_id NOT IN (SELECT id FROM events)"
                ).fetchone()[0]
            ),
            "events_without_episode": int(
                conn.execute(
                    "SELECT count(*) FROM events WHERE id NOT IN "
                    "(SELECT focus_event_id FROM episodes) "
                    "AND id NOT IN (SELECT event_id FROM outbox)"
                ).fetchone()[0]
            ),
        }


def _purge_lexical_remnants(conn: sqlite3.Connection) -> None:
    """FTS5 keeps deleted terms in old segments until they merge; merge now so that a deleted
    memory's words are gone from the file, not just from query results."""
    conn.execute("INSERT INTO episodes_fts(episodes_fts) VALUES ('optimize')")
    conn.execute("INSERT INTO session_fts(session_fts) VALUES ('optimize')")
    conn.execute("INSERT INTO facts_fts(facts_fts) VALUES ('optimize')")


def _refresh_digest(conn: sqlite3.Connection, user_id: str, session_id: str) -> None:
    """Rebuild one session's digest from its episodes' analyzed terms."""
    old = conn.execute(
        "SELECT id FROM session_digests WHERE user_id = ? AND session_id = ?",
        (user_id, session_id),
    ).fetchone()
    if old is not None:
        conn.execute("DELETE FROM session_fts WHERE rowid = ?", (old[0],))
        conn.execute("DELETE FROM session_digests WHERE id = ?", (old[0],))
    rows = conn.execute(
        "SELECT f.body, e.occurred_at FROM episodes AS e JOIN episodes_fts AS f ON f.rowid = e.id "
        "WHERE e.user_id = ? AND e.session_id = ? ORDER BY e.occurred_at, e.id",
        (user_id, session_id),
    ).fetchall()
    if not rows:
        return
    terms = " ".join(str(r[0]) for r in rows)
    counts: dict[str, int] = {}
    for term in terms.split():
        counts[term] = counts.get(term, 0) + 1
    keywords = sorted(counts, key=lambda t: (-counts[t], t))[:12]
    cursor = conn.execute(
        "INSERT INTO session_digests(user_id, session_id, turns, started_at, ended_at, keywords) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (user_id, session_id, len(rows), rows[0][1], rows[-1][1], " ".join(keywords)),
    )
    conn.execute(
        "INSERT INTO session_fts(rowid, scope, body) VALUES (?, ?, ?)",
        (cursor.lastrowid, scope_token(user_id), terms),
    )


def _enqueue(conn: sqlite3.Connection, event_id: int, user_id: str, now: float) -> None:
    pending = conn.execute(
        "SELECT 1 FROM outbox WHERE event_id = ? AND claimed_by IS NULL", (event_id,)
    ).fetchone()
    if pending is None:
        conn.execute(
            "INSERT INTO outbox(event_id, user_id, enqueued_at) VALUES (?, ?, ?)",
            (event_id, user_id, now),
        )


def _event_from_row(row: Sequence[Any]) -> StoredEvent:
    return StoredEvent(
        id=int(row[0]),
        user_id=str(row[1]),
        session_id=str(row[2]),
        kind=str(row[3]),
        role=str(row[4]),
        name=row[5],
        content=str(row[6]),
        metadata=json.loads(row[7]),
        occurred_at=float(row[8]),
        recorded_at=float(row[9]),
        external_id=row[10],
    )


def _episode_from_row(row: Sequence[Any]) -> StoredEpisode:
    return StoredEpisode(
        id=int(row[0]),
        user_id=str(row[1]),
        session_id=str(row[2]),
        kind=str(row[3]),
        focus_event_id=int(row[4]),
        event_ids=tuple(json.loads(row[5])),
        source_ids=tuple(json.loads(row[6])),
        speaker=row[7],
        prefix=str(row[8]),
        body=str(row[9]),
        context=str(row[10]),
        occurred_at=float(row[11]),
    )
