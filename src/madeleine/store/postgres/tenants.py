"""The server's tenant schemas in a PostgreSQL database (for workers and migrations)."""

from __future__ import annotations


def tenant_schemas(url: str, base: str) -> list[str]:
    """Schemas named ``<base>_…`` that hold a Madeleine store (they have its outbox)."""
    import psycopg

    prefix = base[:12] + "\\_%"
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
