"""Short-term memory on PostgreSQL: conversation buffers (with a time to live) and agent
state machines, versioned so that a stale writer is refused."""

from __future__ import annotations

from typing import Any

from psycopg.types.json import Jsonb

from madeleine.store.export import exported_short_term
from madeleine.store.postgres.connection import Database, conn_of
from madeleine.store.records import (
    AgentRecord,
    BufferedMessage,
    SessionInfo,
    StaleStateError,
    Transaction,
    TransitionRecord,
)


class PgShortTerm:
    def __init__(self, db: Database) -> None:
        self._db = db

    def append(
        self,
        user_id: str,
        session_id: str,
        message: BufferedMessage,
        expires_at: float | None,
    ) -> int:
        """Append at the session's next position (a session past its expiry starts over)."""
        with self._db.connect() as conn:
            expired = conn.execute(
                """SELECT 1 FROM short_sessions WHERE user_id = %s AND session_id = %s
                   AND expires_at IS NOT NULL AND expires_at <= %s FOR UPDATE""",
                (user_id, session_id, message.created_at),
            ).fetchone()
            if expired is not None:
                _drop(conn, user_id, session_id)
            row = conn.execute(
                """INSERT INTO short_sessions(user_id, session_id, updated_at, expires_at,
                   next_position) VALUES (%s, %s, %s, %s, 2)
                   ON CONFLICT (user_id, session_id) DO UPDATE SET
                   updated_at = excluded.updated_at, expires_at = excluded.expires_at,
                   next_position = short_sessions.next_position + 1
                   RETURNING next_position - 1""",
                (user_id, session_id, message.created_at, expires_at),
            ).fetchone()
            position = int(row[0])
            conn.execute(
                """INSERT INTO short_messages(user_id, session_id, position, role, content,
                   name, pinned, created_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)""",
                (
                    user_id,
                    session_id,
                    position,
                    message.role,
                    message.content,
                    message.name,
                    message.pinned,
                    message.created_at,
                ),
            )
        return position

    def messages(self, user_id: str, session_id: str, now: float) -> list[BufferedMessage]:
        if self.session(user_id, session_id, now) is None:
            return []
        with self._db.connect() as conn:
            rows = conn.execute(
                """SELECT position, role, content, name, pinned, created_at FROM short_messages
                   WHERE user_id = %s AND session_id = %s ORDER BY position""",
                (user_id, session_id),
            ).fetchall()
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
        with self._db.connect() as conn:
            row = conn.execute(
                """SELECT s.summary, s.folded, s.updated_at, s.expires_at,
                   (SELECT count(*) FROM short_messages m
                    WHERE m.user_id = s.user_id AND m.session_id = s.session_id)
                   FROM short_sessions s WHERE s.user_id = %s AND s.session_id = %s""",
                (user_id, session_id),
            ).fetchone()
        if row is None or (row[3] is not None and row[3] <= now):
            return None
        return SessionInfo(session_id, str(row[0]), int(row[1]), float(row[2]), row[3], int(row[4]))

    def sessions(self, user_id: str, now: float) -> list[SessionInfo]:
        with self._db.connect() as conn:
            rows = conn.execute(
                """SELECT session_id FROM short_sessions WHERE user_id = %s
                   AND (expires_at IS NULL OR expires_at > %s) ORDER BY updated_at DESC""",
                (user_id, now),
            ).fetchall()
        found = [self.session(user_id, str(r[0]), now) for r in rows]
        return [s for s in found if s is not None]

    def fold(self, user_id: str, session_id: str, summary: str, through: int) -> None:
        """Record the rolling summary of every message up to position ``through``."""
        with self._db.connect() as conn:
            conn.execute(
                """UPDATE short_sessions SET summary = %s, folded = greatest(folded, %s)
                   WHERE user_id = %s AND session_id = %s""",
                (summary, through, user_id, session_id),
            )

    def clear(self, user_id: str, session_id: str) -> int:
        with self._db.connect() as conn:
            return _drop(conn, user_id, session_id)

    def purge_expired(self, now: float) -> int:
        with self._db.connect() as conn:
            expired = conn.execute(
                """SELECT user_id, session_id FROM short_sessions
                   WHERE expires_at IS NOT NULL AND expires_at <= %s""",
                (now,),
            ).fetchall()
            return sum(_drop(conn, str(u), str(s)) for u, s in expired)

    def agent(self, user_id: str, agent_id: str) -> AgentRecord | None:
        with self._db.connect() as conn:
            row = conn.execute(
                """SELECT state, data, entered_at, version FROM agent_states
                   WHERE user_id = %s AND agent_id = %s""",
                (user_id, agent_id),
            ).fetchone()
        if row is None:
            return None
        return AgentRecord(str(row[0]), dict(row[1]), float(row[2]), int(row[3]))

    def move_agent(
        self,
        user_id: str,
        agent_id: str,
        expected_version: int,
        record: AgentRecord,
        transition: TransitionRecord,
    ) -> None:
        """Write the new state and its log line together, if nobody moved it meanwhile."""
        stale = StaleStateError(f"agent {agent_id!r} was changed by another writer")
        with self._db.connect() as conn:
            if expected_version == 0:
                row = conn.execute(
                    """INSERT INTO agent_states(user_id, agent_id, state, data, entered_at,
                       version) VALUES (%s, %s, %s, %s, %s, %s)
                       ON CONFLICT DO NOTHING RETURNING 1""",
                    (
                        user_id,
                        agent_id,
                        record.state,
                        Jsonb(record.data),
                        record.entered_at,
                        record.version,
                    ),
                ).fetchone()
            else:
                row = conn.execute(
                    """UPDATE agent_states SET state = %s, data = %s, entered_at = %s,
                       version = %s WHERE user_id = %s AND agent_id = %s AND version = %s
                       RETURNING 1""",
                    (
                        record.state,
                        Jsonb(record.data),
                        record.entered_at,
                        record.version,
                        user_id,
                        agent_id,
                        expected_version,
                    ),
                ).fetchone()
            if row is None:
                raise stale
            conn.execute(
                """INSERT INTO agent_transitions(user_id, agent_id, from_state, to_state,
                   reason, at) VALUES (%s, %s, %s, %s, %s, %s)""",
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
        with self._db.connect() as conn:
            rows = conn.execute(
                """SELECT from_state, to_state, reason, at FROM agent_transitions
                   WHERE user_id = %s AND agent_id = %s ORDER BY id DESC LIMIT %s""",
                (user_id, agent_id, limit),
            ).fetchall()
        return [TransitionRecord(r[0], str(r[1]), str(r[2]), float(r[3])) for r in rows[::-1]]

    def export_user(self, user_id: str) -> dict[str, Any]:
        with self._db.connect() as conn:
            messages = conn.execute(
                """SELECT session_id, position, role, content, pinned, created_at
                   FROM short_messages WHERE user_id = %s ORDER BY session_id, position""",
                (user_id,),
            ).fetchall()
            states = conn.execute(
                """SELECT agent_id, state, data, entered_at FROM agent_states
                   WHERE user_id = %s ORDER BY agent_id""",
                (user_id,),
            ).fetchall()
        return exported_short_term(messages, ((r[0], r[1], dict(r[2]), r[3]) for r in states))

    def forget_user(self, tx: Transaction, user_id: str) -> int:
        conn = conn_of(tx)
        removed = 0
        for table in ("short_messages", "short_sessions", "agent_states", "agent_transitions"):
            removed += conn.execute(f"DELETE FROM {table} WHERE user_id = %s", (user_id,)).rowcount
        return removed


def _drop(conn: Any, user_id: str, session_id: str) -> int:
    removed = conn.execute(
        "DELETE FROM short_messages WHERE user_id = %s AND session_id = %s",
        (user_id, session_id),
    ).rowcount
    conn.execute(
        "DELETE FROM short_sessions WHERE user_id = %s AND session_id = %s",
        (user_id, session_id),
    )
    return int(removed)
