"""The PostgreSQL store: every durable record of the embedded store, in one schema of one
database, shared by any number of API and worker processes.

Built repository by repository behind the storage port (``store/ports.py``); SQL lives in
this package and nowhere else.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from madeleine.store.postgres.connection import Database, PgTransaction, require_schema_name
from madeleine.store.postgres.episodes import PgEpisodes
from madeleine.store.postgres.log import PgLog
from madeleine.store.postgres.migrations import migrate

DEFAULT_SCHEMA = "madeleine"


class PostgresStore(PgLog, PgEpisodes):
    """``url``: ``postgresql://user:pw@host:5432/db``; ``schema``: where the store's tables
    live (one schema per store: a server's tenants share a database). Opening runs the
    pending migrations."""

    read_only = False

    def __init__(self, url: str, *, schema: str = DEFAULT_SCHEMA, pool_size: int = 8) -> None:
        require_schema_name(schema)
        migrate(url, schema)
        self._db = Database(url, schema, max_size=pool_size)
        self.schema = schema

    @property
    def path(self) -> str:
        return f"{_without_password(self._db.url)}#{self.schema}"

    @contextmanager
    def transaction(self) -> Iterator[PgTransaction]:
        with self._db.transaction() as tx:
            yield tx

    def meta(self, key: str) -> str | None:
        with self._db.connect() as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = %s", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        with self._db.connect() as conn:
            conn.execute(
                """INSERT INTO meta(key, value) VALUES (%s, %s)
                   ON CONFLICT (key) DO UPDATE SET value = excluded.value""",
                (key, value),
            )

    def close(self) -> None:
        self._db.close()


def _without_password(url: str) -> str:
    """The URL as logs and listings may show it."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    user = f"{parts.username}:***@" if parts.username else ""
    port = f":{parts.port}" if parts.port else ""
    return urlunsplit(parts._replace(netloc=f"{user}{host}{port}"))
