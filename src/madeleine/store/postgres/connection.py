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
from contextvars import ContextVar
from typing import Any

from madeleine.errors import StoreClosedError
from madeleine.store.records import Transaction

_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def require_schema_name(schema: str) -> str:
    """A schema name safe to splice into SQL: lower-case letters, digits and underscores."""
    if not isinstance(schema, str) or not _SCHEMA_NAME.fullmatch(schema):
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

    def __init__(
        self,
        url: str,
        schema: str,
        *,
        min_size: int = 1,
        max_size: int = 8,
        read_url: str | None = None,
    ) -> None:
        from pgvector.psycopg import register_vector
        from psycopg_pool import ConnectionPool

        self.url = url
        self.schema = require_schema_name(schema)

        def pool(location: str, name: str, read_only: bool) -> ConnectionPool:
            def configure(conn: Any) -> None:  # the migrations created the vector type
                if read_only:  # a write on the read pool is a bug: fail loudly
                    conn.execute("SET default_transaction_read_only = on")
                conn.execute(f"SET search_path TO {self.schema}, public")
                register_vector(conn)
                conn.commit()

            return ConnectionPool(
                location,
                min_size=min_size,
                max_size=max_size,
                kwargs={"autocommit": False},
                configure=configure,
                open=True,
                name=name,
            )

        self._pool = pool(url, f"madeleine-{self.schema}", read_only=False)
        # searches and contexts read from a replica when one is configured
        self._read_pool = (
            None
            if read_url is None
            else pool(read_url, f"madeleine-{self.schema}-read", read_only=True)
        )
        self._closed = False
        self._pinned: ContextVar[Any | None] = ContextVar(f"pinned-{id(self)}", default=None)

    @contextmanager
    def connect(self) -> Iterator[Any]:
        """A connection inside a transaction (one snapshot for reads) that commits when the
        block ends and rolls back on an exception. Inside ``pinned()``, the pinned one."""
        if self._closed:
            raise StoreClosedError("the store is closed")
        pinned = self._pinned.get()
        if pinned is not None:
            yield pinned
            return
        with self._pool.connection() as conn, conn.transaction():
            yield conn

    @contextmanager
    def pinned(self) -> Iterator[None]:
        """Every ``connect()`` of this thread in the block shares one connection and one
        transaction: a search's dozen reads cost one pool checkout, no BEGIN/COMMIT pair each,
        and see one snapshot — on the read replica when one is configured."""
        if self._pinned.get() is not None:
            yield
            return
        if self._closed:
            raise StoreClosedError("the store is closed")
        pool = self._read_pool or self._pool
        with pool.connection() as conn, conn.transaction():
            token = self._pinned.set(conn)
            try:
                yield
            finally:
                self._pinned.reset(token)

    @contextmanager
    def transaction(self) -> Iterator[PgTransaction]:
        with self.connect() as conn:
            yield PgTransaction(conn)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._pool.close()
            if self._read_pool is not None:
                self._read_pool.close()


def lock_users(conn: Any, user_ids: Iterable[str]) -> None:
    """Serialize the writers of one user until the transaction ends: the indexer, deletes and
    forget touch the same rows in different orders and would otherwise deadlock. Taken in
    sorted order, so that two batches sharing users never wait on each other in a cycle."""
    for user_id in sorted(set(user_ids)):
        conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (user_id,))
