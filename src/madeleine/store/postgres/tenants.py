"""The server's tenant schemas in a PostgreSQL database: how one is named, which exist
(for workers and migrations), and dropping one."""

from __future__ import annotations

import hashlib
import re

PREFIX_CHARS = 12  # of the base schema name a tenant schema starts with


def tenant_namespace(base: str, tenant: str) -> str:
    """The PostgreSQL schema of a tenant: readable, and distinct for names that differ only
    in case or punctuation (a short hash of the exact name)."""
    slug = re.sub(r"[^a-z0-9_]", "_", tenant.lower())[:40]
    digest = hashlib.sha256(tenant.encode("utf-8")).hexdigest()[:8]
    return f"{base[:PREFIX_CHARS]}_{slug}_{digest}"


def tenant_schemas(url: str, base: str) -> list[str]:
    """Schemas named ``<base>_…`` that hold a Madeleine store (they have its outbox)."""
    import psycopg

    prefix = base[:PREFIX_CHARS] + "\\_%"
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            """SELECT n.nspname FROM pg_namespace n JOIN pg_class c ON c.relnamespace = n.oid
               WHERE c.relname = 'outbox' AND n.nspname LIKE %s ORDER BY n.nspname""",
            (prefix,),
        ).fetchall()
    return [str(r[0]) for r in rows]


def drop_schema(url: str, schema: str) -> None:
    """Remove a store's schema and everything in it (a benchmark's scratch store)."""
    import psycopg

    from madeleine.store.postgres.connection import require_schema_name

    require_schema_name(schema)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
