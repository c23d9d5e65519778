"""Short-term memory tables: conversation buffers (with their rolling summary) and agent
states with their transition log. They live in the same file as the log, so ``forget_user``
erases them in the same transaction and a restart finds them as they were."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from madeleine.store.export import exported_short_term
from madeleine.store.records import (
    AgentRecord,
    BufferedMessage,
    SessionInfo,
    StaleStateError,
    Transaction,
    TransitionRecord,
)
from madeleine.store.sqlite.connection import Connections, conn_of

SHORT_TERM_SCHEMA = """
CREATE TABLE IF NOT EXISTS short_sessions (
    user_id       TEXT NOT NULL,
    session_id    TEXT NOT NULL,
    summary       TEXT NOT NULL DEFAULT '',
    folded        INTEGER NOT NULL DEFAULT 0,
    next_position INTEGER NOT NULL DEFAULT 1,
    updated_at    REAL NOT NULL,
    expires_at    REAL,
    PRIMARY KEY (user_id, session_id)
);
CREATE TABLE IF NOT EXISTS short_messages (
    user_id    TEXT NOT NULL,
    session_id TEXT NOT NULL,
    position   INTEGER NOT NULL,
    role       TEXT NOT NULL,
    content    TEXT NOT NULL,
    name       TEXT,
    pinned     INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL,
    PRIMARY KEY (user_id, session_id, position)
);
CREATE TABLE IF NOT EXISTS agent_states (
    user_id    TEXT NOT NULL,
    agent_id   TEXT NOT NULL,
    state      TEXT NOT NULL,
    data       TEXT NOT NULL DEFAULT '{}',
    entered_at REAL NOT NULL,
    version    INTEGER NOT NULL,
    PRIMARY KEY (user_id, agent_id)
);
CREATE TABLE IF NOT EXISTS agent_transitions (
    id         INTEGER PRIMARY KEY,
    user_id    TEXT NOT NULL,
    agent_id   TEXT NOT NULL,
    from_state TEXT,
    to_state   TEXT NOT NULL,
    reason     TEXT NOT NULL DEFAULT '',
    at         REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS agent_transitions_agent ON agent_transitions(user_id, agent_id, id);
"""


class SQLiteShortTerm:
    def __init__(self, db: Connections) -> None:
        self._db = db

    # -- conversation buffers ---------------------------------------------------------------

    def append(
        self,
        user_id: str,
        session_id: str,
        message: BufferedMessage,
        expires_at: float | None,
    ) -> int:
        """Append at the session's next position (a session past its expiry starts over)."""
        with self._db.write() as conn:
            self._drop_if_expired(conn, user_id, session_id, message.created_at)
            conn.execute(
                "INSERT INTO short_sessions(user_id, session_id, updated_at, expires_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT(user_id, session_id) DO UPDATE SET "
                "updated_at = excluded.updated_at, expires_at = excluded.expires_at",
                (user_id, session_id, message.created_at, expires_at),
            )
            position = int(
                conn.execute(
                    "UPDATE short_sessions SET next_position = next_position + 1 "
                    "WHERE user_id = ? AND session_id = ? RETURNING next_position - 1",
                    (user_id, session_id),
                ).fetchone()[0]
            )
            conn.execute(
                "INSERT INTO short_messages(user_id, session_id, position, role, content, name, "
                "pinned, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    user_id,
                    session_id,
                    position,
                    message.role,
                    message.content,
                    message.name,
                    int(message.pinned),
                    message.created_at,
                ),
            )
        return position

    def messages(self, user_id: str, session_id: str, now: float) -> list[BufferedMessage]:
        info = self.session(user_id, session_id, now)
        if info is None:
            return []
        rows = (
            self._db.get()
            .execute(
                "SELECT position, role, content, name, pinned, created_at FROM short_messages "
                "WHERE user_id = ? AND session_id = ? ORDER BY position",
                (user_id, session_id),
            )
            .fetchall()
        )
        return [
            BufferedMessage(
                role=str(r[1]),
                content=str(r[2]),
                name=r[3],
                pinned=bool(r[4]),
                created_at=float(r[5]),
                position=int(r[0]),
            )
            for r in rows
        ]

    def session(self, user_id: str, session_id: str, now: float) -> SessionInfo | None:
        row = (
            self._db.get()
            .execute(
                "SELECT s.summary, s.folded, s.updated_at, s.expires_at, "
                "(SELECT count(*) FROM short_messages AS m "
                " WHERE m.user_id = s.user_id AND m.session_id = s.session_id) "
                "FROM short_sessions AS s WHERE s.user_id = ? AND s.session_id = ?",
                (user_id, session_id),
            )
            .fetchone()
        )
        if row is None or (row[3] is not None and row[3] <= now):
            return None
        return SessionInfo(session_id, str(row[0]), int(row[1]), float(row[2]), row[3], int(row[4]))

    def sessions(self, user_id: str, now: float) -> list[SessionInfo]:
        rows = (
            self._db.get()
            .execute(
                "SELECT session_id FROM short_sessions WHERE user_id = ? "
                "AND (expires_at IS NULL OR expires_at > ?) ORDER BY updated_at DESC",
                (user_id, now),
            )
            .fetchall()
        )
        found = [self.session(user_id, str(r[0]), now) for r in rows]
        return [s for s in found if s is not None]

    def fold(self, user_id: str, session_id: str, summary: str, through: int) -> None:
        """Record the rolling summary of every message up to position ``through``."""
        with self._db.write() as conn:
            conn.execute(
                "UPDATE short_sessions SET summary = ?, folded = max(folded, ?) "
                "WHERE user_id = ? AND session_id = ?",
                (summary, through, user_id, session_id),
            )

    def clear(self, user_id: str, session_id: str) -> int:
        with self._db.write() as conn:
            return self._drop(conn, user_id, session_id)

    def purge_expired(self, now: float) -> int:
        with self._db.write() as conn:
            expired = conn.execute(
                "SELECT user_id, session_id FROM short_sessions "
                "WHERE expires_at IS NOT NULL AND expires_at <= ?",
                (now,),
            ).fetchall()
            return sum(self._drop(conn, str(u), str(s)) for u, s in expired)

    def _drop_if_expired(
        self, conn: sqlite3.Connection, user_id: str, session_id: str, now: float
    ) -> None:
        row = conn.execute(
            "SELECT expires_at FROM short_sessions WHERE user_id = ? AND session_id = ?",
            (user_id, session_id),
        ).fetchone()
        if row is not None and row[0] is not None and row[0] <= now:
            self._drop(conn, user_id, session_id)

    @staticmethod
    def _drop(conn: sqlite3.Connection, user_id: str, session_id: str) -> int:
        removed = conn.execute(
            "DELETE FROM short_messages WHERE user_id = ? AND session_id = ?",
            (user_id, session_id),
        ).rowcount
        conn.execute(
            "DELETE FROM short_sessions WHERE user_id = ? AND session_id = ?",
            (user_id, session_id),
        )
        return int(removed)

    # -- agent states -----------------------------------------------------------------------

    def agent(self, user_id: str, agent_id: str) -> AgentRecord | None:
        row = (
            self._db.get()
            .execute(
                "SELECT state, data, entered_at, version FROM agent_states "
                "WHERE user_id = ? AND agent_id = ?",
                (user_id, agent_id),
            )
            .fetchone()
        )
        if row is None:
            return None
        return AgentRecord(str(row[0]), json.loads(row[1]), float(row[2]), int(row[3]))

    def move_agent(
        self,
        user_id: str,
        agent_id: str,
        expected_version: int,
        record: AgentRecord,
        transition: TransitionRecord,
    ) -> None:
        """Write the new state and its log line together, if nobody moved it meanwhile."""
        data = json.dumps(record.data, ensure_ascii=False)
        with self._db.write() as conn:
            current = conn.execute(
                "SELECT version FROM agent_states WHERE user_id = ? AND agent_id = ?",
                (user_id, agent_id),
            ).fetchone()
            if (0 if current is None else int(current[0])) != expected_version:
                raise StaleStateError(f"agent {agent_id!r} was changed by another writer")
            conn.execute(
                "INSERT INTO agent_states(user_id, agent_id, state, data, entered_at, version) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(user_id, agent_id) DO UPDATE SET "
                "state = excluded.state, data = excluded.data, "
                "entered_at = excluded.entered_at, version = excluded.version",
                (user_id, agent_id, record.state, data, record.entered_at, record.version),
            )
            conn.execute(
                "INSERT INTO agent_transitions(user_id, agent_id, from_state, to_state, reason, "
                "at) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    user_id,
                    agent_id,
                    transition.from_state,
                    transition.to_state,
                    transition.reason,
                    transition.at,
                ),
            )

    def transitions(self, user_id: str, agent_id: str, limit: int) -> list[TransitionRecord]:
        rows = (
            self._db.get()
            .execute(
                "SELECT from_state, to_state, reason, at FROM agent_transitions "
                "WHERE user_id = ? AND agent_id = ? ORDER BY id DESC LIMIT ?",
                (user_id, agent_id, limit),
            )
            .fetchall()
        )
        return [TransitionRecord(r[0], str(r[1]), str(r[2]), float(r[3])) for r in rows[::-1]]

    def export_user(self, user_id: str) -> dict[str, Any]:
        conn = self._db.get()
        messages = conn.execute(
            "SELECT session_id, position, role, content, pinned, created_at FROM short_messages "
            "WHERE user_id = ? ORDER BY session_id, position",
            (user_id,),
        ).fetchall()
        states = conn.execute(
            "SELECT agent_id, state, data, entered_at FROM agent_states WHERE user_id = ?",
            (user_id,),
        ).fetchall()
        return exported_short_term(messages, ((r[0], r[1], json.loads(r[2]), r[3]) for r in states))

    def forget_user(self, tx: Transaction, user_id: str) -> int:
        conn = conn_of(tx)
        removed = 0
        for table in ("short_messages", "short_sessions", "agent_states", "agent_transitions"):
            removed += conn.execute(f"DELETE FROM {table} WHERE user_id = ?", (user_id,)).rowcount
        return removed
