"""Graph memory rows: entities, aliases and mention edges, in the same SQLite file.

Writes take the caller's transaction, so the mentions of a batch commit with its episodes.
Deletes need no code here: triggers drop an episode's mentions, then entities left without a
mention, then their aliases. ``forget_user`` removes a user's graph explicitly.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from madeleine.sorted_ids import positions
from madeleine.store.records import FactLinks, GraphRows, NewMention, Transaction
from madeleine.store.sqlite.connection import Connections, conn_of

_CHUNK = 500  # keys per IN (...) query


class SQLiteGraph:
    def __init__(self, db: Connections) -> None:
        self._db = db

    def known(self, user_id: str) -> dict[str, str]:
        """The user's dictionary: entity and alias keys -> the entity's key."""
        conn = self._db.get()
        found = {
            str(r[0]): str(r[0])
            for r in conn.execute("SELECT key FROM entities WHERE user_id = ?", (user_id,))
        }
        for alias_key, entity_key in conn.execute(
            "SELECT a.key, e.key FROM entity_aliases AS a JOIN entities AS e ON e.id = a.entity_id "
            "WHERE a.user_id = ?",
            (user_id,),
        ):
            found.setdefault(str(alias_key), str(entity_key))
        return found

    def known_in(self, tx: Transaction, user_id: str, keys: Iterable[str]) -> dict[str, str]:
        """Of ``keys``, those in the user's dictionary (inside the write transaction, so that
        entities another worker just created are reused): key -> the entity's key."""
        conn = conn_of(tx)
        wanted = list(keys)
        found: dict[str, str] = {}
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            for (key,) in conn.execute(
                f"SELECT key FROM entities WHERE user_id = ? AND key IN ({marks})",
                [user_id, *chunk],
            ):
                found[str(key)] = str(key)
            for alias_key, entity_key in conn.execute(
                "SELECT a.key, e.key FROM entity_aliases AS a "
                "JOIN entities AS e ON e.id = a.entity_id "
                f"WHERE a.user_id = ? AND a.key IN ({marks})",
                [user_id, *chunk],
            ):
                found.setdefault(str(alias_key), str(entity_key))
        return found

    def write(
        self,
        tx: Transaction,
        user_id: str,
        mentions: Iterable[NewMention],
        vectors: dict[str, npt.NDArray[np.float32]],
    ) -> int:
        """Entities are created on first mention (with their name's vector); returns edges."""
        conn = conn_of(tx)
        ids: dict[str, int] = {}
        edges: list[tuple[int, int]] = []
        for mention in mentions:
            entity_id = ids.get(mention.key)
            if entity_id is None:
                entity_id = self._entity_id(conn, user_id, mention, vectors)
                ids[mention.key] = entity_id
            if mention.alias is not None:
                conn.execute(
                    "INSERT OR IGNORE INTO entity_aliases(user_id, key, entity_id, surface) "
                    "VALUES (?, ?, ?, ?)",
                    (user_id, mention.alias[0], entity_id, mention.alias[1]),
                )
            edges.append((entity_id, mention.episode_id))
        conn.executemany(
            "INSERT OR IGNORE INTO mentions(entity_id, episode_id) VALUES (?, ?)", edges
        )
        return len(edges)

    @staticmethod
    def _entity_id(
        conn: sqlite3.Connection,
        user_id: str,
        mention: NewMention,
        vectors: dict[str, npt.NDArray[np.float32]],
    ) -> int:
        row = conn.execute(
            "SELECT id FROM entities WHERE user_id = ? AND key = ?", (user_id, mention.key)
        ).fetchone()
        if row is not None:
            return int(row[0])
        vector = vectors.get(mention.key)
        blob = b"" if vector is None else np.asarray(vector, dtype=np.float16).tobytes()
        cursor = conn.execute(
            "INSERT INTO entities(user_id, key, name, type, vector) VALUES (?, ?, ?, ?, ?)",
            (user_id, mention.key, mention.name, mention.type, blob),
        )
        return int(cursor.lastrowid or 0)

    def rows(
        self,
        user_id: str,
        dim: int,
        *,
        known_ids: npt.NDArray[np.int64] | None = None,
        episode_after: int = 0,
    ) -> GraphRows:
        """The user's graph; with ``known_ids`` only what is newer: entities after the last
        known one and mentions of episodes after ``episode_after``. Positions (``keys``,
        ``mention_entity``) then count the known entities first."""
        conn = self._db.get()
        known = np.zeros(0, dtype=np.int64) if known_ids is None else known_ids
        after = int(known[-1]) if known.size else 0
        entities = conn.execute(
            "SELECT id, key, name, type, vector FROM entities WHERE user_id = ? AND id > ? "
            "ORDER BY id",
            (user_id, after),
        ).fetchall()
        size = len(entities)
        entity_ids = np.fromiter((r[0] for r in entities), dtype=np.int64, count=size)
        every_id = np.concatenate([known, entity_ids])
        keys = {str(r[1]): known.size + i for i, r in enumerate(entities)}
        empty = np.zeros(dim, dtype=np.float16)
        vectors = (
            np.stack([np.frombuffer(r[4], dtype=np.float16) if r[4] else empty for r in entities])
            if size
            else np.zeros((0, dim), dtype=np.float16)
        )
        aliases = conn.execute(
            "SELECT key, entity_id FROM entity_aliases WHERE user_id = ?", (user_id,)
        ).fetchall()
        alias_at = positions(every_id, [entity_id for _, entity_id in aliases])
        for (alias_key, _), position in zip(aliases, alias_at.tolist(), strict=True):
            if position >= 0:
                keys.setdefault(str(alias_key), position)
        edges = conn.execute(
            "SELECT m.entity_id, m.episode_id FROM mentions AS m "
            "JOIN entities AS e ON e.id = m.entity_id WHERE e.user_id = ? AND m.episode_id > ?",
            (user_id, episode_after),
        ).fetchall()
        entity_of = np.fromiter((r[0] for r in edges), dtype=np.int64, count=len(edges))
        entity_at = positions(every_id, entity_of)
        found = entity_at >= 0  # an entity created after the read waits for the next one
        episodes = np.fromiter((r[1] for r in edges), dtype=np.int64, count=len(edges))
        return GraphRows(
            entity_ids=entity_ids,
            names=[str(r[2]) for r in entities],
            types=[str(r[3]) for r in entities],
            keys=keys,
            vectors=vectors,
            mention_entity=entity_at[found],
            mention_episode=episodes[found],
        )

    def fact_links(self, user_id: str) -> FactLinks:
        """Current facts (not superseded) with the episodes of the turns they came from."""
        conn = self._db.get()
        facts = conn.execute(
            "SELECT id, statement FROM facts WHERE user_id = ? AND status != 'superseded' "
            "ORDER BY id",
            (user_id,),
        ).fetchall()
        if not facts:
            return FactLinks.empty()
        ids = np.fromiter((r[0] for r in facts), dtype=np.int64, count=len(facts))
        sources = conn.execute(
            "SELECT s.fact_id, e.id FROM fact_sources AS s "
            "JOIN facts AS f ON f.id = s.fact_id "
            "JOIN episodes AS e ON e.focus_event_id = s.event_id "
            "WHERE f.user_id = ? AND f.status != 'superseded'",
            (user_id,),
        ).fetchall()
        fact_of = np.fromiter((r[0] for r in sources), dtype=np.int64, count=len(sources))
        episodes = np.fromiter((r[1] for r in sources), dtype=np.int64, count=len(sources))
        fact_at = positions(ids, fact_of)
        known = fact_at >= 0  # a fact written between the two reads waits
        return FactLinks(ids, [str(r[1]) for r in facts], fact_at[known], episodes[known])

    def episode_ids_of_events(self, tx: Transaction, event_ids: Sequence[int]) -> dict[int, int]:
        conn = conn_of(tx)
        found: dict[int, int] = {}
        for start in range(0, len(event_ids), _CHUNK):
            chunk = list(event_ids[start : start + _CHUNK])
            marks = ",".join("?" * len(chunk))
            for event_id, episode_id in conn.execute(
                f"SELECT focus_event_id, id FROM episodes WHERE focus_event_id IN ({marks})", chunk
            ):
                found[int(event_id)] = int(episode_id)
        return found

    def counts(self) -> dict[str, int]:
        conn = self._db.get()
        return {
            "entities": int(conn.execute("SELECT count(*) FROM entities").fetchone()[0]),
            "mentions": int(conn.execute("SELECT count(*) FROM mentions").fetchone()[0]),
        }

    def forget_user(self, tx: Transaction, user_id: str) -> None:
        conn = conn_of(tx)
        conn.execute(
            "DELETE FROM mentions WHERE entity_id IN (SELECT id FROM entities WHERE user_id = ?)",
            (user_id,),
        )
        conn.execute("DELETE FROM entity_aliases WHERE user_id = ?", (user_id,))
        conn.execute("DELETE FROM entities WHERE user_id = ?", (user_id,))
