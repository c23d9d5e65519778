"""Versioned schema migrations: numbered SQL files applied in order, each in its own
transaction, under an advisory lock so that API and worker processes starting together
migrate once. ``madeleine migrate`` runs them; the store also runs them when it opens."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

from madeleine.store.postgres.connection import require_schema_name

_FILE = re.compile(r"(\d{4})_([a-z0-9_]+)\.sql")


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str


def migrations() -> list[Migration]:
    """Every migration shipped with the package, oldest first."""
    found = []
    for entry in resources.files("madeleine.store.postgres").joinpath("migrations").iterdir():
        match = _FILE.fullmatch(entry.name)
        if match:
            found.append(Migration(int(match[1]), match[2], entry.read_text("utf-8")))
    found.sort(key=lambda m: m.version)
    versions = [m.version for m in found]
    if versions != list(range(1, len(found) + 1)):
        raise RuntimeError(f"migrations must be numbered 1, 2, 3 … without gaps: {versions}")
    return found


def migrate(url: str, schema: str, *, target: int | None = None) -> list[Migration]:
    """Bring ``schema`` up to ``target`` (default: the latest); the migrations applied now."""
    import psycopg

    require_schema_name(schema)
    wanted = migrations() if target is None else migrations()[:target]
    lock = int.from_bytes(hashlib.sha256(f"madeleine:{schema}".encode()).digest()[:8], "big")
    applied: list[Migration] = []
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (lock - 2**63,))
        try:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            conn.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
            conn.execute(
                f"""CREATE TABLE IF NOT EXISTS {schema}.schema_migrations (
                    version    integer PRIMARY KEY,
                    name       text NOT NULL,
                    applied_at timestamptz NOT NULL DEFAULT now())"""
            )
            done = current_version(conn, schema)
            for migration in wanted:
                if migration.version <= done:
                    continue
                with conn.transaction():
                    conn.execute(f"SET LOCAL search_path TO {schema}, public")
                    conn.execute(migration.sql)
                    conn.execute(
                        f"INSERT INTO {schema}.schema_migrations(version, name) VALUES (%s, %s)",
                        (migration.version, migration.name),
                    )
                applied.append(migration)
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (lock - 2**63,))
    return applied


def current_version(conn: Any, schema: str) -> int:
    row = conn.execute(
        "SELECT to_regclass(%s)", (f"{require_schema_name(schema)}.schema_migrations",)
    ).fetchone()
    if row is None or row[0] is None:
        return 0
    found = conn.execute(f"SELECT coalesce(max(version), 0) FROM {schema}.schema_migrations")
    return int(found.fetchone()[0])
