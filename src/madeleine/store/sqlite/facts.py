"""Facts, their sources, the routing log and alerts, in the same SQLite file as the log.

Cards are stored whole as JSON next to the columns that queries filter on. Writes take the
caller's transaction so that a batch of episodes and the facts drawn from it commit together.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from madeleine.facts.cards import Card, CardDraft
from madeleine.store.records import FactVectors, StoredFact, Transaction, fact_number
from madeleine.store.sqlite.connection import Connections, conn_of
from madeleine.store.sqlite.lexical import scope_token, scoped_any_match
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


class SQLiteFacts:
    """Erasure is called by the store's delete cascade, inside its transaction."""

    def __init__(self, db: Connections) -> None:
        self._db = db

    # -- writing (inside the caller's transaction) --------------------------------------------

    def current(self, tx: Transaction, user_id: str) -> list[StoredFact]:
        return _current(conn_of(tx), user_id)

    def read_current(self, user_id: str) -> list[StoredFact]:
        """``current`` outside any write transaction (for work done before the lock)."""
        return _current(self._db.get(), user_id)

    def lock_user(self, tx: Transaction, user_id: str) -> None:
        """Nothing to do: a write transaction (``BEGIN IMMEDIATE``) excludes every other."""

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
        cursor = conn.execute(
            "INSERT INTO facts(user_id, subject, key, category, statement, card, status, "
            "valid_from, valid_to, recorded_at, confidence, importance, extractor, vector) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                user_id,
                draft.subject.casefold(),
                draft.key,
                draft.category.value,
                draft.statement,
                draft.model_dump_json(),
                status,
                _epoch(draft.valid_from),
                _epoch(draft.valid_to),
                now,
                draft.confidence,
                draft.importance,
                extractor,
                np.asarray(vector, dtype=np.float32).tobytes(),
            ),
        )
        fact_id = int(cursor.lastrowid or 0)
        conn.executemany(
            "INSERT OR IGNORE INTO fact_sources(fact_id, event_id) VALUES (?, ?)",
            [(fact_id, event_id) for event_id in draft.sources],
        )
        conn.execute(
            "INSERT INTO facts_fts(rowid, scope, body) VALUES (?, ?, ?)",
            (fact_id, scope_token(user_id), terms),
        )
        return fact_id

    def supersede(
        self, tx: Transaction, old_id: int, new_id: int, now: float, valid_to: float | None
    ) -> None:
        """``new`` replaces ``old``: old keeps its card, gains an end and a successor."""
        conn = conn_of(tx)
        conn.execute(
            "UPDATE facts SET status = 'superseded', superseded_at = ?, superseded_by = ?, "
            "valid_to = COALESCE(valid_to, ?) WHERE id = ?",
            (now, new_id, valid_to, old_id),
        )
        conn.execute("UPDATE facts SET supersedes = ? WHERE id = ?", (old_id, new_id))

    def correct(self, tx: Transaction, old_id: int, new_id: int, now: float) -> None:
        conn = conn_of(tx)
        conn.execute(
            "UPDATE facts SET status = 'superseded', superseded_at = ?, superseded_by = ?, "
            "valid_to = coalesce(valid_from, recorded_at) WHERE id = ?",
            (now, new_id, old_id),
        )
        conn.execute("UPDATE facts SET supersedes = ? WHERE id = ?", (old_id, new_id))

    def reinforce(
        self, tx: Transaction, fact_id: int, confidence: float, sources: Sequence[int]
    ) -> None:
        """A duplicate: more confidence, more sources, no new card."""
        conn = conn_of(tx)
        conn.execute("UPDATE facts SET confidence = ? WHERE id = ?", (confidence, fact_id))
        conn.executemany(
            "INSERT OR IGNORE INTO fact_sources(fact_id, event_id) VALUES (?, ?)",
            [(fact_id, event_id) for event_id in sources],
        )
        _sync_sources(conn, [fact_id])

    def set_support(
        self, tx: Transaction, fact_id: int, confidence: float, sources: Sequence[int]
    ) -> None:
        """Exactly this confidence and these sources (a merge, or the undoing of one)."""
        conn = conn_of(tx)
        conn.execute("UPDATE facts SET confidence = ? WHERE id = ?", (confidence, fact_id))
        conn.execute("DELETE FROM fact_sources WHERE fact_id = ?", (fact_id,))
        conn.executemany(
            "INSERT OR IGNORE INTO fact_sources(fact_id, event_id) VALUES (?, ?)",
            [(fact_id, event_id) for event_id in sources],
        )
        _sync_sources(conn, [fact_id])

    def mark_superseded_by(self, tx: Transaction, new_id: int, old: StoredFact, now: float) -> None:
        """A late-arriving older statement: ``new_id`` is history from the start, superseded
        by the ``old`` current fact (which becomes its successor in the chain)."""
        conn = conn_of(tx)
        conn.execute(
            "UPDATE facts SET superseded_by = ?, superseded_at = ? WHERE id = ?",
            (old.number, now, new_id),
        )
        if old.card.supersedes is None:
            conn.execute("UPDATE facts SET supersedes = ? WHERE id = ?", (new_id, old.number))

    def set_pinned(self, fact_id: int, pinned: bool) -> None:
        with self._db.write() as conn:
            conn.execute("UPDATE facts SET pinned = ? WHERE id = ?", (int(pinned), fact_id))

    def set_status(self, tx: Transaction, fact_id: int, status: str) -> None:
        conn = conn_of(tx)
        conn.execute("UPDATE facts SET status = ? WHERE id = ?", (status, fact_id))

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
        conn = conn_of(tx)
        conn.execute(
            "INSERT INTO routing_log(user_id, at, decision, fact_id, other_id, detail) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (user_id, now, decision, fact_id, other_id, json.dumps(detail, ensure_ascii=False)),
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
        conn = conn_of(tx)
        cursor = conn.execute(
            "INSERT OR IGNORE INTO alerts(user_id, rule, fingerprint, severity, message, "
            "fact_ids, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (user_id, rule, fingerprint, severity, message, json.dumps(list(fact_ids)), now),
        )
        return cursor.rowcount > 0

    def clear_alerts_without(self, tx: Transaction, user_id: str) -> None:
        """Alerts whose facts are no longer all current are stale."""
        conn = conn_of(tx)
        for alert_id, fact_ids in conn.execute(
            "SELECT id, fact_ids FROM alerts WHERE user_id = ?", (user_id,)
        ).fetchall():
            numbers = [fact_number(f) for f in json.loads(fact_ids)]
            marks = ",".join("?" * len(numbers))
            live = conn.execute(
                f"SELECT count(*) FROM facts WHERE id IN ({marks}) AND status != 'superseded'",
                numbers,
            ).fetchone()[0]
            if live != len(numbers):
                conn.execute("DELETE FROM alerts WHERE id = ?", (alert_id,))

    # -- reading ----------------------------------------------------------------------------

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
        sql = f"SELECT {_COLUMNS} FROM facts WHERE user_id = ?"
        params: list[Any] = [user_id]
        if category is not None:
            sql += " AND category = ?"
            params.append(category)
        if as_of is not None:
            # what held at that event time, whatever has superseded it since
            sql += " AND (valid_from IS NULL OR valid_from <= ?)"
            sql += " AND (valid_to IS NULL OR valid_to > ?)"
            params += [as_of, as_of]
        elif not include_history:
            sql += " AND status != 'superseded'"
        if not include_archived:
            sql += ARCHIVED_FACTS
        if most_important is None:
            sql += " ORDER BY id"
        else:
            sql += " ORDER BY pinned DESC, importance DESC, id DESC LIMIT ?"
            params.append(most_important)
        return [_fact(r) for r in self._db.get().execute(sql, params).fetchall()]

    def generation(self, user_id: str) -> int:
        """The user's fact stamp: it moves on every change to the user's facts."""
        row = (
            self._db.get()
            .execute("SELECT gen FROM fact_state WHERE user_id = ?", (user_id,))
            .fetchone()
        )
        return 0 if row is None else int(row[0])

    def search_rows(self, user_id: str) -> FactVectors:
        """Every version of the user's facts, as arrays for scoring (cards stay in the store)."""
        rows = (
            self._db.get()
            .execute(
                "SELECT id, status, valid_from, valid_to, recorded_at, pinned, "
                "json_extract(card, '$.stability'), vector, superseded_by, key, category, "
                "importance FROM facts WHERE user_id = ? ORDER BY id",
                (user_id,),
            )
            .fetchall()
        )
        links = (
            self._db.get()
            .execute(
                "SELECT s.fact_id, e.id FROM facts f JOIN fact_sources s ON s.fact_id = f.id "
                "JOIN episodes e ON e.focus_event_id = s.event_id WHERE f.user_id = ? "
                "ORDER BY s.fact_id, e.id",
                (user_id,),
            )
            .fetchall()
        )
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
                np.stack([np.frombuffer(r[7], dtype=np.float32) for r in rows])
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
        marks = ",".join("?" * len(ids))
        rows = (
            self._db.get()
            .execute(f"SELECT {_COLUMNS} FROM facts WHERE id IN ({marks})", list(ids))
            .fetchall()
        )
        return {int(r[0]): _fact(r) for r in rows}

    def get(self, fact_id: int) -> StoredFact | None:
        return _fetch(self._db.get(), fact_id)

    def chain(self, fact_id: int) -> list[StoredFact]:
        """The whole version chain a fact belongs to, oldest first."""
        start = self.get(fact_id)
        if start is None:
            return []
        older = self._walk(start, lambda card: card.supersedes)
        newer = self._walk(start, lambda card: card.superseded_by)
        return [*reversed(older), start, *newer]

    def _walk(self, start: StoredFact, link: Callable[[Card], str | None]) -> list[StoredFact]:
        """Follow one direction of a version chain (at most 1,000 steps: a guard, not a
        limit a real chain reaches)."""
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
        match = scoped_any_match(user_id, "body", terms)
        if match is None:
            return []
        rows = (
            self._db.get()
            .execute(
                "SELECT rowid, bm25(facts_fts, 0.0, 1.0) AS rank FROM facts_fts "
                "WHERE facts_fts MATCH ? ORDER BY rank LIMIT ?",
                (match, limit),
            )
            .fetchall()
        )
        return [(int(r[0]), -float(r[1])) for r in rows]

    def routing_log(self, user_id: str, limit: int = 100) -> list[dict[str, Any]]:
        rows = (
            self._db.get()
            .execute(
                "SELECT id, at, decision, fact_id, other_id, detail FROM routing_log "
                "WHERE user_id = ? ORDER BY id DESC LIMIT ?",
                (user_id, limit),
            )
            .fetchall()
        )
        return [
            {
                "id": r[0],
                "at": from_epoch(r[1]).isoformat(),
                "decision": r[2],
                "fact_id": None if r[3] is None else f"fact_{r[3]}",
                "other_id": None if r[4] is None else f"fact_{r[4]}",
                "detail": json.loads(r[5]),
            }
            for r in rows
        ]

    def alerts(self, user_id: str) -> list[dict[str, Any]]:
        rows = (
            self._db.get()
            .execute(
                "SELECT rule, severity, message, fact_ids, created_at FROM alerts "
                "WHERE user_id = ? ORDER BY id",
                (user_id,),
            )
            .fetchall()
        )
        return [
            {
                "rule": r[0],
                "severity": r[1],
                "message": r[2],
                "fact_ids": json.loads(r[3]),
                "created_at": from_epoch(r[4]).isoformat(),
            }
            for r in rows
        ]

    # -- erasure --------------------------------------------------------------------------------

    def forget_user(self, tx: Transaction, user_id: str) -> int:
        conn = conn_of(tx)
        ids = [r[0] for r in conn.execute("SELECT id FROM facts WHERE user_id = ?", (user_id,))]
        self._delete(conn, ids)
        conn.execute("DELETE FROM fact_state WHERE user_id = ?", (user_id,))
        conn.execute("DELETE FROM routing_log WHERE user_id = ?", (user_id,))
        conn.execute("DELETE FROM alerts WHERE user_id = ?", (user_id,))
        return len(ids)

    def forget_event_sources(self, tx: Transaction, event_ids: Sequence[int]) -> int:
        """Facts whose every source is deleted go too (with their alerts and routing-log
        entries); others lose that source. Routing-log entries drawn from a deleted message
        go whatever fact they name: they quote it."""
        conn = conn_of(tx)
        if not event_ids:
            return 0
        marks = ",".join("?" * len(event_ids))
        touched = [
            r[0]
            for r in conn.execute(
                f"SELECT DISTINCT fact_id FROM fact_sources WHERE event_id IN ({marks})",
                list(event_ids),
            )
        ]
        conn.execute(f"DELETE FROM fact_sources WHERE event_id IN ({marks})", list(event_ids))
        orphaned = [
            fact_id
            for fact_id in touched
            if not conn.execute(
                "SELECT 1 FROM fact_sources WHERE fact_id = ? LIMIT 1", (fact_id,)
            ).fetchone()
        ]
        self._delete(conn, orphaned)
        gone = set(orphaned)
        _sync_sources(conn, [fact_id for fact_id in touched if fact_id not in gone])
        conn.execute(
            "DELETE FROM routing_log WHERE id IN (SELECT r.id FROM routing_log AS r, "
            f"json_each(r.detail, '$.sources') AS s WHERE s.value IN ({marks}))",
            list(event_ids),
        )
        return len(orphaned)

    @staticmethod
    def _delete(conn: sqlite3.Connection, ids: Sequence[int]) -> None:
        """Facts and everything that names them: sources, lexical rows, alerts, routing-log
        entries; a version they superseded is current again."""
        for fact_id in ids:
            name = f"fact_{fact_id}"
            conn.execute(
                "DELETE FROM alerts WHERE id IN (SELECT a.id FROM alerts AS a, "
                "json_each(a.fact_ids) AS f WHERE f.value = ?)",
                (name,),
            )
            conn.execute(
                "DELETE FROM routing_log WHERE fact_id = ? OR other_id = ? OR id IN "
                "(SELECT r.id FROM routing_log AS r, json_each(r.detail, '$.facts') AS f "
                "WHERE f.value = ?)",
                (fact_id, fact_id, name),
            )
            conn.execute("DELETE FROM facts_fts WHERE rowid = ?", (fact_id,))
            conn.execute("DELETE FROM fact_sources WHERE fact_id = ?", (fact_id,))
            conn.execute("DELETE FROM facts WHERE id = ?", (fact_id,))
            conn.execute("UPDATE facts SET supersedes = NULL WHERE supersedes = ?", (fact_id,))
            conn.execute(
                "UPDATE facts SET superseded_by = NULL, status = 'current', superseded_at = NULL "
                "WHERE superseded_by = ?",
                (fact_id,),
            )


def _sync_sources(conn: sqlite3.Connection, fact_ids: Sequence[int]) -> None:
    """The card lists its sources as ``fact_sources`` holds them (first source first): a
    card must cite a reinforcing message, and never a deleted one."""
    for fact_id in fact_ids:
        sources = [
            int(r[0])
            for r in conn.execute(
                "SELECT event_id FROM fact_sources WHERE fact_id = ? ORDER BY rowid", (fact_id,)
            )
        ]
        conn.execute(
            "UPDATE facts SET card = json_set(card, '$.sources', json(?)) WHERE id = ?",
            (json.dumps(sources), fact_id),
        )


def _current(conn: sqlite3.Connection, user_id: str) -> list[StoredFact]:
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM facts WHERE user_id = ? AND status != 'superseded'",
        (user_id,),
    ).fetchall()
    return [_fact(r) for r in rows]


def _fetch(conn: sqlite3.Connection, fact_id: int) -> StoredFact | None:
    row = conn.execute(f"SELECT {_COLUMNS} FROM facts WHERE id = ?", (fact_id,)).fetchone()
    return None if row is None else _fact(row)


def _epoch(moment: datetime | None) -> float | None:
    return None if moment is None else to_epoch(moment)


def _fact(row: sqlite3.Row | tuple[Any, ...]) -> StoredFact:
    (
        fact_id,
        user_id,
        card_json,
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
    draft = json.loads(card_json)
    draft["valid_from"] = None if valid_from is None else from_epoch(valid_from).isoformat()
    draft["valid_to"] = None if valid_to is None else from_epoch(valid_to).isoformat()
    draft["confidence"] = confidence
    card = Card.model_validate(
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
    return StoredFact(card, np.frombuffer(vector, dtype=np.float32))
