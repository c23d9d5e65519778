"""Lifecycle state and its log in the embedded store."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from madeleine.store.lifecycle_rows import (
    COLUMNS,
    dumped,
    entries_query,
    entry_of,
    state_of,
    state_values,
)
from madeleine.store.records import ItemState, LifecycleEntry, StateChange, Transaction
from madeleine.store.sqlite.connection import Connections, conn_of

LIFECYCLE_SCHEMA = """
CREATE TABLE IF NOT EXISTS item_states (
    user_id        TEXT NOT NULL,
    item           TEXT NOT NULL,
    importance     REAL,
    importance_by  TEXT,
    pinned         INTEGER,
    archived_at    REAL,
    archive_reason TEXT,
    recalls        INTEGER NOT NULL DEFAULT 0,
    stability      REAL NOT NULL DEFAULT 1,
    last_recall    REAL,
    PRIMARY KEY (user_id, item)
);
CREATE TABLE IF NOT EXISTS lifecycle_log (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id   TEXT NOT NULL,
    run       TEXT NOT NULL,
    at        REAL NOT NULL,
    action    TEXT NOT NULL,
    item      TEXT NOT NULL,
    before    TEXT,
    after     TEXT,
    detail    TEXT NOT NULL,
    undone_at REAL
);
CREATE INDEX IF NOT EXISTS lifecycle_log_user ON lifecycle_log(user_id, run);
CREATE TABLE IF NOT EXISTS lifecycle_clock (
    id   INTEGER PRIMARY KEY CHECK (id = 1),
    tick INTEGER NOT NULL
);
INSERT OR IGNORE INTO lifecycle_clock(id, tick) VALUES (1, 0);
CREATE TABLE IF NOT EXISTS lifecycle_users (
    user_id TEXT PRIMARY KEY,
    gen     INTEGER NOT NULL
);
"""


class SQLiteLifecycle:
    def __init__(self, db: Connections) -> None:
        self._db = db

    def generation(self, user_id: str) -> int:
        row = (
            self._db.get()
            .execute("SELECT gen FROM lifecycle_users WHERE user_id = ?", (user_id,))
            .fetchone()
        )
        return 0 if row is None else int(row[0])

    def states(self, user_id: str) -> dict[str, ItemState]:
        rows = (
            self._db.get()
            .execute(f"SELECT {COLUMNS} FROM item_states WHERE user_id = ?", (user_id,))
            .fetchall()
        )
        return {str(row[0]): state_of(row) for row in rows}

    def change(
        self,
        user_id: str,
        items: Sequence[str],
        decide: Callable[[dict[str, ItemState]], Sequence[StateChange]],
        run: str,
        at: float,
    ) -> list[StateChange]:
        with self._db.write() as conn:
            current: dict[str, ItemState] = {}
            wanted = sorted(set(items))
            for start in range(0, len(wanted), 500):
                part = wanted[start : start + 500]
                marks = ",".join("?" * len(part))
                for row in conn.execute(
                    f"SELECT {COLUMNS} FROM item_states WHERE user_id = ? AND item IN ({marks})",
                    (user_id, *part),
                ):
                    current[str(row[0])] = state_of(row)
            changes = list(decide(current))
            if not changes:
                return []
            for change in changes:
                if change.after is None:
                    conn.execute(
                        "DELETE FROM item_states WHERE user_id = ? AND item = ?",
                        (user_id, change.item),
                    )
                else:
                    conn.execute(
                        f"INSERT OR REPLACE INTO item_states(user_id, {COLUMNS}) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        state_values(user_id, change.after),
                    )
            conn.executemany(
                "INSERT INTO lifecycle_log(user_id, run, at, action, item, before, after, "
                "detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        user_id,
                        run,
                        at,
                        c.action,
                        c.item,
                        dumped(c.before),
                        dumped(c.after),
                        json.dumps(c.detail),
                    )
                    for c in changes
                    if c.logged
                ],
            )
            conn.execute("UPDATE lifecycle_clock SET tick = tick + 1 WHERE id = 1")
            conn.execute(
                "INSERT INTO lifecycle_users(user_id, gen) "
                "VALUES (?, (SELECT tick FROM lifecycle_clock)) "
                "ON CONFLICT(user_id) DO UPDATE SET gen = excluded.gen",
                (user_id,),
            )
        return changes

    def entries(
        self, user_id: str, run: str | None = None, limit: int | None = None
    ) -> list[LifecycleEntry]:
        sql, params = entries_query(run, limit, "?")
        return [entry_of(row) for row in self._db.get().execute(sql, [user_id, *params])]

    def mark_undone(self, user_id: str, entry_ids: Sequence[int], at: float) -> None:
        with self._db.write() as conn:
            conn.executemany(
                "UPDATE lifecycle_log SET undone_at = ? WHERE user_id = ? AND id = ?",
                [(at, user_id, entry_id) for entry_id in entry_ids],
            )

    def forget_user(self, tx: Transaction, user_id: str) -> int:
        conn = conn_of(tx)
        removed = conn.execute("DELETE FROM item_states WHERE user_id = ?", (user_id,)).rowcount
        conn.execute("DELETE FROM lifecycle_log WHERE user_id = ?", (user_id,))
        # the user id goes too; generation 0 means "no stored states", which is now true
        conn.execute("DELETE FROM lifecycle_users WHERE user_id = ?", (user_id,))
        return int(removed)
