"""Episodes (retrievable passages), their vectors, BM25 terms and session digests, on
PostgreSQL: the read path's queries run in the database, per user."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from madeleine.store.postgres.connection import Database, PgTransaction, lock_users
from madeleine.store.postgres.lexical import (
    bm25,
    count_documents,
    phrase_query,
    query_lexemes,
    tokens,
    tsvector_literal,
)
from madeleine.store.postgres.log import enqueue
from madeleine.store.records import (
    EpisodeRow,
    IndexJob,
    StoredEpisode,
    Transaction,
    UserVectors,
)

EPISODE_COLUMNS = (
    "id, user_id, session_id, kind, focus_event_id, event_ids, source_ids, speaker, prefix, "
    "body, context, occurred_at"
)


class PgEpisodes:
    """The ``episodes``, ``user_state``, ``session_digests`` and ``lexical_stats`` tables."""

    _db: Database

    def commit_episodes(
        self,
        worker: str,
        done: Sequence[tuple[IndexJob, EpisodeRow | None]],
        then: Callable[[Transaction], None] | None = None,
    ) -> None:
        """Write episodes and retire their jobs in one transaction: indexed exactly once
        (a job another worker took over after our lease ran out is left to it). ``then``
        writes what else was derived from the batch (facts) in the same transaction."""
        now = time.time()
        touched: set[tuple[str, str]] = set()
        with self._db.connect() as conn:
            lock_users(conn, (episode.user_id for _, episode in done if episode is not None))
            for job, episode in done:
                retired = conn.execute(
                    "DELETE FROM outbox WHERE id = %s AND claimed_by = %s RETURNING 1",
                    (job.outbox_id, worker),
                ).fetchone()
                if retired is None or episode is None:
                    continue  # taken over by another worker, or the event is gone
                alive = conn.execute(
                    "SELECT 1 FROM events WHERE id = %s FOR SHARE", (episode.focus_event_id,)
                ).fetchone()
                if alive is None:
                    continue
                remove_episode_of_event(conn, episode.focus_event_id)
                insert_episode(conn, episode, now)
                bump(conn, episode.user_id, changed=False)
                _requeue_stale_successor(conn, episode, now)
                touched.add((episode.user_id, episode.session_id))
            for user_id, session_id in sorted(touched):
                refresh_digest(conn, user_id, session_id)
            if then is not None:
                then(PgTransaction(conn))

    def lexical_search(
        self,
        user_id: str,
        terms: Sequence[str],
        limit: int,
        time_range: tuple[float, float] | None,
        context_weight: float = 0.35,
    ) -> list[tuple[int, float]]:
        """BM25 over the user's episodes: body terms weigh 1, context terms
        ``context_weight``."""
        where = "user_id = %(user)s"
        params: dict[str, Any] = {"user": user_id}
        if time_range is not None:
            where += " AND occurred_at >= %(start)s AND occurred_at <= %(end)s"
            params |= {"start": time_range[0], "end": time_range[1]}
        with self._db.connect() as conn:
            return bm25(
                conn,
                table="episodes",
                corpus="episodes",
                columns=[("body_terms", 1.0), ("context_terms", context_weight)],
                lexemes=query_lexemes(terms),
                where=where,
                params=params,
                limit=limit,
            )

    def phrase_matches(self, user_id: str, terms: Sequence[str], limit: int) -> list[int]:
        """Episodes whose body holds ``terms`` as one consecutive phrase (an exact mention)."""
        lexemes = [t for term in terms for t in tokens(term)]
        if not lexemes:
            return []
        with self._db.connect() as conn:
            rows = conn.execute(
                """SELECT id FROM episodes WHERE user_id = %s AND body_terms @@ %s::tsquery
                   ORDER BY id LIMIT %s""",
                (user_id, phrase_query(lexemes), limit),
            ).fetchall()
        return [int(r[0]) for r in rows]

    def session_search(
        self, user_id: str, terms: Sequence[str], limit: int
    ) -> list[tuple[str, float, str]]:
        """BM25 over the user's session digests: (session id, score, digest keywords)."""
        with self._db.connect() as conn:
            found = bm25(
                conn,
                table="session_digests",
                corpus="sessions",
                columns=[("terms", 1.0)],
                lexemes=query_lexemes(terms),
                where="user_id = %(user)s",
                params={"user": user_id},
                limit=limit,
            )
            if not found:
                return []
            rows = conn.execute(
                "SELECT id, session_id, keywords FROM session_digests WHERE id = ANY(%s)",
                ([i for i, _ in found],),
            ).fetchall()
        named = {int(r[0]): (str(r[1]), str(r[2])) for r in rows}
        return [(named[i][0], score, named[i][1]) for i, score in found if i in named]

    def rebuild_missing_digests(self) -> int:
        """Sessions with episodes but no digest get one (no re-embedding)."""
        with self._db.connect() as conn:
            missing = conn.execute(
                """SELECT DISTINCT e.user_id, e.session_id FROM episodes e
                   LEFT JOIN session_digests d
                   ON d.user_id = e.user_id AND d.session_id = e.session_id
                   WHERE d.id IS NULL ORDER BY 1, 2"""
            ).fetchall()
            for user_id, session_id in missing:
                refresh_digest(conn, str(user_id), str(session_id))
        return len(missing)

    def user_generation(self, user_id: str) -> tuple[int, int]:
        with self._db.connect() as conn:
            row = conn.execute(
                "SELECT added_gen, changed_gen FROM user_state WHERE user_id = %s", (user_id,)
            ).fetchone()
        return (0, 0) if row is None else (int(row[0]), int(row[1]))

    def vector_count(self, user_id: str) -> int:
        with self._db.connect() as conn:
            row = conn.execute(
                "SELECT count(*) FROM episodes WHERE user_id = %s", (user_id,)
            ).fetchone()
        return int(row[0])

    def user_vectors(
        self, user_id: str, after_id: int = 0, with_vectors: bool = True
    ) -> UserVectors:
        vector = "e.vector" if with_vectors else "NULL"
        with self._db.connect() as conn:
            rows = conn.execute(
                f"""SELECT e.id, e.occurred_at, {vector}, e.session_id, e.kind,
                          coalesce((ev.metadata ->> 'pinned')::boolean, false)
                   FROM episodes e LEFT JOIN events ev ON ev.id = e.focus_event_id
                   WHERE e.user_id = %s AND e.id > %s ORDER BY e.id""",
                (user_id, after_id),
            ).fetchall()
        if not rows:
            return UserVectors(
                np.zeros(0, dtype=np.int64),
                np.zeros(0),
                np.zeros((0, 0), dtype=np.float32),
                [],
                [],
                np.zeros(0, dtype=np.bool_),
            )
        return UserVectors(
            np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows)),
            np.fromiter((r[1] for r in rows), dtype=np.float64, count=len(rows)),
            (
                np.stack([as_array(r[2]) for r in rows])
                if with_vectors
                else np.zeros((len(rows), 0), dtype=np.float32)
            ),
            [str(r[3]) for r in rows],
            [str(r[4]) for r in rows],
            np.fromiter((bool(r[5]) for r in rows), dtype=np.bool_, count=len(rows)),
        )

    def episodes(self, ids: Sequence[int]) -> dict[int, StoredEpisode]:
        if not ids:
            return {}
        with self._db.connect() as conn:
            rows = conn.execute(
                f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE id = ANY(%s)", (list(ids),)
            ).fetchall()
        return {int(r[0]): _episode(r) for r in rows}

    def episodes_for_user(self, user_id: str) -> list[StoredEpisode]:
        with self._db.connect() as conn:
            rows = conn.execute(
                f"""SELECT {EPISODE_COLUMNS} FROM episodes WHERE user_id = %s
                    ORDER BY occurred_at, id""",
                (user_id,),
            ).fetchall()
        return [_episode(r) for r in rows]

    def episode_focus(self, episode_id: int) -> int | None:
        with self._db.connect() as conn:
            row = conn.execute(
                "SELECT focus_event_id FROM episodes WHERE id = %s", (episode_id,)
            ).fetchone()
        return None if row is None else int(row[0])


def as_array(value: Any) -> np.ndarray[Any, np.dtype[np.float32]]:
    """A pgvector value as a float32 array (the adapter gives ``Vector`` or an array)."""
    raw = value.to_numpy() if hasattr(value, "to_numpy") else value
    return np.asarray(raw, dtype=np.float32)


def insert_episode(conn: Any, episode: EpisodeRow, now: float) -> int:
    body, body_length = tsvector_literal(episode.body_terms)
    context, context_length = tsvector_literal(episode.context_terms)
    length = body_length + context_length + 1  # + the scope token FTS5 counts
    row = conn.execute(
        """INSERT INTO episodes(user_id, session_id, kind, focus_event_id, context_event_id,
           event_ids, source_ids, speaker, prefix, body, context, occurred_at, indexed_at,
           body_terms, context_terms, body_text, terms_length, vector)
           VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s,
                   %s::tsvector, %s::tsvector, %s, %s, %s) RETURNING id""",
        (
            episode.user_id,
            episode.session_id,
            episode.kind,
            episode.focus_event_id,
            episode.context_event_id,
            list(episode.event_ids),
            list(episode.source_ids),
            episode.speaker,
            episode.prefix,
            episode.body,
            episode.context,
            episode.occurred_at,
            now,
            body,
            context,
            episode.body_terms,
            length,
            np.asarray(episode.vector, dtype=np.float32),
        ),
    ).fetchone()
    count_documents(conn, "episodes", 1, length)
    return int(row[0])


def remove_episode_of_event(conn: Any, event_id: int) -> str | None:
    row = conn.execute(
        "DELETE FROM episodes WHERE focus_event_id = %s RETURNING user_id, terms_length",
        (event_id,),
    ).fetchone()
    if row is None:
        return None
    count_documents(conn, "episodes", -1, -int(row[1]))
    bump(conn, str(row[0]), changed=True)
    return str(row[0])


def bump(conn: Any, user_id: str, changed: bool) -> None:
    conn.execute(
        """INSERT INTO user_state(user_id, added_gen, changed_gen) VALUES (%s, 1, %s)
           ON CONFLICT (user_id) DO UPDATE SET added_gen = user_state.added_gen + 1,
           changed_gen = user_state.changed_gen + excluded.changed_gen""",
        (user_id, 1 if changed else 0),
    )


def _requeue_stale_successor(conn: Any, episode: EpisodeRow, now: float) -> None:
    """A turn inserted out of order changes the context of the turn after it: re-index it."""
    row = conn.execute(
        """SELECT id FROM events WHERE user_id = %s AND session_id = %s
           AND (occurred_at, id) > (%s, %s) ORDER BY occurred_at, id LIMIT 1""",
        (episode.user_id, episode.session_id, episode.occurred_at, episode.focus_event_id),
    ).fetchone()
    if row is None:
        return
    indexed = conn.execute(
        "SELECT context_event_id FROM episodes WHERE focus_event_id = %s", (row[0],)
    ).fetchone()
    if indexed is not None and indexed[0] != episode.focus_event_id:
        enqueue(conn, int(row[0]), episode.user_id, now)


def refresh_digest(conn: Any, user_id: str, session_id: str) -> None:
    """Rebuild one session's digest from its episodes' analyzed terms."""
    old = conn.execute(
        """DELETE FROM session_digests WHERE user_id = %s AND session_id = %s
           RETURNING terms_length""",
        (user_id, session_id),
    ).fetchone()
    if old is not None:
        count_documents(conn, "sessions", -1, -int(old[0]))
    rows = conn.execute(
        """SELECT body_text, occurred_at FROM episodes WHERE user_id = %s AND session_id = %s
           ORDER BY occurred_at, id""",
        (user_id, session_id),
    ).fetchall()
    if not rows:
        return
    terms = " ".join(str(r[0]) for r in rows)
    counts = Counter(terms.split())
    keywords = sorted(counts, key=lambda t: (-counts[t], t))[:12]
    literal, length = tsvector_literal(terms)
    conn.execute(
        """INSERT INTO session_digests(user_id, session_id, turns, started_at, ended_at,
           keywords, terms, terms_length) VALUES (%s, %s, %s, %s, %s, %s, %s::tsvector, %s)""",
        (
            user_id,
            session_id,
            len(rows),
            rows[0][1],
            rows[-1][1],
            " ".join(keywords),
            literal,
            length + 1,
        ),
    )
    count_documents(conn, "sessions", 1, length + 1)


def _episode(row: Sequence[Any]) -> StoredEpisode:
    return StoredEpisode(
        id=int(row[0]),
        user_id=str(row[1]),
        session_id=str(row[2]),
        kind=str(row[3]),
        focus_event_id=int(row[4]),
        event_ids=tuple(int(i) for i in row[5]),
        source_ids=tuple(str(s) for s in row[6]),
        speaker=row[7],
        prefix=str(row[8]),
        body=str(row[9]),
        context=str(row[10]),
        occurred_at=float(row[11]),
    )
