"""Graph memory rows on PostgreSQL: entities, aliases and mention edges. Writes take the
caller's transaction; deletes cascade in the database (see migration 0004)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from madeleine.sorted_ids import positions
from madeleine.store.postgres.connection import Database, conn_of
from madeleine.store.records import FactLinks, GraphRows, NewMention, Transaction


class PgGraph:
    def __init__(self, db: Database) -> None:
        self._db = db

    def known(self, user_id: str) -> dict[str, str]:
        """The user's dictionary: entity and alias keys -> the entity's key."""
        with self._db.connect() as conn:
            keys = conn.execute("SELECT key FROM entities WHERE user_id = %s", (user_id,))
            found = {str(r[0]): str(r[0]) for r in keys.fetchall()}
            aliases = conn.execute(
                """SELECT a.key, e.key FROM entity_aliases a JOIN entities e
                   ON e.id = a.entity_id WHERE a.user_id = %s""",
                (user_id,),
            ).fetchall()
        for alias_key, entity_key in aliases:
            found.setdefault(str(alias_key), str(entity_key))
        return found

    def known_in(self, tx: Transaction, user_id: str, keys: Iterable[str]) -> dict[str, str]:
        """Of ``keys``, those in the user's dictionary (inside the write transaction)."""
        conn = conn_of(tx)
        wanted = list(keys)
        if not wanted:
            return {}
        rows = conn.execute(
            "SELECT key FROM entities WHERE user_id = %s AND key = ANY(%s)", (user_id, wanted)
        ).fetchall()
        found = {str(r[0]): str(r[0]) for r in rows}
        aliases = conn.execute(
            """SELECT a.key, e.key FROM entity_aliases a JOIN entities e ON e.id = a.entity_id
               WHERE a.user_id = %s AND a.key = ANY(%s)""",
            (user_id, wanted),
        ).fetchall()
        for alias_key, entity_key in aliases:
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
                vector = vectors.get(mention.key)
                blob = b"" if vector is None else np.asarray(vector, dtype=np.float16).tobytes()
                row = conn.execute(
                    """INSERT INTO entities(user_id, key, name, type, vector)
                       VALUES (%s, %s, %s, %s, %s)
                       ON CONFLICT (user_id, key) DO UPDATE SET key = excluded.key
                       RETURNING id""",
                    (user_id, mention.key, mention.name, mention.type, blob),
                ).fetchone()
                entity_id = ids[mention.key] = int(row[0])
            if mention.alias is not None:
                conn.execute(
                    """INSERT INTO entity_aliases(user_id, key, entity_id, surface)
                       VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING""",
                    (user_id, mention.alias[0], entity_id, mention.alias[1]),
                )
            edges.append((entity_id, mention.episode_id))
        for entity_id, episode_id in edges:
            conn.execute(
                """INSERT INTO mentions(entity_id, episode_id) VALUES (%s, %s)
                   ON CONFLICT DO NOTHING""",
                (entity_id, episode_id),
            )
        return len(edges)

    def rows(
        self,
        user_id: str,
        dim: int,
        *,
        known_ids: npt.NDArray[np.int64] | None = None,
        episode_after: int = 0,
    ) -> GraphRows:
        """The user's graph; with ``known_ids`` only what is newer (see the SQLite store)."""
        known = np.zeros(0, dtype=np.int64) if known_ids is None else known_ids
        after = int(known[-1]) if known.size else 0
        with self._db.connect() as conn:
            entities = conn.execute(
                """SELECT id, key, name, type, vector FROM entities
                   WHERE user_id = %s AND id > %s ORDER BY id""",
                (user_id, after),
            ).fetchall()
            aliases = conn.execute(
                "SELECT key, entity_id FROM entity_aliases WHERE user_id = %s", (user_id,)
            ).fetchall()
            edges = conn.execute(
                """SELECT m.entity_id, m.episode_id FROM mentions m
                   JOIN entities e ON e.id = m.entity_id
                   WHERE e.user_id = %s AND m.episode_id > %s""",
                (user_id, episode_after),
            ).fetchall()
        size = len(entities)
        entity_ids = np.fromiter((r[0] for r in entities), dtype=np.int64, count=size)
        every_id = np.concatenate([known, entity_ids])
        keys = {str(r[1]): known.size + i for i, r in enumerate(entities)}
        empty = np.zeros(dim, dtype=np.float16)
        vectors = (
            np.stack(
                [np.frombuffer(bytes(r[4]), dtype=np.float16) if r[4] else empty for r in entities]
            )
            if size
            else np.zeros((0, dim), dtype=np.float16)
        )
        alias_at = positions(every_id, [entity_id for _, entity_id in aliases])
        for (alias_key, _), position in zip(aliases, alias_at.tolist(), strict=True):
            if position >= 0:
                keys.setdefault(str(alias_key), position)
        entity_of = np.fromiter((r[0] for r in edges), dtype=np.int64, count=len(edges))
        entity_at = positions(every_id, entity_of)
        found = entity_at >= 0
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
        with self._db.connect() as conn:
            facts = conn.execute(
                """SELECT id, statement FROM facts WHERE user_id = %s
                   AND status != 'superseded' ORDER BY id""",
                (user_id,),
            ).fetchall()
            if not facts:
                return FactLinks.empty()
            sources = conn.execute(
                """SELECT s.fact_id, e.id FROM fact_sources s JOIN facts f ON f.id = s.fact_id
                   JOIN episodes e ON e.focus_event_id = s.event_id
                   WHERE f.user_id = %s AND f.status != 'superseded'""",
                (user_id,),
            ).fetchall()
        ids = np.fromiter((r[0] for r in facts), dtype=np.int64, count=len(facts))
        fact_of = np.fromiter((r[0] for r in sources), dtype=np.int64, count=len(sources))
        episodes = np.fromiter((r[1] for r in sources), dtype=np.int64, count=len(sources))
        fact_at = positions(ids, fact_of)
        known = fact_at >= 0
        return FactLinks(ids, [str(r[1]) for r in facts], fact_at[known], episodes[known])

    def episode_ids_of_events(self, tx: Transaction, event_ids: Sequence[int]) -> dict[int, int]:
        if not event_ids:
            return {}
        rows = (
            conn_of(tx)
            .execute(
                "SELECT focus_event_id, id FROM episodes WHERE focus_event_id = ANY(%s)",
                (list(event_ids),),
            )
            .fetchall()
        )
        return {int(r[0]): int(r[1]) for r in rows}

    def counts(self) -> dict[str, int]:
        with self._db.connect() as conn:
            entities = conn.execute("SELECT count(*) FROM entities").fetchone()[0]
            mentions = conn.execute("SELECT count(*) FROM mentions").fetchone()[0]
        return {"entities": int(entities), "mentions": int(mentions)}

    def forget_user(self, tx: Transaction, user_id: str) -> None:
        conn = conn_of(tx)
        conn.execute(
            """DELETE FROM mentions WHERE entity_id IN
               (SELECT id FROM entities WHERE user_id = %s)""",
            (user_id,),
        )
        conn.execute("DELETE FROM entity_aliases WHERE user_id = %s", (user_id,))
        conn.execute("DELETE FROM entities WHERE user_id = %s", (user_id,))
