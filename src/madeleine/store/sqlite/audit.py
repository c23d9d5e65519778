"""The audit log in the embedded store."""

from __future__ import annotations

from madeleine.store.audit_rows import (
    INSERT,
    AuditEntry,
    AuditQuery,
    entries_query,
    entry_of,
    forget_statement,
    pseudonym,
)
from madeleine.store.records import Transaction
from madeleine.store.sqlite.connection import Connections, conn_of

AUDIT_SCHEMA = """
CREATE TABLE IF NOT EXISTS audit_log (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    at      REAL NOT NULL,
    key_id  TEXT NOT NULL,
    tenant  TEXT NOT NULL,
    user_id TEXT,
    method  TEXT NOT NULL,
    route   TEXT NOT NULL,
    target  TEXT NOT NULL,
    status  INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_log_user ON audit_log(user_id);
"""


class SQLiteAudit:
    def __init__(self, db: Connections) -> None:
        self._db = db

    def record(self, entry: AuditEntry) -> int:
        with self._db.write() as conn:
            cursor = conn.execute(INSERT + "(?, ?, ?, ?, ?, ?, ?, ?)", entry.values())
        return int(cursor.lastrowid or 0)

    def entries(self, query: AuditQuery) -> list[AuditEntry]:
        sql, params = entries_query(query, "?")
        return [entry_of(row) for row in self._db.get().execute(sql, params)]

    def forget_user(self, tx: Transaction, user_id: str) -> int:
        cursor = conn_of(tx).execute(forget_statement("?"), (pseudonym(user_id), user_id))
        return int(cursor.rowcount)
