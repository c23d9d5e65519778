"""The append-only event log and its outbox of indexing jobs (the write path's queue)."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from typing import Any

from madeleine.store.records import IndexJob, NewEvent, StoredEvent, Transaction
from madeleine.store.sqlite.connection import Connections, conn_of

EVENT_COLUMNS = (
    "id, user_id, session_id, kind, role, name, content, metadata, occurred_at, recorded_at, "
    "external_id"
)
# A job claimed this many times without success is dead-lettered: kept, reported, retried
# only on request (``retry_failed``).
MAX_ATTEMPTS = 5


class LogTables:
    """The ``events`` and ``outbox`` tables of the SQLite store."""

    _db: Connections

    def append_events(self, events: Sequence[NewEvent]) -> tuple[list[int], list[int]]:
        """Insert new events and their outbox jobs atomically; return (added ids, duplicate ids)."""
        added: list[int] = []
        duplicates: list[int] = []
        now = time.time()
        with self._db.write() as conn:
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
                        json.dumps(event.metadata, ensure_ascii=False, allow_nan=False),
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
            self._db.get()
            .execute(f"SELECT {EVENT_COLUMNS} FROM events WHERE id = ?", (event_id,))
            .fetchone()
        )
        return None if row is None else _event_from_row(row)

    def event_refs(self, event_ids: Sequence[int]) -> dict[int, tuple[str, str]]:
        """What a caller knows events by: ``{id: (external id or ev_<id>, session id)}``."""
        if not event_ids:
            return {}
        marks = ",".join("?" * len(event_ids))
        rows = (
            self._db.get()
            .execute(
                f"SELECT id, external_id, session_id FROM events WHERE id IN ({marks})",
                list(event_ids),
            )
            .fetchall()
        )
        return {int(r[0]): (r[1] if r[1] is not None else f"ev_{r[0]}", str(r[2])) for r in rows}

    def previous_event(self, event: StoredEvent) -> StoredEvent | None:
        row = (
            self._db.get()
            .execute(
                f"SELECT {EVENT_COLUMNS} FROM events WHERE user_id = ? AND session_id = ? "
                "AND (occurred_at < ? OR (occurred_at = ? AND id < ?)) "
                "ORDER BY occurred_at DESC, id DESC LIMIT 1",
                (event.user_id, event.session_id, event.occurred_at, event.occurred_at, event.id),
            )
            .fetchone()
        )
        return None if row is None else _event_from_row(row)

    def events_for_user(self, user_id: str) -> list[StoredEvent]:
        rows = (
            self._db.get()
            .execute(
                f"SELECT {EVENT_COLUMNS} FROM events WHERE user_id = ? ORDER BY occurred_at, id",
                (user_id,),
            )
            .fetchall()
        )
        return [_event_from_row(r) for r in rows]

    def has_user(self, user_id: str) -> bool:
        row = (
            self._db.get()
            .execute("SELECT 1 FROM events WHERE user_id = ? LIMIT 1", (user_id,))
            .fetchone()
        )
        return row is not None

    def user_ids(self) -> list[str]:
        rows = self._db.get().execute("SELECT DISTINCT user_id FROM events ORDER BY user_id")
        return [str(r[0]) for r in rows]

    def event_by_external_id(self, user_id: str, external_id: str) -> int | None:
        row = (
            self._db.get()
            .execute(
                "SELECT id FROM events WHERE user_id = ? AND external_id = ?",
                (user_id, external_id),
            )
            .fetchone()
        )
        return None if row is None else int(row[0])

    def claim_jobs(self, worker: str, limit: int, lease_seconds: float) -> list[IndexJob]:
        now = time.time()
        with self._db.write() as conn:
            rows = conn.execute(
                "SELECT id, event_id, user_id FROM outbox "
                "WHERE (claimed_until IS NULL OR claimed_until < ?) AND attempts < ? "
                "ORDER BY id LIMIT ?",
                (now, MAX_ATTEMPTS, limit),
            ).fetchall()
            conn.executemany(
                "UPDATE outbox SET claimed_by = ?, claimed_until = ?, attempts = attempts + 1 "
                "WHERE id = ?",
                [(worker, now + lease_seconds, r[0]) for r in rows],
            )
        return [IndexJob(int(r[0]), int(r[1]), str(r[2])) for r in rows]

    def fail_job(self, job: IndexJob, worker: str, error: str) -> None:
        with self._db.write() as conn:
            conn.execute(
                "UPDATE outbox SET claimed_by = NULL, claimed_until = NULL, last_error = ? "
                "WHERE id = ? AND claimed_by = ?",
                (error[:2000], job.outbox_id, worker),
            )

    def pending_jobs(self, user_id: str | None = None) -> int:
        if user_id is None:
            row = (
                self._db.get()
                .execute("SELECT count(*) FROM outbox WHERE attempts < ?", (MAX_ATTEMPTS,))
                .fetchone()
            )
        else:
            row = (
                self._db.get()
                .execute(
                    "SELECT count(*) FROM outbox WHERE user_id = ? AND attempts < ?",
                    (user_id, MAX_ATTEMPTS),
                )
                .fetchone()
            )
        return int(row[0])

    def failed_jobs(self, limit: int | None = None) -> list[dict[str, Any]]:
        rows = (
            self._db.get()
            .execute(
                "SELECT event_id, user_id, attempts, last_error FROM outbox WHERE attempts >= ? "
                "ORDER BY id LIMIT ?",
                (MAX_ATTEMPTS, -1 if limit is None else limit),
            )
            .fetchall()
        )
        return [{"event_id": r[0], "user_id": r[1], "attempts": r[2], "error": r[3]} for r in rows]

    def renew_jobs(self, jobs: Sequence[IndexJob], worker: str, lease_seconds: float) -> None:
        """The worker is alive and still on these jobs: push their lease forward."""
        if not jobs:
            return
        with self._db.write() as conn:
            conn.executemany(
                "UPDATE outbox SET claimed_until = ? WHERE id = ? AND claimed_by = ?",
                [(time.time() + lease_seconds, job.outbox_id, worker) for job in jobs],
            )

    def retry_failed(self) -> int:
        """Dead-lettered jobs go back to the queue with a fresh count of attempts."""
        with self._db.write() as conn:
            return int(
                conn.execute(
                    "UPDATE outbox SET attempts = 0, claimed_by = NULL, claimed_until = NULL "
                    "WHERE attempts >= ?",
                    (MAX_ATTEMPTS,),
                ).rowcount
            )

    def events_exist(self, tx: Transaction, event_ids: Sequence[int]) -> bool:
        """Whether any of these events is still in the log (inside the caller's transaction)."""
        conn = conn_of(tx)
        return any(
            conn.execute("SELECT 1 FROM events WHERE id = ?", (event_id,)).fetchone()
            for event_id in event_ids
        )


def enqueue(conn: sqlite3.Connection, event_id: int, user_id: str, now: float) -> None:
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
