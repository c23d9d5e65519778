"""The PostgreSQL backend's migrations, event log and outbox, on a real server."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import psycopg
import pytest
from cryptography.fernet import Fernet

from madeleine.store.postgres.log import MAX_ATTEMPTS
from madeleine.store.postgres.migrations import current_version, migrate, migrations
from madeleine.store.postgres.store import PostgresStore
from madeleine.store.records import NewEvent


@pytest.fixture
def pg(pg_url: str, pg_schema: str) -> Iterator[PostgresStore]:
    store = PostgresStore(pg_url, schema=pg_schema, vault_key=Fernet.generate_key())
    yield store
    store.close()


def _event(n: int, user: str = "u1", external: str | None = None) -> NewEvent:
    return NewEvent(
        user_id=user,
        session_id="s1",
        kind="message",
        role="user",
        name=None,
        content=f"message {n}",
        metadata={"n": n},
        occurred_at=1_700_000_000.0 + n,
        content_hash=f"hash-{user}-{n}",
        external_id=external,
    )


def test_migrations_apply_once_when_processes_start_together(pg_url: str, pg_schema: str) -> None:
    latest = len(migrations())
    threads = [threading.Thread(target=migrate, args=(pg_url, pg_schema)) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with psycopg.connect(pg_url) as conn:
        assert current_version(conn, pg_schema) == latest
        rows = conn.execute(f"SELECT version FROM {pg_schema}.schema_migrations").fetchall()
    assert sorted(r[0] for r in rows) == list(range(1, latest + 1))  # each applied once
    assert migrate(pg_url, pg_schema) == []
    with pytest.raises(ValueError, match="schema name"):
        migrate(pg_url, "bad; DROP TABLE x")


def test_events_are_appended_once_with_their_jobs(pg: PostgresStore) -> None:
    added, duplicates = pg.append_events([_event(1), _event(2, external="m2"), _event(1)])
    assert len(added) == 2 and duplicates == [added[0]]
    again, dup = pg.append_events([_event(2, external="m2"), _event(3)])
    assert dup == [added[1]] and len(again) == 1
    assert pg.pending_jobs() == 3 and pg.pending_jobs("u1") == 3 and pg.pending_jobs("u2") == 0
    event = pg.load_event(added[1])
    assert event is not None and event.metadata == {"n": 2} and event.source_id == "m2"
    previous = pg.previous_event(event)
    assert previous is not None and previous.id == added[0]
    assert [e.id for e in pg.events_for_user("u1")] == [*added, *again]
    assert pg.event_refs([added[0], added[1]]) == {
        added[0]: (f"ev_{added[0]}", "s1"),
        added[1]: ("m2", "s1"),
    }
    assert pg.event_by_external_id("u1", "m2") == added[1]
    assert pg.has_user("u1") and not pg.has_user("u2")
    with pg.transaction() as tx:
        assert pg.events_exist(tx, [added[0], 10**12]) and not pg.events_exist(tx, [10**12])


def test_concurrent_workers_claim_every_job_exactly_once(pg: PostgresStore) -> None:
    pg.append_events([_event(n) for n in range(200)])
    claimed: dict[str, list[int]] = {}

    def work(name: str) -> None:
        mine = claimed.setdefault(name, [])
        while True:
            jobs = pg.claim_jobs(name, 7, lease_seconds=60)
            if not jobs:
                return
            mine.extend(j.outbox_id for j in jobs)

    threads = [threading.Thread(target=work, args=(f"w{i}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    everything = [job for jobs in claimed.values() for job in jobs]
    assert len(everything) == 200 and len(set(everything)) == 200
    assert sum(1 for jobs in claimed.values() if jobs) >= 2  # the work was shared


def test_a_dead_workers_jobs_are_taken_over_after_the_lease(pg: PostgresStore) -> None:
    pg.append_events([_event(n) for n in range(3)])
    first = pg.claim_jobs("dead", 10, lease_seconds=0.2)
    assert len(first) == 3 and pg.claim_jobs("alive", 10, lease_seconds=60) == []
    time.sleep(0.3)
    taken = pg.claim_jobs("alive", 10, lease_seconds=60)
    assert [j.outbox_id for j in taken] == [j.outbox_id for j in first]
    pg.renew_jobs(taken, "alive", lease_seconds=60)
    pg.fail_job(taken[0], "dead", "a late report from the dead worker changes nothing")
    assert pg.claim_jobs("third", 10, lease_seconds=60) == []


def test_a_job_failing_every_attempt_is_dead_lettered_and_retried_on_request(
    pg: PostgresStore,
) -> None:
    (event_id,), _ = pg.append_events([_event(1)])
    for attempt in range(MAX_ATTEMPTS):
        jobs = pg.claim_jobs("w", 1, lease_seconds=60)
        assert len(jobs) == 1, attempt
        pg.fail_job(jobs[0], "w", f"boom {attempt}")
    assert pg.claim_jobs("w", 1, lease_seconds=60) == [] and pg.pending_jobs() == 0
    assert pg.failed_jobs() == [
        {"event_id": event_id, "user_id": "u1", "attempts": MAX_ATTEMPTS, "error": "boom 4"}
    ]
    assert pg.retry_failed() == 1 and len(pg.claim_jobs("w", 1, lease_seconds=60)) == 1


def test_meta_and_a_password_free_path(pg: PostgresStore) -> None:
    assert pg.meta("embedder") is None
    pg.set_meta("embedder", "a")
    pg.set_meta("embedder", "b")
    assert pg.meta("embedder") == "b"
    assert pg.path.endswith(f"#{pg.schema}")
