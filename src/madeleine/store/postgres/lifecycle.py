"""Lifecycle state and its log on PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from psycopg.types.json import Jsonb

from madeleine.store.lifecycle_rows import COLUMNS, entries_query, entry_of, state_of, state_values
from madeleine.store.postgres.connection import Database, conn_of, lock_users
from madeleine.store.records import ItemState, LifecycleEntry, StateChange, Transaction

_COLUMNS = COLUMNS


def _json(state: ItemState | None) -> Jsonb | None:
    return None if state is None else Jsonb(state.to_dict())


def _pg_values(user_id: str, state: ItemState) -> tuple[object, ...]:
    values = list(state_values(user_id, state))
    values[4] = state.pinned  # a boolean column here
    return tuple(values)


class PgLifecycle:
    def __init__(self, db: Database) -> None:
        self._db = db

    def generation(self, user_id: str) -> int:
        with self._db.connect() as conn:
            row = conn.execute(
                "SELECT gen FROM lifecycle_users WHERE user_id = %s", (user_id,)
            ).fetchone()
        return 0 if row is None else int(row[0])

    def states(self, user_id: str) -> dict[str, ItemState]:
        with self._db.connect() as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM item_states WHERE user_id = %s", (user_id,)
            ).fetchall()
        return {str(row[0]): state_of(row) for row in rows}

    def change(
        self,
        user_id: str,
        items: Sequence[str],
        decide: Callable[[dict[str, ItemState]], Sequence[StateChange]],
        run: str,
        at: float,
    ) -> list[StateChange]:
        with self._db.connect() as conn:
            lock_users(conn, [user_id])
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM item_states WHERE user_id = %s AND item = ANY(%s)",
                (user_id, sorted(set(items))),
            ).fetchall()
            changes = list(decide({str(row[0]): state_of(row) for row in rows}))
            if not changes:
                return []
            gone = [c.item for c in changes if c.after is None]
            if gone:
                conn.execute(
                    "DELETE FROM item_states WHERE user_id = %s AND item = ANY(%s)",
                    (user_id, gone),
                )
            kept = {c.item: c.after for c in changes if c.after is not None}
            if kept:
                with conn.cursor() as cursor:
                    cursor.executemany(
                        f"""INSERT INTO item_states(user_id, {_COLUMNS})
                            VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
                            ON CONFLICT (user_id, item) DO UPDATE SET
                              importance = excluded.importance,
                              importance_by = excluded.importance_by, pinned = excluded.pinned,
                              archived_at = excluded.archived_at,
                              archive_reason = excluded.archive_reason,
                              recalls = excluded.recalls, stability = excluded.stability,
                              last_recall = excluded.last_recall""",
                        [_pg_values(user_id, state) for state in kept.values()],
                    )
            logged = [c for c in changes if c.logged]
            if logged:
                with conn.cursor() as cursor:
                    cursor.executemany(
                        """INSERT INTO lifecycle_log(user_id, run, at, action, item, before,
                                                     after, detail)
                           VALUES (%s, %s, %s, %s, %s, %s, %s, %s)""",
                        [
                            (
                                user_id,
                                run,
                                at,
                                c.action,
                                c.item,
                                _json(c.before),
                                _json(c.after),
                                Jsonb(c.detail),
                            )
                            for c in logged
                        ],
                    )
            conn.execute(
                """INSERT INTO lifecycle_users(user_id, gen) VALUES (%s, nextval('lifecycle_clock'))
                   ON CONFLICT (user_id) DO UPDATE SET gen = excluded.gen""",
                (user_id,),
            )
        return changes

    def entries(
        self, user_id: str, run: str | None = None, limit: int | None = None
    ) -> list[LifecycleEntry]:
        sql, params = entries_query(run, limit, "%s")
        with self._db.connect() as conn:
            return [entry_of(row) for row in conn.execute(sql, [user_id, *params]).fetchall()]

    def mark_undone(self, user_id: str, entry_ids: Sequence[int], at: float) -> None:
        with self._db.connect() as conn:
            conn.execute(
                "UPDATE lifecycle_log SET undone_at = %s WHERE user_id = %s AND id = ANY(%s)",
                (at, user_id, list(entry_ids)),
            )

    def forget_user(self, tx: Transaction, user_id: str) -> int:
        conn = conn_of(tx)
        removed = conn.execute("DELETE FROM item_states WHERE user_id = %s", (user_id,)).rowcount
        conn.execute("DELETE FROM lifecycle_log WHERE user_id = %s", (user_id,))
        # the user id goes too; generation 0 means "no stored states", which is now true
        conn.execute("DELETE FROM lifecycle_users WHERE user_id = %s", (user_id,))
        return int(removed)
