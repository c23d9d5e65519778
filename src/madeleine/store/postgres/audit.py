"""The audit log on PostgreSQL (table from migration 0009)."""

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
from madeleine.store.postgres.connection import Database, conn_of
from madeleine.store.records import Transaction


class PgAudit:
    def __init__(self, db: Database) -> None:
        self._db = db

    def record(self, entry: AuditEntry) -> int:
        with self._db.connect() as conn:
            row = conn.execute(
                INSERT + "(%s, %s, %s, %s, %s, %s, %s, %s) RETURNING id", entry.values()
            ).fetchone()
        return 0 if row is None else int(row[0])

    def entries(self, query: AuditQuery) -> list[AuditEntry]:
        sql, params = entries_query(query, "%s")
        with self._db.connect() as conn:
            return [entry_of(row) for row in conn.execute(sql, params).fetchall()]

    def forget_user(self, tx: Transaction, user_id: str) -> int:
        cursor = conn_of(tx).execute(forget_statement("%s"), (pseudonym(user_id), user_id))
        return int(cursor.rowcount)
