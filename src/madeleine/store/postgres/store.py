"""The PostgreSQL store: every durable record of the embedded store in one schema of one
database, shared by any number of API and worker processes. It owns the delete and forget
cascades, so a deleted memory is gone from every derived record in one transaction. SQL
lives in this package and nowhere else."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from madeleine.errors import EmbedderMismatchError
from madeleine.store.crypto import VaultCipher
from madeleine.store.export import exported_log
from madeleine.store.ports import (
    AuditRepository,
    DenseSearch,
    FactRepository,
    GraphRepository,
    ImportRepository,
    KnowledgeRepository,
    LifecycleRepository,
    SharedCache,
    ShortTermRepository,
    VaultRepository,
    VectorIndex,
    close_short_term,
)
from madeleine.store.postgres.audit import PgAudit
from madeleine.store.postgres.connection import (
    Database,
    PgTransaction,
    lock_users,
    require_schema_name,
)
from madeleine.store.postgres.episodes import (
    PgEpisodes,
    bump,
    refresh_digest,
    remove_episode_of_event,
)
from madeleine.store.postgres.facts import PgFacts
from madeleine.store.postgres.graph import PgGraph
from madeleine.store.postgres.imports import PgImportLog
from madeleine.store.postgres.kb import PgKnowledge, reset_kb_vectors
from madeleine.store.postgres.lexical import count_documents
from madeleine.store.postgres.lifecycle import PgLifecycle
from madeleine.store.postgres.log import MAX_ATTEMPTS, PgLog, enqueue
from madeleine.store.postgres.migrations import migrate
from madeleine.store.postgres.short_term import PgShortTerm
from madeleine.store.postgres.vault import PgVault
from madeleine.store.postgres.vectors import (
    PgDense,
    PgVectors,
    drop_other_hnsw_indexes,
    hnsw_index_sql,
)
from madeleine.text.pii import tokens_in

DEFAULT_SCHEMA = "madeleine"


class PostgresStore(PgLog, PgEpisodes):
    """``url``: ``postgresql://user:pw@host:5432/db``; ``schema``: where the store's tables
    live (one schema per store: a server's tenants share a database); ``vault_key`` seals
    vaulted PII (every process of a deployment needs the same key). Opening runs the
    pending migrations."""

    read_only = False

    def __init__(
        self,
        url: str,
        *,
        vault_key: bytes,
        schema: str = DEFAULT_SCHEMA,
        ann_threshold: int = 20_000,
        pool_size: int = 8,
        read_url: str | None = None,
    ) -> None:
        require_schema_name(schema)
        migrate(url, schema)
        self._db = Database(url, schema, max_size=pool_size, read_url=read_url)
        self.schema = schema
        self.facts: FactRepository = PgFacts(self._db)
        self.graph: GraphRepository = PgGraph(self._db)
        self.imports: ImportRepository = PgImportLog(self._db)
        self.cache: SharedCache | None = None
        self.short_term: ShortTermRepository = PgShortTerm(self._db)
        self.kb: KnowledgeRepository = PgKnowledge(self._db)
        self.lifecycle: LifecycleRepository = PgLifecycle(self._db)
        self.audit: AuditRepository = PgAudit(self._db)
        vault = PgVault(self._db, VaultCipher(vault_key))
        self.vault: VaultRepository = vault
        self.vectors: VectorIndex = PgVectors(self._db, ann_threshold)
        self.dense: DenseSearch | None = PgDense(self._db)
        try:
            vault.check_key()
        except Exception:
            self._db.close()
            raise

    @property
    def path(self) -> str:
        return f"{redacted(self._db.url)}#{self.schema}"

    def reading(self) -> AbstractContextManager[None]:
        """One connection and one snapshot for the reads of a search or a context."""
        return self._db.pinned()

    @contextmanager
    def transaction(self) -> Iterator[PgTransaction]:
        """A write transaction: what is written with it commits together."""
        with self._db.transaction() as tx:
            yield tx

    def close(self) -> None:
        close_short_term(self.short_term)
        self._db.close()

    # -- embedder binding and rebuilds --------------------------------------------------------

    def bind_embedder(self, name: str, dim: int) -> None:
        """Record the embedder on first use (and build the HNSW index for its dimension);
        refuse a different one later."""
        with self._db.connect() as conn:
            for key, value in (("embedder", name), ("embedder_dim", str(dim))):
                conn.execute(
                    "INSERT INTO meta(key, value) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                    (key, value),
                )
            rows = dict(
                conn.execute(
                    "SELECT key, value FROM meta WHERE key IN ('embedder', 'embedder_dim')"
                ).fetchall()
            )
        if rows.get("embedder") != name or rows.get("embedder_dim") != str(dim):
            raise EmbedderMismatchError(
                f"this store was indexed with embedder {rows.get('embedder')!r} "
                f"(dim {rows.get('embedder_dim')}), not {name!r} (dim {dim}); open it with the "
                "same embedder, or rebuild the indexes with `madeleine reindex --embedder ...`"
            )
        with self._db.connect() as conn:
            conn.execute(hnsw_index_sql(dim))

    def reset_indexes(self, embedder_name: str, dim: int) -> int:
        """Drop every derived index and queue the whole log again; returns events queued."""
        now = time.time()
        with self._db.connect() as conn:
            conn.execute("DELETE FROM episodes")
            conn.execute("DELETE FROM session_digests")
            conn.execute("UPDATE lexical_stats SET docs = 0, length = 0")
            for table in ("fact_sources", "facts", "alerts", "routing_log"):
                conn.execute(f"DELETE FROM {table}")
            conn.execute("UPDATE user_state SET changed_gen = changed_gen + 1")
            conn.execute("DELETE FROM outbox")
            reset_kb_vectors(conn)
            queued = conn.execute(
                """INSERT INTO outbox(event_id, user_id, enqueued_at)
                   SELECT id, user_id, %s FROM events ORDER BY id""",
                (now,),
            ).rowcount
            for key, value in (("embedder", embedder_name), ("embedder_dim", str(dim))):
                conn.execute(
                    """INSERT INTO meta(key, value) VALUES (%s, %s)
                       ON CONFLICT (key) DO UPDATE SET value = excluded.value""",
                    (key, value),
                )
            # the new dimension's index is built by bind_embedder, after this commits: built
            # here, it would meet the rows this transaction deleted (still in the table)
            drop_other_hnsw_indexes(conn, self.schema, dim)
        return int(queued)

    def meta(self, key: str) -> str | None:
        with self._db.connect() as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = %s", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        with self._db.connect() as conn:
            conn.execute(
                """INSERT INTO meta(key, value) VALUES (%s, %s)
                   ON CONFLICT (key) DO UPDATE SET value = excluded.value""",
                (key, value),
            )

    # -- deletion -----------------------------------------------------------------------------

    def delete_event(self, event_id: int, user_id: str | None = None) -> bool:
        """Remove a message from the log and every index; re-index the turn that quoted it."""
        now = time.time()
        with self._db.connect() as conn:
            owned = conn.execute("SELECT user_id FROM events WHERE id = %s", (event_id,)).fetchone()
            if owned is None:
                return False
            lock_users(conn, [str(owned[0])])
            row = conn.execute(
                "SELECT user_id, session_id, content FROM events WHERE id = %s FOR UPDATE",
                (event_id,),
            ).fetchone()
            if row is None or (user_id is not None and row[0] != user_id):
                return False
            owner, session_id, content = str(row[0]), str(row[1]), str(row[2])
            remove_episode_of_event(conn, event_id)
            conn.execute("DELETE FROM outbox WHERE event_id = %s", (event_id,))
            tx = PgTransaction(conn)
            self.facts.forget_event_sources(tx, [event_id])
            unused = [
                token
                for token in tokens_in(content)
                if conn.execute(
                    """SELECT 1 FROM events WHERE user_id = %s AND id != %s
                       AND strpos(content, %s) > 0 LIMIT 1""",
                    (owner, event_id, token),
                ).fetchone()
                is None
            ]
            self.vault.delete_tokens(tx, owner, unused)
            conn.execute("DELETE FROM events WHERE id = %s", (event_id,))
            quoting = conn.execute(
                "SELECT focus_event_id FROM episodes WHERE context_event_id = %s", (event_id,)
            ).fetchall()
            for (successor,) in quoting:
                remove_episode_of_event(conn, int(successor))
                enqueue(conn, int(successor), owner, now)
            bump(conn, owner, changed=True)
            refresh_digest(conn, owner, session_id)
        return True

    def forget_user(self, user_id: str) -> dict[str, int]:
        with self._db.connect() as conn:
            lock_users(conn, [user_id])
            tx = PgTransaction(conn)
            episodes = conn.execute(
                "DELETE FROM episodes WHERE user_id = %s RETURNING terms_length", (user_id,)
            ).fetchall()
            count_documents(conn, "episodes", -len(episodes), -sum(int(r[0]) for r in episodes))
            digests = conn.execute(
                "DELETE FROM session_digests WHERE user_id = %s RETURNING terms_length",
                (user_id,),
            ).fetchall()
            count_documents(conn, "sessions", -len(digests), -sum(int(r[0]) for r in digests))
            counts = {
                "events": conn.execute(
                    "DELETE FROM events WHERE user_id = %s", (user_id,)
                ).rowcount,
                "episodes": len(episodes),
                "vectors": len(episodes),
                "pending_jobs": conn.execute(
                    "DELETE FROM outbox WHERE user_id = %s", (user_id,)
                ).rowcount,
            }
            conn.execute("DELETE FROM user_state WHERE user_id = %s", (user_id,))
            counts["facts"] = self.facts.forget_user(tx, user_id)
            self.graph.forget_user(tx, user_id)
            self.imports.forget_user(tx, user_id)
            counts["vaulted_values"] = self.vault.forget_user(tx, user_id)
            counts["short_term"] = self.short_term.forget_user(tx, user_id)
            counts["item_states"] = self.lifecycle.forget_user(tx, user_id)
            self.audit.forget_user(tx, user_id)
        if self.cache is not None:  # after the commit: nothing cached before it is served
            self.cache.forget(user_id)
        return {key: int(value) for key, value in counts.items()}

    def export_user(self, user_id: str) -> dict[str, Any]:
        return exported_log(user_id, self.events_for_user(user_id), self.episodes_for_user(user_id))

    # -- statistics and checks ----------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        with self._db.connect() as conn:

            def count(sql: str) -> int:
                return int(conn.execute(sql).fetchone()[0])

            numbers = {
                "users": count("SELECT count(DISTINCT user_id) FROM events"),
                "sessions": count(
                    "SELECT count(*) FROM (SELECT DISTINCT user_id, session_id FROM events) s"
                ),
                "events": count("SELECT count(*) FROM events"),
                "episodes": count("SELECT count(*) FROM episodes"),
                "vectors": count("SELECT count(*) FROM episodes"),
                "facts": count("SELECT count(*) FROM facts WHERE status != 'superseded'"),
                "fact_versions": count("SELECT count(*) FROM facts"),
                "alerts": count("SELECT count(*) FROM alerts"),
                "pending_jobs": count(
                    f"SELECT count(*) FROM outbox WHERE attempts < {MAX_ATTEMPTS}"
                ),
                "failed_jobs": count(
                    f"SELECT count(*) FROM outbox WHERE attempts >= {MAX_ATTEMPTS}"
                ),
                "database_bytes": count(
                    f"""SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c
                        JOIN pg_namespace n ON n.oid = c.relnamespace
                        WHERE n.nspname = '{self.schema}' AND c.relkind = 'r'"""
                ),
                "ann_bytes": count(
                    f"""SELECT coalesce(sum(pg_relation_size(c.oid)), 0) FROM pg_class c
                        JOIN pg_namespace n ON n.oid = c.relnamespace
                        WHERE n.nspname = '{self.schema}' AND c.relkind = 'i'
                        AND c.relname LIKE 'episodes_hnsw_%'"""
                ),
            }
        return {
            **numbers,
            "failures": self.failed_jobs(limit=10),
            "embedder": self.meta("embedder"),
            "embedder_dim": self.meta("embedder_dim"),
            "graph": self.graph.counts(),
            "kb": self.kb.counts(),
        }

    def integrity(self) -> dict[str, int]:
        """Cross-index counts a test or an operator can compare: all equal when consistent."""
        with self._db.connect() as conn:
            episodes = int(conn.execute("SELECT count(*) FROM episodes").fetchone()[0])
            orphans = conn.execute(
                """SELECT count(*) FROM episodes e
                   WHERE NOT EXISTS (SELECT 1 FROM events v WHERE v.id = e.focus_event_id)"""
            ).fetchone()[0]
            unindexed = conn.execute(
                """SELECT count(*) FROM events v
                   WHERE NOT EXISTS (SELECT 1 FROM episodes e WHERE e.focus_event_id = v.id)
                   AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.event_id = v.id
                                   AND o.attempts < %s)""",
                (MAX_ATTEMPTS,),
            ).fetchone()[0]
            stats = conn.execute(
                "SELECT docs FROM lexical_stats WHERE corpus = 'episodes'"
            ).fetchone()[0]
        return {
            "episodes": episodes,
            "vectors": episodes,  # one row holds the episode, its vector and its terms
            "fts": int(stats),
            "orphan_episodes": int(orphans),
            "events_without_episode": int(unindexed),
        }

    def check(self) -> dict[str, Any]:
        """The cross-index counts; ``ok`` is False when they disagree (page-level checks are
        the server's own business: amcheck, checksums)."""
        counts = self.integrity()
        consistent = (
            counts["episodes"] == counts["vectors"] == counts["fts"]
            and counts["orphan_episodes"] == 0
            and counts["events_without_episode"] == 0
        )
        return {"ok": consistent, "database": "ok", **counts}


def redacted(url: str) -> str:
    """The URL as logs and listings may show it: no password."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    user = f"{parts.username}:***@" if parts.username else ""
    port = f":{parts.port}" if parts.port else ""
    return urlunsplit(parts._replace(netloc=f"{user}{host}{port}"))
