"""The embedded backend's own upgrades (the contract tests cover behaviour every backend
shares; this covers a store written by an earlier version of the SQLite schema)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from madeleine import Memory
from tests.fakes import HashingEmbedder


def _drop_autoincrement(path: Path) -> None:
    """Rewrite the three id tables as version 1 made them (ids could be reused)."""
    conn = sqlite3.connect(path / "memory.db")
    for table in ("events", "episodes", "facts"):
        (sql,) = conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
        ).fetchone()
        old = sql.replace("AUTOINCREMENT", "").replace(f"CREATE TABLE {table}", "CREATE TABLE v1")
        conn.execute(old)
        conn.execute(f"INSERT INTO v1 SELECT * FROM {table}")
        conn.execute(f"DROP TABLE {table}")
        conn.execute(f"ALTER TABLE v1 RENAME TO {table}")
    conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()


def _ids(memory: Memory) -> tuple[list[str], list[str], list[str]]:
    exported = memory.export_user("u")
    return (
        [f"ev_{e['id']}" for e in exported["events"]],
        [e["id"] for e in exported["episodes"]],
        [f["id"] for f in exported["facts"]],
    )


def test_ids_are_never_given_again_after_a_delete(tmp_path: Path) -> None:
    with Memory(tmp_path / "m", embedder=HashingEmbedder(), background=False) as memory:
        memory.add([{"content": "I live in Lisbon.", "id": "a"}], user_id="u")
        memory.add([{"content": "I am allergic to peanuts.", "id": "b"}], user_id="u")
        memory.wait()
        before = _ids(memory)
        assert memory.delete_message("b", user_id="u")
        memory.add([{"content": "I am allergic to shellfish.", "id": "c"}], user_id="u")
        memory.wait()
        after = _ids(memory)
    for kept, now in zip(before, after, strict=True):
        deleted = set(kept) - set(now)
        assert deleted, "the delete removed an id of each kind"
        assert not deleted & set(now), "a deleted id came back for a new memory"


@pytest.mark.sqlite_only  # rewrites the embedded store's tables
def test_a_version_1_store_is_upgraded_and_keeps_its_ids(tmp_path: Path) -> None:
    path = tmp_path / "m"
    with Memory(path, embedder=HashingEmbedder(), background=False) as memory:
        memory.add([{"content": "I live in Lisbon.", "id": "a"}], user_id="u")
        memory.add([{"content": "I am allergic to peanuts.", "id": "b"}], user_id="u")
        memory.wait()
        before = _ids(memory)
    _drop_autoincrement(path)
    with Memory(path, embedder=HashingEmbedder(), background=False) as memory:
        assert _ids(memory) == before
        assert memory.stats()["events"] == 2 and memory.search("Lisbon", user_id="u")
        assert memory.delete_message("b", user_id="u")
        memory.add([{"content": "I am allergic to shellfish.", "id": "c"}], user_id="u")
        memory.wait()
        after = _ids(memory)
        assert memory.integrity()["orphan_episodes"] == 0
    for kept, now in zip(before, after, strict=True):
        assert not (set(kept) - set(now)) & set(now)
    conn = sqlite3.connect(path / "memory.db")
    tables = dict(conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'"))
    assert all("AUTOINCREMENT" in tables[t] for t in ("events", "episodes", "facts"))
    assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("2",)
    conn.close()
