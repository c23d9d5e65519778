"""The import log on PostgreSQL: which files and conversations an import has indexed."""

from __future__ import annotations

from psycopg.types.json import Jsonb

from madeleine.store.postgres.connection import Database, conn_of
from madeleine.store.records import Transaction


class PgImportLog:
    def __init__(self, db: Database) -> None:
        self._db = db

    def get(self, user_id: str, source: str, unit: str) -> tuple[str, dict[str, str]] | None:
        """(stamp, passage id -> digest) of the last import of this unit, if any."""
        with self._db.connect() as conn:
            row = conn.execute(
                """SELECT stamp, passages FROM imports
                   WHERE user_id = %s AND source = %s AND unit = %s""",
                (user_id, source, unit),
            ).fetchone()
        return None if row is None else (str(row[0]), dict(row[1]))

    def put(
        self, user_id: str, source: str, unit: str, stamp: str, digests: dict[str, str]
    ) -> None:
        with self._db.connect() as conn:
            conn.execute(
                """INSERT INTO imports(user_id, source, unit, stamp, passages)
                   VALUES (%s, %s, %s, %s, %s) ON CONFLICT (user_id, source, unit)
                   DO UPDATE SET stamp = excluded.stamp, passages = excluded.passages""",
                (user_id, source, unit, stamp, Jsonb(digests)),
            )

    def forget_user(self, tx: Transaction, user_id: str) -> None:
        conn_of(tx).execute("DELETE FROM imports WHERE user_id = %s", (user_id,))

    def owners(self, user_id: str, source: str) -> dict[str, tuple[str, str]]:
        with self._db.connect() as conn:
            rows = conn.execute(
                "SELECT unit, passages FROM imports WHERE user_id = %s AND source = %s",
                (user_id, source),
            ).fetchall()
        return {
            passage: (str(unit), str(digest))
            for unit, passages in rows
            for passage, digest in dict(passages).items()
        }
