"""Per-thread SQLite connections to one file, and the write transactions the store hands out."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from madeleine.errors import StoreClosedError, StoreDamagedError, StoreReadOnlyError
from madeleine.store.records import Transaction

# What SQLite says when the file itself is bad: a damaged page, or not a database at all.
_DAMAGE_CODES = frozenset(
    {getattr(sqlite3, "SQLITE_CORRUPT", 11), getattr(sqlite3, "SQLITE_NOTADB", 26)}
)


def _damaged(exc: sqlite3.DatabaseError, path: Path | None) -> Exception:
    if getattr(exc, "sqlite_errorcode", None) in _DAMAGE_CODES:
        where = "the store" if path is None else str(path)
        return StoreDamagedError(
            f"{where} is damaged ({exc}). Run `madeleine check` to see what is damaged, and "
            "restore memory.db from a backup; if only the indexes are hit, `madeleine reindex` "
            "rebuilds them from the log."
        )
    return exc


class _Cursor(sqlite3.Cursor):
    """Reports a damaged file as ``StoreDamagedError``, wherever a query meets it."""

    def execute(self, sql: str, parameters: Any = (), /) -> _Cursor:
        try:
            return super().execute(sql, parameters)
        except sqlite3.DatabaseError as exc:
            raise _damaged(exc, None) from exc

    def executemany(self, sql: str, seq_of_parameters: Any, /) -> _Cursor:
        try:
            return super().executemany(sql, seq_of_parameters)
        except sqlite3.DatabaseError as exc:
            raise _damaged(exc, None) from exc

    def fetchone(self) -> Any:
        try:
            return super().fetchone()
        except sqlite3.DatabaseError as exc:
            raise _damaged(exc, None) from exc

    def fetchall(self) -> list[Any]:
        try:
            return super().fetchall()
        except sqlite3.DatabaseError as exc:
            raise _damaged(exc, None) from exc


class _Connection(sqlite3.Connection):
    def cursor(self, factory: Any = _Cursor) -> Any:
        return super().cursor(factory)

    def execute(self, sql: str, parameters: Any = (), /) -> Any:
        return self.cursor().execute(sql, parameters)

    def executemany(self, sql: str, parameters: Any, /) -> Any:
        return self.cursor().executemany(sql, parameters)

    def executescript(self, script: str, /) -> Any:
        try:
            return super().executescript(script)
        except sqlite3.DatabaseError as exc:
            raise _damaged(exc, None) from exc


class SQLiteTransaction(Transaction):
    """An open ``BEGIN IMMEDIATE`` transaction on this thread's connection."""

    __slots__ = ("conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn


def conn_of(tx: Transaction) -> sqlite3.Connection:
    """The connection behind a transaction this backend handed out."""
    if not isinstance(tx, SQLiteTransaction):
        raise TypeError(f"expected a transaction of the SQLite store, got {type(tx).__name__}")
    return tx.conn


@contextmanager
def immediate(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` … ``COMMIT``, rolled back on any error."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


class Connections:
    """Thread-safe: each thread gets its own connection; writers use ``BEGIN IMMEDIATE``."""

    def __init__(self, path: Path, busy_timeout_ms: int, read_only: bool = False) -> None:
        self.path = path
        self.read_only = read_only
        self._busy_timeout_ms = busy_timeout_ms
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._closed = False

    def get(self) -> sqlite3.Connection:
        if self._closed:
            raise StoreClosedError("this Memory is closed")
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout_ms)}")
            if not self.read_only:
                conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
            # Deleted memories must not linger in free pages of the file.
            conn.execute("PRAGMA secure_delete = ON")
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    def _connect(self) -> sqlite3.Connection:
        timeout = self._busy_timeout_ms / 1000
        if not self.read_only:
            return sqlite3.connect(
                self.path,
                timeout=timeout,
                isolation_level=None,
                check_same_thread=False,
                factory=_Connection,
            )
        # read-only: a WAL database normally needs its -shm file; where it cannot be made
        # (a read-only directory), the file is read as immutable (nobody writes it meanwhile)
        uri = self.path.resolve().as_uri()
        for mode in ("mode=ro", "immutable=1"):
            conn = sqlite3.connect(
                f"{uri}?{mode}",
                uri=True,
                timeout=timeout,
                isolation_level=None,
                check_same_thread=False,
                factory=_Connection,
            )
            if mode == "immutable=1":
                return conn
            try:
                conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
                return conn
            except (sqlite3.OperationalError, StoreDamagedError):
                conn.close()
        raise AssertionError("unreachable")

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction taken up front, so concurrent writers wait instead of failing."""
        if self.read_only:
            raise StoreReadOnlyError(
                f"{self.path} was opened read-only (its files cannot be written): it answers "
                "searches and reads, not writes"
            )
        with immediate(self.get()) as conn:
            yield conn

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        with self.write() as conn:
            yield SQLiteTransaction(conn)

    def close(self) -> None:
        with self._lock:
            for conn in self._all:
                with suppress(sqlite3.Error):
                    conn.close()
            self._all.clear()
        self._closed = True
