"""BM25's document frequencies on PostgreSQL (``lexical_df``, kept by statement triggers):
they always equal a recount over the tables, through adds, deletes, re-indexing and
forgetting; and migration 0007 fills them in for a store written by the previous version."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from cryptography.fernet import Fernet

from madeleine import Memory
from madeleine.store.postgres.migrations import current_version, migrate, migrations
from tests.fakes import HashingEmbedder

RECOUNT = """
SELECT 'episodes', l, count(*) FROM {s}.episodes r,
       unnest(tsvector_to_array(r.body_terms || r.context_terms)) l GROUP BY l
UNION ALL
SELECT 'sessions', l, count(*) FROM {s}.session_digests r, unnest(tsvector_to_array(r.terms)) l
GROUP BY l
UNION ALL
SELECT 'facts', l, count(*) FROM {s}.facts r, unnest(tsvector_to_array(r.terms)) l GROUP BY l
"""


def undo_lifecycle_migration(conn: psycopg.Connection[Any], schema: str) -> None:
    """Back to the schema before migration 0008 (the lifecycle tables)."""
    for table in ("item_states", "lifecycle_log", "lifecycle_users"):
        conn.execute(f"DROP TABLE {schema}.{table}")
    conn.execute(f"DROP SEQUENCE {schema}.lifecycle_clock")
    conn.execute(f"DELETE FROM {schema}.schema_migrations WHERE version = 8")


def undo_audit_migration(conn: psycopg.Connection[Any], schema: str) -> None:
    """Back to the schema before migration 0009 (the audit log)."""
    conn.execute(f"DROP TABLE {schema}.audit_log")
    conn.execute(f"DELETE FROM {schema}.schema_migrations WHERE version = 9")


def _kept(conn: Any, schema: str) -> set[tuple[str, str, int]]:
    rows = conn.execute(f"SELECT corpus, lexeme, docs FROM {schema}.lexical_df")
    return {(str(c), str(lexeme), int(n)) for c, lexeme, n in rows}


def _recounted(conn: Any, schema: str) -> set[tuple[str, str, int]]:
    rows = conn.execute(RECOUNT.format(s=schema))
    return {(str(c), str(lexeme), int(n)) for c, lexeme, n in rows}


@pytest.fixture
def memory(pg_url: str, pg_schema: str) -> Iterator[Memory]:
    with Memory(
        pg_url,
        embedder=HashingEmbedder(),
        store_schema=pg_schema,
        vault_key=Fernet.generate_key().decode(),
        background=False,
    ) as opened:
        yield opened


def _talk(memory: Memory) -> None:
    for user in ("ana", "bea"):
        memory.add(
            [
                {"content": f"My name is {user.title()} and I live in Lisbon.", "id": "m1"},
                {"content": "I am allergic to peanuts and to cats.", "id": "m2"},
                {"content": "Remind me: the piano lesson moved to Friday.", "id": "m3"},
                {"content": "The piano tuner comes on Monday.", "id": "m4"},
            ],
            user_id=user,
            session_id="s1",
        )
    assert memory.wait()


def test_frequencies_follow_every_write(memory: Memory, pg_url: str, pg_schema: str) -> None:
    _talk(memory)
    with psycopg.connect(pg_url) as conn:
        assert _kept(conn, pg_schema) == _recounted(conn, pg_schema)
        assert ("episodes", "piano", 4) in _kept(conn, pg_schema)
    memory.delete_message("m3", user_id="ana")  # re-indexes the turn that quoted it
    memory.forget_user("bea")
    assert memory.wait()
    with psycopg.connect(pg_url) as conn:
        assert _kept(conn, pg_schema) == _recounted(conn, pg_schema)
        assert ("episodes", "piano", 1) in _kept(conn, pg_schema)


def test_migration_0007_fills_a_store_of_the_previous_version(
    memory: Memory, pg_url: str, pg_schema: str
) -> None:
    _talk(memory)
    before = [h.id for h in memory.search("piano lesson", user_id="ana", channels=["bm25"])]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        kept = _kept(conn, pg_schema)
        # the previous version's schema: the same tables, without the frequencies
        conn.execute(f"DROP TABLE {pg_schema}.lexical_df")
        for table in ("episodes", "session_digests", "facts"):
            for trigger in ("insert", "delete", "update"):
                conn.execute(f"DROP TRIGGER {table}_df_{trigger} ON {pg_schema}.{table}")
        for function in ("episodes_df()", "terms_df()", "lexical_df_move(text, jsonb)"):
            conn.execute(f"DROP FUNCTION {pg_schema}.{function}")
        conn.execute(f"DELETE FROM {pg_schema}.schema_migrations WHERE version = 7")
        undo_audit_migration(conn, pg_schema)
        undo_lifecycle_migration(conn, pg_schema)
        assert current_version(conn, pg_schema) == 6
    applied = migrate(pg_url, pg_schema)
    assert [m.version for m in applied] == [7, 8, 9] and len(migrations()) >= 9
    with psycopg.connect(pg_url) as conn:
        assert _kept(conn, pg_schema) == kept
    after = [h.id for h in memory.search("piano lesson", user_id="ana", channels=["bm25"])]
    assert after == before
