"""The event log and its outbox on PostgreSQL. Jobs are claimed with ``FOR UPDATE SKIP
LOCKED``: any number of workers take disjoint batches without waiting on each other, and a
dead worker's batch is taken over once its lease runs out."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from psycopg.types.json import Jsonb

from madeleine.store.postgres.connection import Database, conn_of
from madeleine.store.records import IndexJob, NewEvent, StoredEvent, Transaction

EVENT_COLUMNS = (
    "id, user_id, session_id, kind, role, name, content, metadata, occurred_at, recorded_at, "
    "external_id"
)
# claimed this many times without success: dead-lettered (kept, reported, retried on request)
MAX_ATTEMPTS = 5


class PgLog:
    """The ``events`` and ``outbox`` tables."""

    _db: Database

    def append_events(self, events: Sequence[NewEvent]) -> tuple[list[int], list[int]]:
        """Insert new events and their outbox jobs atomically; (added ids, duplicate ids)."""
        added: list[int] = []
        duplicates: list[int] = []
        now = time.time()
        with self._db.connect() as conn:
            for event in events:
                existing = _find_duplicate(conn, event)
                if existing is not None:
                    duplicates.append(existing)
                    continue
                # a concurrent writer may insert the same message between the check and
                # here: ON CONFLICT makes the second one a duplicate instead of an error
                row = conn.execute(
                    """INSERT INTO events(user_id, session_id, kind, role, name, content,
                       metadata, occurred_at, recorded_at, content_hash, external_id)
                       VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
                       ON CONFLICT DO NOTHING RETURNING id""",
                    (
                        event.user_id,
                        event.session_id,
                        event.kind,
                        event.role,
                        event.name,
                        event.content,
                        Jsonb(event.metadata),
                        event.occurred_at,
                        now,
                        event.content_hash,
                        event.external_id,
                    ),
                ).fetchone()
                if row is None:
                    again = _find_duplicate(conn, event)
                    if again is not None:
                        duplicates.append(again)
                    continue
                conn.execute(
                    "INSERT INTO outbox(event_id, user_id, enqueued_at) VALUES (%s, %s, %s)",
                    (row[0], event.user_id, now),
                )
                added.append(int(row[0]))
        return added, duplicates

    def load_event(self, event_id: int) -> StoredEvent | None:
        with self._db.connect() as conn:
            row = conn.execute(
                f"SELECT {EVENT_COLUMNS} FROM events WHERE id = %s", (event_id,)
            ).fetchone()
        return None if row is None else _event(row)

    def event_refs(self, event_ids: Sequence[int]) -> dict[int, tuple[str, str]]:
        """What a caller knows events by: ``{id: (external id or ev_<id>, session id)}``."""
        if not event_ids:
            return {}
        with self._db.connect() as conn:
            rows = conn.execute(
                "SELECT id, external_id, session_id FROM events WHERE id = ANY(%s)",
                (list(event_ids),),
            ).fetchall()
        return {int(r[0]): (r[1] if r[1] is not None else f"ev_{r[0]}", str(r[2])) for r in rows}

    def previous_event(self, event: StoredEvent) -> StoredEvent | None:
        with self._db.connect() as conn:
            row = conn.execute(
                f"""SELECT {EVENT_COLUMNS} FROM events WHERE user_id = %s AND session_id = %s
                AND (occurred_at, id) < (%s, %s) ORDER BY occurred_at DESC, id DESC LIMIT 1""",
                (event.user_id, event.session_id, event.occurred_at, event.id),
            ).fetchone()
        return None if row is None else _event(row)

    def events_for_user(self, user_id: str) -> list[StoredEvent]:
        with self._db.connect() as conn:
            rows = conn.execute(
                f"SELECT {EVENT_COLUMNS} FROM events WHERE user_id = %s ORDER BY occurred_at, id",
                (user_id,),
            ).fetchall()
        return [_event(r) for r in rows]

    def has_user(self, user_id: str) -> bool:
        with self._db.connect() as conn:
            row = conn.execute(
                "SELECT 1 FROM events WHERE user_id = %s LIMIT 1", (user_id,)
            ).fetchone()
        return row is not None

    def user_ids(self) -> list[str]:
        with self._db.connect() as conn:
            rows = conn.execute("SELECT DISTINCT user_id FROM events ORDER BY user_id").fetchall()
        return [str(r[0]) for r in rows]

    def event_by_external_id(self, user_id: str, external_id: str) -> int | None:
        with self._db.connect() as conn:
            row = conn.execute(
                "SELECT id FROM events WHERE user_id = %s AND external_id = %s",
                (user_id, external_id),
            ).fetchone()
        return None if row is None else int(row[0])

    def claim_jobs(self, worker: str, limit: int, lease_seconds: float) -> list[IndexJob]:
        now = time.time()
        with self._db.connect() as conn:
            rows = conn.execute(
                """UPDATE outbox o SET claimed_by = %s, claimed_until = %s,
                       attempts = o.attempts + 1
                   FROM (SELECT id FROM outbox
                         WHERE (claimed_until IS NULL OR claimed_until < %s) AND attempts < %s
                         ORDER BY id LIMIT %s FOR UPDATE SKIP LOCKED) ready
                   WHERE o.id = ready.id
                   RETURNING o.id, o.event_id, o.user_id""",
                (worker, now + lease_seconds, now, MAX_ATTEMPTS, limit),
            ).fetchall()
        rows.sort(key=lambda r: r[0])
        return [IndexJob(int(r[0]), int(r[1]), str(r[2])) for r in rows]

    def fail_job(self, job: IndexJob, worker: str, error: str) -> None:
        with self._db.connect() as conn:
            conn.execute(
                """UPDATE outbox SET claimed_by = NULL, claimed_until = NULL, last_error = %s
                   WHERE id = %s AND claimed_by = %s""",
                (error[:2000], job.outbox_id, worker),
            )

    def pending_jobs(self, user_id: str | None = None) -> int:
        with self._db.connect() as conn:
            if user_id is None:
                row = conn.execute(
                    "SELECT count(*) FROM outbox WHERE attempts < %s", (MAX_ATTEMPTS,)
                ).fetchone()
            else:
                row = conn.execute(
                    "SELECT count(*) FROM outbox WHERE user_id = %s AND attempts < %s",
                    (user_id, MAX_ATTEMPTS),
                ).fetchone()
        return int(row[0])

    def failed_jobs(self, limit: int | None = None) -> list[dict[str, Any]]:
        with self._db.connect() as conn:
            rows = conn.execute(
                """SELECT event_id, user_id, attempts, last_error FROM outbox
                   WHERE attempts >= %s ORDER BY id LIMIT %s""",
                (MAX_ATTEMPTS, limit),
            ).fetchall()
        return [{"event_id": r[0], "user_id": r[1], "attempts": r[2], "error": r[3]} for r in rows]

    def renew_jobs(self, jobs: Sequence[IndexJob], worker: str, lease_seconds: float) -> None:
        """The worker is alive and still on these jobs: push their lease forward."""
        if not jobs:
            return
        with self._db.connect() as conn:
            conn.execute(
                "UPDATE outbox SET claimed_until = %s WHERE id = ANY(%s) AND claimed_by = %s",
                (time.time() + lease_seconds, [job.outbox_id for job in jobs], worker),
            )

    def retry_failed(self) -> int:
        """Dead-lettered jobs go back to the queue with a fresh count of attempts."""
        with self._db.connect() as conn:
            cursor = conn.execute(
                """UPDATE outbox SET attempts = 0, claimed_by = NULL, claimed_until = NULL
                   WHERE attempts >= %s""",
                (MAX_ATTEMPTS,),
            )
            return int(cursor.rowcount)

    def events_exist(self, tx: Transaction, event_ids: Sequence[int]) -> bool:
        """Whether any of these events is still in the log (inside the caller's transaction)."""
        row = (
            conn_of(tx)
            .execute("SELECT 1 FROM events WHERE id = ANY(%s) LIMIT 1", (list(event_ids),))
            .fetchone()
        )
        return row is not None


def enqueue(conn: Any, event_id: int, user_id: str, now: float) -> None:
    """Queue the event for indexing again unless a job for it is waiting unclaimed."""
    conn.execute(
        """INSERT INTO outbox(event_id, user_id, enqueued_at)
           SELECT %s, %s, %s WHERE NOT EXISTS
           (SELECT 1 FROM outbox WHERE event_id = %s AND claimed_by IS NULL)""",
        (event_id, user_id, now, event_id),
    )


def _find_duplicate(conn: Any, event: NewEvent) -> int | None:
    if event.external_id is not None:
        row = conn.execute(
            "SELECT id FROM events WHERE user_id = %s AND external_id = %s",
            (event.user_id, event.external_id),
        ).fetchone()
        if row is not None:
            return int(row[0])
    row = conn.execute(
        "SELECT id FROM events WHERE user_id = %s AND content_hash = %s",
        (event.user_id, event.content_hash),
    ).fetchone()
    return None if row is None else int(row[0])


def _event(row: Sequence[Any]) -> StoredEvent:
    return StoredEvent(
        id=int(row[0]),
        user_id=str(row[1]),
        session_id=str(row[2]),
        kind=str(row[3]),
        role=str(row[4]),
        name=row[5],
        content=str(row[6]),
        metadata=dict(row[7]),
        occurred_at=float(row[8]),
        recorded_at=float(row[9]),
        external_id=row[10],
    )
