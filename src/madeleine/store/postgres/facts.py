"""Facts, their sources, the routing log and alerts on PostgreSQL. Writes take the caller's
transaction so that a batch of episodes and the facts drawn from it commit together."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt
from psycopg.types.json import Jsonb

from madeleine.facts.cards import Card, CardDraft
from madeleine.store.postgres.connection import Database, conn_of, lock_users
from madeleine.store.postgres.episodes import as_array
from madeleine.store.postgres.lexical import (
    bm25,
    count_documents,
    query_lexemes,
    tsvector_literal,
)
from madeleine.store.records import FactVectors, StoredFact, Transaction, fact_number
from madeleine.text.timeparse import from_epoch, to_epoch

# the lifecycle's archive, applied in the query: an archived card is out of every listing
ARCHIVED_FACTS = (
    " AND NOT EXISTS (SELECT 1 FROM item_states s WHERE s.user_id = facts.user_id"
    " AND s.item = 'fact_' || facts.id AND s.archived_at IS NOT NULL)"
)
_COLUMNS = (
    "id, user_id, card, status, recorded_at, superseded_at, supersedes, superseded_by, "
    "pinned, extractor, valid_from, valid_to, confidence, vector"
)


class PgFacts:
    """Erasure is called by the store's delete cascade, inside its transaction."""

    def __init__(self, db: Database) -> None:
        self._db = db

    # -- writing (inside the caller's transaction) ----------------------------------------------

    def current(self, tx: Transaction, user_id: str) -> list[StoredFact]:
        return _current(conn_of(tx), user_id)

    def read_current(self, user_id: str) -> list[StoredFact]:
        with self._db.connect() as conn:
            return _current(conn, user_id)

    def lock_user(self, tx: Transaction, user_id: str) -> None:
        lock_users(conn_of(tx), [user_id])

    def fetch(self, tx: Transaction, fact_id: int) -> StoredFact | None:
        return _fetch(conn_of(tx), fact_id)

    def insert(
        self,
        tx: Transaction,
        user_id: str,
        draft: CardDraft,
        vector: npt.NDArray[np.float32],
        terms: str,
        *,
        status: str,
        extractor: str,
        now: float,
    ) -> int:
        conn = conn_of(tx)
        literal, length = tsvector_literal(terms)
        row = conn.execute(
            """INSERT INTO facts(user_id, subject, key, category, statement, card, status,
               valid_from, valid_to, recorded_at, confidence, importance, extractor, terms,
               terms_length, vector)
               VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s::tsvector, %s, %s)
               RETURNING id""",
            (
                user_id,
                draft.subject.casefold(),
                draft.key,
                draft.category.value,
                draft.statement,
                Jsonb(json.loads(draft.model_dump_json())),
                status,
                _epoch(draft.valid_from),
                _epoch(draft.valid_to),
                now,
                draft.confidence,
                draft.importance,
                extractor,
                literal,
                length + 1,
                np.asarray(vector, dtype=np.float32),
            ),
        ).fetchone()
        fact_id = int(row[0])
        _add_sources(conn, fact_id, draft.sources)
        count_documents(conn, "facts", 1, length + 1)
        return fact_id

    def supersede(
        self, tx: Transaction, old_id: int, new_id: int, now: float, valid_to: float | None
    ) -> None:
        """``new`` replaces ``old``: old keeps its card, gains an end and a successor."""
        conn = conn_of(tx)
        conn.execute(
            """UPDATE facts SET status = 'superseded', superseded_at = %s, superseded_by = %s,
               valid_to = coalesce(valid_to, %s) WHERE id = %s""",
            (now, new_id, valid_to, old_id),
        )
        conn.execute("UPDATE facts SET supersedes = %s WHERE id = %s", (old_id, new_id))

    def correct(self, tx: Transaction, old_id: int, new_id: int, now: float) -> None:
        conn = conn_of(tx)
        conn.execute(
            "UPDATE facts SET status = 'superseded', superseded_at = %s, superseded_by = %s, "
            "valid_to = coalesce(valid_from, recorded_at) WHERE id = %s",
            (now, new_id, old_id),
        )
        conn.execute("UPDATE facts SET supersedes = %s WHERE id = %s", (old_id, new_id))

    def reinforce(
        self, tx: Transaction, fact_id: int, confidence: float, sources: Sequence[int]
    ) -> None:
        """A duplicate: more confidence, more sources, no new card."""
        conn = conn_of(tx)
        conn.execute("UPDATE facts SET confidence = %s WHERE id = %s", (confidence, fact_id))
        _add_sources(conn, fact_id, sources)
        _sync_sources(conn, [fact_id])

    def set_support(
        self, tx: Transaction, fact_id: int, confidence: float, sources: Sequence[int]
    ) -> None:
        """Exactly this confidence and these sources (a merge, or the undoing of one)."""
        conn = conn_of(tx)
        conn.execute("UPDATE facts SET confidence = %s WHERE id = %s", (confidence, fact_id))
        conn.execute("DELETE FROM fact_sources WHERE fact_id = %s", (fact_id,))
        _add_sources(conn, fact_id, sources)
        _sync_sources(conn, [fact_id])

    def mark_superseded_by(self, tx: Transaction, new_id: int, old: StoredFact, now: float) -> None:
        """A late-arriving older statement: ``new_id`` is history from the start, superseded
        by the ``old`` current fact (which becomes its successor in the chain)."""
        conn = conn_of(tx)
        conn.execute(
            "UPDATE facts SET superseded_by = %s, superseded_at = %s WHERE id = %s",
            (old.number, now, new_id),
        )
        if old.card.supersedes is None:
            conn.execute("UPDATE facts SET supersedes = %s WHERE id = %s", (new_id, old.number))

    def set_pinned(self, fact_id: int, pinned: bool) -> None:
        with self._db.connect() as conn:
            conn.execute("UPDATE facts SET pinned = %s WHERE id = %s", (pinned, fact_id))

    def set_status(self, tx: Transaction, fact_id: int, status: str) -> None:
        conn_of(tx).execute("UPDATE facts SET status = %s WHERE id = %s", (status, fact_id))

    def log(
        self,
        tx: Transaction,
        user_id: str,
        decision: str,
        fact_id: int | None,
        other_id: int | None,
        detail: dict[str, Any],
        now: float,
    ) -> None:
        conn_of(tx).execute(
            """INSERT INTO routing_log(user_id, at, decision, fact_id, other_id, detail)
               VALUES (%s, %s, %s, %s, %s, %s)""",
            (user_id, now, decision, fact_id, other_id, Jsonb(detail)),
        )

    def upsert_alert(
        self,
        tx: Transaction,
        user_id: str,
        rule: str,
        fingerprint: str,
        severity: str,
        message: str,
        fact_ids: Sequence[str],
        now: float,
    ) -> bool:
        row = (
            conn_of(tx)
            .execute(
                """INSERT INTO alerts(user_id, rule, fingerprint, severity, message, fact_ids,
                   created_at) VALUES (%s, %s, %s, %s, %s, %s, %s)
                   ON CONFLICT DO NOTHING RETURNING id""",
                (user_id, rule, fingerprint, severity, message, list(fact_ids), now),
            )
            .fetchone()
        )
        return row is not None

    def clear_alerts_without(self, tx: Transaction, user_id: str) -> None:
        """Alerts whose facts are no longer all current are stale."""
        conn_of(tx).execute(
            """DELETE FROM alerts a WHERE a.user_id = %s AND EXISTS (
                   SELECT 1 FROM unnest(a.fact_ids) AS f(name)
                   WHERE NOT EXISTS (SELECT 1 FROM facts x
                                     WHERE 'fact_' || x.id = f.name
                                     AND x.status != 'superseded'))""",
            (user_id,),
        )

    # -- reading ----------------------------------------------------------------------------------

    def facts(
        self,
        user_id: str,
        *,
        as_of: float | None = None,
        include_history: bool = False,
        category: str | None = None,
        most_important: int | None = None,
        include_archived: bool = False,
    ) -> list[StoredFact]:
        """``most_important``: only that many, pinned first, then by importance (newest first
        among equals); otherwise all, oldest first. Archived cards only when asked."""
        sql = f"SELECT {_COLUMNS} FROM facts WHERE user_id = %s"
        params: list[Any] = [user_id]
        if category is not None:
            sql += " AND category = %s"
            params.append(category)
        if as_of is not None:
            sql += " AND (valid_from IS NULL OR valid_from <= %s)"
            sql += " AND (valid_to IS NULL OR valid_to > %s)"
            params += [as_of, as_of]
        elif not include_history:
            sql += " AND status != 'superseded'"
        if not include_archived:
            sql += ARCHIVED_FACTS
        if most_important is None:
            sql += " ORDER BY id"
        else:
            sql += " ORDER BY pinned DESC, importance DESC, id DESC LIMIT %s"
            params.append(most_important)
        with self._db.connect() as conn:
            return [_fact(r) for r in conn.execute(sql, params).fetchall()]

    def generation(self, user_id: str) -> int:
        """The user's fact stamp: it moves on every change to the user's facts."""
        with self._db.connect() as conn:
            row = conn.execute(
                "SELECT gen FROM fact_state WHERE user_id = %s", (user_id,)
            ).fetchone()
        return 0 if row is None else int(row[0])

    def search_rows(self, user_id: str) -> FactVectors:
        """Every version of the user's facts, as arrays for scoring."""
        with self._db.connect() as conn:
            rows = conn.execute(
                """SELECT id, status, valid_from, valid_to, recorded_at, pinned,
                   card ->> 'stability', vector, superseded_by, key, category, importance FROM facts
                   WHERE user_id = %s ORDER BY id""",
                (user_id,),
            ).fetchall()
            links = conn.execute(
                """SELECT s.fact_id, e.id FROM facts f JOIN fact_sources s ON s.fact_id = f.id
                   JOIN episodes e ON e.focus_event_id = s.event_id WHERE f.user_id = %s
                   ORDER BY s.fact_id, e.id""",
                (user_id,),
            ).fetchall()
        nan = float("nan")
        size = len(rows)
        return FactVectors(
            ids=np.fromiter((r[0] for r in rows), dtype=np.int64, count=size),
            superseded=np.fromiter((r[1] == "superseded" for r in rows), dtype=bool, count=size),
            valid_from=np.fromiter(
                (nan if r[2] is None else r[2] for r in rows), dtype=np.float64, count=size
            ),
            valid_to=np.fromiter(
                (nan if r[3] is None else r[3] for r in rows), dtype=np.float64, count=size
            ),
            recorded_at=np.fromiter((r[4] for r in rows), dtype=np.float64, count=size),
            exempt=np.fromiter(
                (bool(r[5]) or r[6] != "volatile" for r in rows), dtype=bool, count=size
            ),
            matrix=(
                np.stack([as_array(r[7]) for r in rows])
                if rows
                else np.zeros((0, 0), dtype=np.float32)
            ),
            successor=np.fromiter(
                (-1 if r[8] is None else r[8] for r in rows), dtype=np.int64, count=size
            ),
            keys=[r[9] for r in rows],
            link_facts=np.fromiter((r[0] for r in links), dtype=np.int64, count=len(links)),
            link_episodes=np.fromiter((r[1] for r in links), dtype=np.int64, count=len(links)),
            categories=[r[10] for r in rows],
            importance=np.fromiter((r[11] for r in rows), dtype=np.float64, count=size),
            pinned=np.fromiter((bool(r[5]) for r in rows), dtype=bool, count=size),
        )

    def get_many(self, ids: Sequence[int]) -> dict[int, StoredFact]:
        if not ids:
            return {}
        with self._db.connect() as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM facts WHERE id = ANY(%s)", (list(ids),)
            ).fetchall()
        return {int(r[0]): _fact(r) for r in rows}

    def get(self, fact_id: int) -> StoredFact | None:
        with self._db.connect() as conn:
            return _fetch(conn, fact_id)

    def chain(self, fact_id: int) -> list[StoredFact]:
        """The whole version chain a fact belongs to, oldest first."""
        start = self.get(fact_id)
        if start is None:
            return []
        older = self._walk(start, lambda card: card.supersedes)
        newer = self._walk(start, lambda card: card.superseded_by)
        return [*reversed(older), start, *newer]

    def _walk(self, start: StoredFact, link: Callable[[Card], str | None]) -> list[StoredFact]:
        found: list[StoredFact] = []
        cursor = start
        while (following_id := link(cursor.card)) is not None and len(found) < 1000:
            following = self.get(fact_number(following_id))
            if following is None:
                break
            found.append(following)
            cursor = following
        return found

    def lexical(self, user_id: str, terms: Sequence[str], limit: int) -> list[tuple[int, float]]:
        with self._db.connect() as conn:
            return bm25(
                conn,
                table="facts",
                corpus="facts",
                columns=[("terms", 1.0)],
                lexemes=query_lexemes(terms),
                where="user_id = %(user)s",
                params={"user": user_id},
                limit=limit,
            )

    def routing_log(self, user_id: str, limit: int = 100) -> list[dict[str, Any]]:
        with self._db.connect() as conn:
            rows = conn.execute(
                """SELECT id, at, decision, fact_id, other_id, detail FROM routing_log
                   WHERE user_id = %s ORDER BY id DESC LIMIT %s""",
                (user_id, limit),
            ).fetchall()
        return [
            {
                "id": r[0],
                "at": from_epoch(r[1]).isoformat(),
                "decision": r[2],
                "fact_id": None if r[3] is None else f"fact_{r[3]}",
                "other_id": None if r[4] is None else f"fact_{r[4]}",
                "detail": r[5],
            }
            for r in rows
        ]

    def alerts(self, user_id: str) -> list[dict[str, Any]]:
        with self._db.connect() as conn:
            rows = conn.execute(
                """SELECT rule, severity, message, fact_ids, created_at FROM alerts
                   WHERE user_id = %s ORDER BY id""",
                (user_id,),
            ).fetchall()
        return [
            {
                "rule": r[0],
                "severity": r[1],
                "message": r[2],
                "fact_ids": list(r[3]),
                "created_at": from_epoch(r[4]).isoformat(),
            }
            for r in rows
        ]

    # -- erasure ----------------------------------------------------------------------------------

    def forget_user(self, tx: Transaction, user_id: str) -> int:
        conn = conn_of(tx)
        ids = [
            int(r[0])
            for r in conn.execute("SELECT id FROM facts WHERE user_id = %s", (user_id,)).fetchall()
        ]
        _delete(conn, ids)
        conn.execute("DELETE FROM fact_state WHERE user_id = %s", (user_id,))
        conn.execute("DELETE FROM routing_log WHERE user_id = %s", (user_id,))
        conn.execute("DELETE FROM alerts WHERE user_id = %s", (user_id,))
        return len(ids)

    def forget_event_sources(self, tx: Transaction, event_ids: Sequence[int]) -> int:
        """Facts whose every source is deleted go too (with their alerts and routing-log
        entries); others lose that source. Routing-log entries drawn from a deleted message
        go whatever fact they name: they quote it."""
        if not event_ids:
            return 0
        conn = conn_of(tx)
        events = list(event_ids)
        touched = [
            int(r[0])
            for r in conn.execute(
                "DELETE FROM fact_sources WHERE event_id = ANY(%s) RETURNING fact_id", (events,)
            ).fetchall()
        ]
        touched = sorted(set(touched))
        orphaned = [
            int(r[0])
            for r in conn.execute(
                """SELECT f FROM unnest(%s::bigint[]) AS f WHERE NOT EXISTS
                   (SELECT 1 FROM fact_sources s WHERE s.fact_id = f)""",
                (touched,),
            ).fetchall()
        ]
        _delete(conn, orphaned)
        gone = set(orphaned)
        _sync_sources(conn, [f for f in touched if f not in gone])
        conn.execute(
            """DELETE FROM routing_log r WHERE jsonb_typeof(r.detail -> 'sources') = 'array'
               AND EXISTS (SELECT 1 FROM jsonb_array_elements_text(r.detail -> 'sources') s
                           WHERE s = ANY(%s))""",
            ([str(e) for e in events],),
        )
        return len(orphaned)


def _add_sources(conn: Any, fact_id: int, sources: Sequence[int]) -> None:
    for event_id in sources:
        conn.execute(
            "INSERT INTO fact_sources(fact_id, event_id) VALUES (%s, %s) ON CONFLICT DO NOTHING",
            (fact_id, event_id),
        )


def _delete(conn: Any, ids: Sequence[int]) -> None:
    """Facts and everything that names them: sources, alerts, routing-log entries; a version
    they superseded is current again."""
    if not ids:
        return
    numbers = list(ids)
    names = [f"fact_{i}" for i in numbers]
    conn.execute("DELETE FROM alerts WHERE fact_ids && %s::text[]", (names,))
    conn.execute(
        """DELETE FROM routing_log r WHERE r.fact_id = ANY(%s) OR r.other_id = ANY(%s)
           OR (jsonb_typeof(r.detail -> 'facts') = 'array'
               AND EXISTS (SELECT 1 FROM jsonb_array_elements_text(r.detail -> 'facts') f
                           WHERE f = ANY(%s)))""",
        (numbers, numbers, names),
    )
    conn.execute("DELETE FROM fact_sources WHERE fact_id = ANY(%s)", (numbers,))
    removed = conn.execute(
        "DELETE FROM facts WHERE id = ANY(%s) RETURNING terms_length", (numbers,)
    ).fetchall()
    count_documents(conn, "facts", -len(removed), -sum(int(r[0]) for r in removed))
    conn.execute("UPDATE facts SET supersedes = NULL WHERE supersedes = ANY(%s)", (numbers,))
    conn.execute(
        """UPDATE facts SET superseded_by = NULL, status = 'current', superseded_at = NULL
           WHERE superseded_by = ANY(%s)""",
        (numbers,),
    )


def _sync_sources(conn: Any, fact_ids: Sequence[int]) -> None:
    """The card lists its sources as ``fact_sources`` holds them (first source first)."""
    for fact_id in fact_ids:
        conn.execute(
            """UPDATE facts SET card = jsonb_set(card, '{sources}', coalesce(
                   (SELECT jsonb_agg(event_id ORDER BY seq) FROM fact_sources
                    WHERE fact_id = %s), '[]'::jsonb)) WHERE id = %s""",
            (fact_id, fact_id),
        )


def _current(conn: Any, user_id: str) -> list[StoredFact]:
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM facts WHERE user_id = %s AND status != 'superseded' ORDER BY id",
        (user_id,),
    ).fetchall()
    return [_fact(r) for r in rows]


def _fetch(conn: Any, fact_id: int) -> StoredFact | None:
    row = conn.execute(f"SELECT {_COLUMNS} FROM facts WHERE id = %s", (fact_id,)).fetchone()
    return None if row is None else _fact(row)


def _epoch(moment: datetime | None) -> float | None:
    return None if moment is None else to_epoch(moment)


def _fact(row: Sequence[Any]) -> StoredFact:
    (
        fact_id,
        user_id,
        card,
        status,
        recorded_at,
        superseded_at,
        supersedes,
        superseded_by,
        pinned,
        extractor,
        valid_from,
        valid_to,
        confidence,
        vector,
    ) = row
    draft = dict(card)
    draft["valid_from"] = None if valid_from is None else from_epoch(valid_from).isoformat()
    draft["valid_to"] = None if valid_to is None else from_epoch(valid_to).isoformat()
    draft["confidence"] = confidence
    model = Card.model_validate(
        {
            **draft,
            "id": f"fact_{fact_id}",
            "user_id": user_id,
            "pinned": bool(pinned),
            "recorded_at": from_epoch(recorded_at).isoformat(),
            "superseded_at": None if superseded_at is None else from_epoch(superseded_at),
            "supersedes": None if supersedes is None else f"fact_{supersedes}",
            "superseded_by": None if superseded_by is None else f"fact_{superseded_by}",
            "status": status,
            "extractor": extractor,
        }
    )
    return StoredFact(model, as_array(vector))
