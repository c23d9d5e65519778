"""The import log: which files and conversations an import has already indexed, and how."""

from __future__ import annotations

import json

from madeleine.store.records import Transaction
from madeleine.store.sqlite.connection import Connections, conn_of


class SQLiteImportLog:
    def __init__(self, db: Connections) -> None:
        self._db = db

    def get(self, user_id: str, source: str, unit: str) -> tuple[str, dict[str, str]] | None:
        """(stamp, passage id -> digest) of the last import of this unit, if any."""
        row = (
            self._db.get()
            .execute(
                "SELECT stamp, passages FROM imports WHERE user_id = ? AND source = ? AND unit = ?",
                (user_id, source, unit),
            )
            .fetchone()
        )
        return None if row is None else (str(row[0]), dict(json.loads(row[1])))

    def put(
        self, user_id: str, source: str, unit: str, stamp: str, digests: dict[str, str]
    ) -> None:
        with self._db.write() as conn:
            conn.execute(
                "INSERT INTO imports(user_id, source, unit, stamp, passages) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT(user_id, source, unit) "
                "DO UPDATE SET stamp = excluded.stamp, passages = excluded.passages",
                (user_id, source, unit, stamp, json.dumps(digests)),
            )

    def forget_user(self, tx: Transaction, user_id: str) -> None:
        conn = conn_of(tx)
        conn.execute("DELETE FROM imports WHERE user_id = ?", (user_id,))

    def owners(self, user_id: str, source: str) -> dict[str, tuple[str, str]]:
        rows = (
            self._db.get()
            .execute(
                "SELECT unit, passages FROM imports WHERE user_id = ? AND source = ?",
                (user_id, source),
            )
            .fetchall()
        )
        return {
            passage: (str(unit), str(digest))
            for unit, passages in rows
            for passage, digest in json.loads(passages).items()
        }
