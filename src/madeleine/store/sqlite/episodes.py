"""Episodes (retrievable passages), their vectors, the lexical index and session digests."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from madeleine.store.records import (
    EpisodeRow,
    IndexJob,
    StoredEpisode,
    Transaction,
    UserVectors,
)
from madeleine.store.sqlite.connection import Connections, SQLiteTransaction
from madeleine.store.sqlite.lexical import any_match, scope_token, scoped_any_match
from madeleine.store.sqlite.log import enqueue

# whether any episode belongs to another user than the one given twice (index probes)
_OTHER_USER = (
    "SELECT EXISTS (SELECT 1 FROM episodes WHERE user_id < ?) "
    "OR EXISTS (SELECT 1 FROM episodes WHERE user_id > ?)"
)

EPISODE_COLUMNS = (
    "id, user_id, session_id, kind, focus_event_id, event_ids, source_ids, speaker, prefix, "
    "body, context, occurred_at"
)
# SQLite limits bound parameters per statement; chunk IN (...) lists below it.
IN_CHUNK = 500


class EpisodeTables:
    """The ``episodes``, ``episode_vectors``, ``episodes_fts`` and session digest tables."""

    _db: Connections

    def commit_episodes(
        self,
        worker: str,
        done: Sequence[tuple[IndexJob, EpisodeRow | None]],
        then: Callable[[Transaction], None] | None = None,
    ) -> None:
        """Write episodes and retire their jobs in one transaction: indexed exactly once.
        ``then`` writes what else was derived from the batch (facts) in the same transaction."""
        now = time.time()
        touched: set[tuple[str, str]] = set()
        with self._db.write() as conn:
            for job, episode in done:
                owned = conn.execute(
                    "SELECT 1 FROM outbox WHERE id = ? AND claimed_by = ?", (job.outbox_id, worker)
                ).fetchone()
                if owned is None:
                    continue  # another worker took the job over after our lease expired
                conn.execute("DELETE FROM outbox WHERE id = ?", (job.outbox_id,))
                if episode is None:
                    continue  # the event was deleted meanwhile: nothing to index
                if not conn.execute(
                    "SELECT 1 FROM events WHERE id = ?", (episode.focus_event_id,)
                ).fetchone():
                    continue
                self._remove_episode_of_event(conn, episode.focus_event_id)
                episode_id = self._insert_episode(conn, episode, now)
                self._bump(conn, episode.user_id, changed=False)
                self._requeue_stale_successor(conn, episode, episode_id, now)
                touched.add((episode.user_id, episode.session_id))
            for user_id, session_id in touched:
                refresh_digest(conn, user_id, session_id)
            if then is not None:
                then(SQLiteTransaction(conn))

    @staticmethod
    def _insert_episode(conn: sqlite3.Connection, episode: EpisodeRow, now: float) -> int:
        cursor = conn.execute(
            "INSERT INTO episodes(user_id, session_id, kind, focus_event_id, context_event_id, "
            "event_ids, source_ids, speaker, prefix, body, context, occurred_at, indexed_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                episode.user_id,
                episode.session_id,
                episode.kind,
                episode.focus_event_id,
                episode.context_event_id,
                json.dumps(list(episode.event_ids)),
                json.dumps(list(episode.source_ids), ensure_ascii=False),
                episode.speaker,
                episode.prefix,
                episode.body,
                episode.context,
                episode.occurred_at,
                now,
            ),
        )
        episode_id = int(cursor.lastrowid or 0)
        conn.execute(
            "INSERT INTO episode_vectors(episode_id, user_id, vector) VALUES (?, ?, ?)",
            (episode_id, episode.user_id, np.asarray(episode.vector, dtype=np.float32).tobytes()),
        )
        conn.execute(
            "INSERT INTO episodes_fts(rowid, scope, body, context) VALUES (?, ?, ?, ?)",
            (episode_id, scope_token(episode.user_id), episode.body_terms, episode.context_terms),
        )
        return episode_id

    @staticmethod
    def _requeue_stale_successor(
        conn: sqlite3.Connection, episode: EpisodeRow, episode_id: int, now: float
    ) -> None:
        """A turn inserted out of order changes the context of the turn after it: re-index that."""
        row = conn.execute(
            "SELECT id FROM events WHERE user_id = ? AND session_id = ? "
            "AND (occurred_at > ? OR (occurred_at = ? AND id > ?)) "
            "ORDER BY occurred_at, id LIMIT 1",
            (
                episode.user_id,
                episode.session_id,
                episode.occurred_at,
                episode.occurred_at,
                episode.focus_event_id,
            ),
        ).fetchone()
        if row is None:
            return
        successor = int(row[0])
        indexed = conn.execute(
            "SELECT context_event_id FROM episodes WHERE focus_event_id = ?", (successor,)
        ).fetchone()
        if indexed is not None and indexed[0] != episode.focus_event_id:
            enqueue(conn, successor, episode.user_id, now)

    def _remove_episode_of_event(self, conn: sqlite3.Connection, event_id: int) -> str | None:
        row = conn.execute(
            "SELECT id, user_id FROM episodes WHERE focus_event_id = ?", (event_id,)
        ).fetchone()
        if row is None:
            return None
        self._remove_episode(conn, int(row[0]), str(row[1]))
        return str(row[1])

    def _remove_episode(self, conn: sqlite3.Connection, episode_id: int, user_id: str) -> None:
        conn.execute("DELETE FROM episodes WHERE id = ?", (episode_id,))
        conn.execute("DELETE FROM episode_vectors WHERE episode_id = ?", (episode_id,))
        conn.execute("DELETE FROM episodes_fts WHERE rowid = ?", (episode_id,))
        self._bump(conn, user_id, changed=True)

    @staticmethod
    def _bump(conn: sqlite3.Connection, user_id: str, changed: bool) -> None:
        conn.execute(
            "INSERT INTO user_state(user_id, added_gen, changed_gen) VALUES (?, 1, ?) "
            "ON CONFLICT(user_id) DO UPDATE SET added_gen = added_gen + 1, "
            "changed_gen = changed_gen + excluded.changed_gen",
            (user_id, 1 if changed else 0),
        )

    def lexical_search(
        self,
        user_id: str,
        terms: Sequence[str],
        limit: int,
        time_range: tuple[float, float] | None,
        context_weight: float = 0.35,
    ) -> list[tuple[int, float]]:
        """BM25 over analyzed terms, scoped by the user's token inside the FTS5 query.

        When the user is the only one with episodes, the scope token (a posting list as long
        as the table) is left out of the match and the statement instead checks, in its own
        snapshot, that no other user has an episode; if one appeared meanwhile the scoped
        query runs. The scope column weighs 0 in bm25, so the scores are the same.
        """
        conn = self._db.get()
        if self._sole_user(conn, user_id):
            found = self._lexical(
                conn,
                any_match("{body context}", terms),
                limit,
                time_range,
                context_weight,
                sole=user_id,
            )
            if found:
                return found
        match = scoped_any_match(user_id, "{body context}", terms)
        return self._lexical(conn, match, limit, time_range, context_weight)

    @staticmethod
    def _sole_user(conn: sqlite3.Connection, user_id: str) -> bool:
        """Whether no other user has an episode (two index probes)."""
        row = conn.execute(_OTHER_USER, (user_id, user_id)).fetchone()
        return not row[0]

    @staticmethod
    def _lexical(
        conn: sqlite3.Connection,
        match: str | None,
        limit: int,
        time_range: tuple[float, float] | None,
        context_weight: float,
        sole: str | None = None,
    ) -> list[tuple[int, float]]:
        if match is None:
            return []
        sql = "SELECT f.rowid, bm25(episodes_fts, 0.0, 1.0, ?) AS rank FROM episodes_fts AS f "
        params: list[Any] = [context_weight]
        if time_range is not None:
            sql += "JOIN episodes AS e ON e.id = f.rowid WHERE episodes_fts MATCH ? "
            sql += "AND e.occurred_at >= ? AND e.occurred_at <= ? "
            params += [match, time_range[0], time_range[1]]
        else:
            sql += "WHERE episodes_fts MATCH ? "
            params.append(match)
        if sole is not None:
            sql += f"AND NOT ({_OTHER_USER[len('SELECT ') :]}) "
            params += [sole, sole]
        sql += "ORDER BY rank LIMIT ?"
        params.append(limit)
        rows = conn.execute(sql, params).fetchall()
        return [(int(r[0]), -float(r[1])) for r in rows]

    def phrase_matches(self, user_id: str, terms: Sequence[str], limit: int) -> list[int]:
        """Episodes whose text holds ``terms`` as one consecutive phrase (an exact mention)."""
        phrase = " ".join(t.replace('"', "") for t in terms if t)
        if not phrase:
            return []
        conn = self._db.get()
        sql = "SELECT rowid FROM episodes_fts WHERE episodes_fts MATCH ? "
        if self._sole_user(conn, user_id):  # as in lexical_search: no scope posting list
            guarded = sql + f"AND NOT ({_OTHER_USER[len('SELECT ') :]}) LIMIT ?"
            rows = conn.execute(guarded, (f'body : "{phrase}"', user_id, user_id, limit))
            found = [int(r[0]) for r in rows.fetchall()]
            if found:
                return found
        match = f'scope : "{scope_token(user_id)}" AND body : "{phrase}"'
        return [int(r[0]) for r in conn.execute(sql + "LIMIT ?", (match, limit)).fetchall()]

    def session_search(
        self, user_id: str, terms: Sequence[str], limit: int
    ) -> list[tuple[str, float, str]]:
        """BM25 over session digests: (session id, score, digest keywords).

        As in ``lexical_search``, a user alone in the store is matched without the scope
        token (whose posting list holds every digest); the join then keeps the user's
        digests, so the result never depends on that check. Scores are unchanged: the scope
        column weighs 0."""
        conn = self._db.get()
        sql = (
            "SELECT d.session_id, bm25(session_fts, 0.0, 1.0) AS rank, d.keywords "
            "FROM session_fts AS f JOIN session_digests AS d ON d.id = f.rowid "
            "WHERE session_fts MATCH ? "
        )
        if self._sole_user(conn, user_id):
            match = any_match("body", terms)
            sql += "AND d.user_id = ? ORDER BY rank LIMIT ?"
            params: tuple[Any, ...] = (match, user_id, limit)
        else:
            match = scoped_any_match(user_id, "body", terms)
            sql += "ORDER BY rank LIMIT ?"
            params = (match, limit)
        if match is None:
            return []
        rows = conn.execute(sql, params).fetchall()
        return [(str(r[0]), -float(r[1]), str(r[2])) for r in rows]

    def rebuild_missing_digests(self) -> int:
        """Stores indexed before digests existed get them from their episodes (no re-embedding)."""
        with self._db.write() as conn:
            missing = conn.execute(
                "SELECT DISTINCT e.user_id, e.session_id FROM episodes AS e "
                "LEFT JOIN session_digests AS d "
                "ON d.user_id = e.user_id AND d.session_id = e.session_id WHERE d.id IS NULL"
            ).fetchall()
            for user_id, session_id in missing:
                refresh_digest(conn, str(user_id), str(session_id))
        return len(missing)

    def user_generation(self, user_id: str) -> tuple[int, int]:
        row = (
            self._db.get()
            .execute("SELECT added_gen, changed_gen FROM user_state WHERE user_id = ?", (user_id,))
            .fetchone()
        )
        return (0, 0) if row is None else (int(row[0]), int(row[1]))

    def vector_count(self, user_id: str) -> int:
        row = (
            self._db.get()
            .execute("SELECT count(*) FROM episode_vectors WHERE user_id = ?", (user_id,))
            .fetchone()
        )
        return int(row[0])

    def user_vectors(
        self, user_id: str, after_id: int = 0, with_vectors: bool = True
    ) -> UserVectors:
        vector = "v.vector" if with_vectors else "x''"
        rows = (
            self._db.get()
            .execute(
                f"SELECT v.episode_id, e.occurred_at, {vector}, e.session_id, e.kind, "
                "COALESCE(json_extract(ev.metadata, '$.pinned'), 0) "
                "FROM episode_vectors AS v "
                "JOIN episodes AS e ON e.id = v.episode_id "
                "LEFT JOIN events AS ev ON ev.id = e.focus_event_id "
                "WHERE v.user_id = ? AND v.episode_id > ? ORDER BY v.episode_id",
                (user_id, after_id),
            )
            .fetchall()
        )
        if not rows:
            return UserVectors(
                np.zeros(0, dtype=np.int64),
                np.zeros(0),
                np.zeros((0, 0), dtype=np.float32),
                [],
                [],
                np.zeros(0, dtype=np.bool_),
            )
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        times = np.fromiter((r[1] for r in rows), dtype=np.float64, count=len(rows))
        matrix = np.frombuffer(b"".join(r[2] for r in rows), dtype=np.float32).reshape(
            len(rows), -1
        )
        pinned = np.fromiter((bool(r[5]) for r in rows), dtype=np.bool_, count=len(rows))
        return UserVectors(
            ids, times, matrix, [str(r[3]) for r in rows], [str(r[4]) for r in rows], pinned
        )

    def episodes(self, ids: Sequence[int]) -> dict[int, StoredEpisode]:
        found: dict[int, StoredEpisode] = {}
        conn = self._db.get()
        for start in range(0, len(ids), IN_CHUNK):
            chunk = list(ids[start : start + IN_CHUNK])
            marks = ",".join("?" * len(chunk))
            for row in conn.execute(
                f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE id IN ({marks})", chunk
            ):
                found[int(row[0])] = _episode_from_row(row)
        return found

    def episodes_for_user(self, user_id: str) -> list[StoredEpisode]:
        rows = (
            self._db.get()
            .execute(
                f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE user_id = ? "
                "ORDER BY occurred_at, id",
                (user_id,),
            )
            .fetchall()
        )
        return [_episode_from_row(r) for r in rows]

    def episode_focus(self, episode_id: int) -> int | None:
        row = (
            self._db.get()
            .execute("SELECT focus_event_id FROM episodes WHERE id = ?", (episode_id,))
            .fetchone()
        )
        return None if row is None else int(row[0])


def purge_lexical_remnants(conn: sqlite3.Connection) -> None:
    """FTS5 keeps deleted terms in old segments until they merge; merge now so that a deleted
    memory's words are gone from the file, not just from query results."""
    conn.execute("INSERT INTO episodes_fts(episodes_fts) VALUES ('optimize')")
    conn.execute("INSERT INTO session_fts(session_fts) VALUES ('optimize')")
    conn.execute("INSERT INTO facts_fts(facts_fts) VALUES ('optimize')")


def refresh_digest(conn: sqlite3.Connection, user_id: str, session_id: str) -> None:
    """Rebuild one session's digest from its episodes' analyzed terms."""
    old = conn.execute(
        "SELECT id FROM session_digests WHERE user_id = ? AND session_id = ?",
        (user_id, session_id),
    ).fetchone()
    if old is not None:
        conn.execute("DELETE FROM session_fts WHERE rowid = ?", (old[0],))
        conn.execute("DELETE FROM session_digests WHERE id = ?", (old[0],))
    rows = conn.execute(
        "SELECT f.body, e.occurred_at FROM episodes AS e JOIN episodes_fts AS f ON f.rowid = e.id "
        "WHERE e.user_id = ? AND e.session_id = ? ORDER BY e.occurred_at, e.id",
        (user_id, session_id),
    ).fetchall()
    if not rows:
        return
    terms = " ".join(str(r[0]) for r in rows)
    counts: dict[str, int] = {}
    for term in terms.split():
        counts[term] = counts.get(term, 0) + 1
    keywords = sorted(counts, key=lambda t: (-counts[t], t))[:12]
    cursor = conn.execute(
        "INSERT INTO session_digests(user_id, session_id, turns, started_at, ended_at, keywords) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (user_id, session_id, len(rows), rows[0][1], rows[-1][1], " ".join(keywords)),
    )
    conn.execute(
        "INSERT INTO session_fts(rowid, scope, body) VALUES (?, ?, ?)",
        (cursor.lastrowid, scope_token(user_id), terms),
    )


def _episode_from_row(row: Sequence[Any]) -> StoredEpisode:
    return StoredEpisode(
        id=int(row[0]),
        user_id=str(row[1]),
        session_id=str(row[2]),
        kind=str(row[3]),
        focus_event_id=int(row[4]),
        event_ids=tuple(json.loads(row[5])),
        source_ids=tuple(json.loads(row[6])),
        speaker=row[7],
        prefix=str(row[8]),
        body=str(row[9]),
        context=str(row[10]),
        occurred_at=float(row[11]),
    )
