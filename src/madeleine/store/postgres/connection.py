"""A pool of PostgreSQL connections bound to one schema, and the transactions the store
hands out.

Every connection of the pool has ``search_path`` set to the store's schema, so SQL names its
tables plainly and one database can hold several stores (a server's tenants). Reads run in
autocommit; ``write()`` opens a transaction that commits on leaving the block and rolls back
on an exception.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from madeleine.errors import StoreClosedError
from madeleine.store.records import Transaction

_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


def require_schema_name(schema: str) -> str:
    """A schema name safe to splice into SQL: lower-case letters, digits and underscores."""
    if not isinstance(schema, str) or not _SCHEMA_NAME.match(schema):
        raise ValueError(
            "a PostgreSQL schema name is 1-63 lower-case letters, digits or underscores, "
            f"not starting with a digit; got {schema!r}"
        )
    return schema


class PgTransaction(Transaction):
    """An open transaction on one pooled connection."""

    __slots__ = ("conn",)

    def __init__(self, conn: Any) -> None:
        self.conn = conn


def conn_of(tx: Transaction) -> Any:
    if not isinstance(tx, PgTransaction):
        raise TypeError(f"not a PostgreSQL transaction: {type(tx).__name__}")
    return tx.conn


class Database:
    """``url`` a libpq connection string (``postgresql://user:pw@host:5432/db``); ``schema``
    the store's schema. Open it after ``migrate``: connections register pgvector's type."""

    def __init__(self, url: str, schema: str, *, min_size: int = 1, max_size: int = 8) -> None:
        from pgvector.psycopg import register_vector
        from psycopg_pool import ConnectionPool

        self.url = url
        self.schema = require_schema_name(schema)

        def configure(conn: Any) -> None:  # the migrations created the vector type already
            conn.execute(f"SET search_path TO {self.schema}, public")
            register_vector(conn)
            conn.commit()

        self._pool = ConnectionPool(
            url,
            min_size=min_size,
            max_size=max_size,
            kwargs={"autocommit": False},
            configure=configure,
            open=True,
            name=f"madeleine-{self.schema}",
        )
        self._closed = False

    @contextmanager
    def connect(self) -> Iterator[Any]:
        """A connection inside a transaction (one snapshot for reads) that commits when the
        block ends and rolls back on an exception."""
        if self._closed:
            raise StoreClosedError("the store is closed")
        with self._pool.connection() as conn, conn.transaction():
            yield conn

    @contextmanager
    def transaction(self) -> Iterator[PgTransaction]:
        with self.connect() as conn:
            yield PgTransaction(conn)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._pool.close()


def lock_users(conn: Any, user_ids: Iterable[str]) -> None:
    """Serialize the writers of one user until the transaction ends: the indexer, deletes and
    forget touch the same rows in different orders and would otherwise deadlock. Taken in
    sorted order, so that two batches sharing users never wait on each other in a cycle."""
    for user_id in sorted(set(user_ids)):
        conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (user_id,))
