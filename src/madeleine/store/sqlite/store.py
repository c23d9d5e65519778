"""The embedded backend: one SQLite file in WAL mode holding the log, the outbox and every
index, plus the ANN files beside it. It owns its transactions and the whole delete / forget
cascade, so a deleted memory is gone from every derived record in one transaction."""

from __future__ import annotations

import logging
import re
import sqlite3
import time
from contextlib import AbstractContextManager, nullcontext
from importlib import resources
from pathlib import Path
from typing import Any

from madeleine.errors import EmbedderMismatchError, StoreDamagedError, StoreReadOnlyError
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
from madeleine.store.private import tighten_existing
from madeleine.store.records import Transaction
from madeleine.store.sqlite.ann import UsearchFiles
from madeleine.store.sqlite.audit import AUDIT_SCHEMA, SQLiteAudit
from madeleine.store.sqlite.connection import Connections, SQLiteTransaction
from madeleine.store.sqlite.episodes import (
    IN_CHUNK,
    EpisodeTables,
    purge_lexical_remnants,
    refresh_digest,
)
from madeleine.store.sqlite.facts import SQLiteFacts
from madeleine.store.sqlite.graph import SQLiteGraph
from madeleine.store.sqlite.imports import SQLiteImportLog
from madeleine.store.sqlite.kb import KB_SCHEMA, SQLiteKnowledge
from madeleine.store.sqlite.lifecycle import LIFECYCLE_SCHEMA, SQLiteLifecycle
from madeleine.store.sqlite.log import MAX_ATTEMPTS, LogTables, enqueue
from madeleine.store.sqlite.short_term import SHORT_TERM_SCHEMA, SQLiteShortTerm
from madeleine.store.sqlite.vault import VAULT_SCHEMA, SQLiteVault
from madeleine.text.pii import tokens_in

log = logging.getLogger(__name__)

SCHEMA_VERSION = "2"  # 2: ids of events, episodes and facts are never reused
_NEVER_REUSED = ("events", "episodes", "facts")
DATABASE_FILE = "memory.db"
_SIDE = ("-wal", "-shm")  # SQLite's files beside the database


class SQLiteStore(LogTables, EpisodeTables):
    """``directory`` holds ``memory.db`` and the ``ann/`` index files; ``vault_key`` seals
    vaulted PII. Thread-safe: each thread gets its own connection."""

    def __init__(
        self,
        directory: Path,
        *,
        vault_key: bytes,
        busy_timeout_ms: int = 30_000,
        ann_threshold: int = 20_000,
        read_only: bool = False,
    ) -> None:
        self.directory = directory
        self.read_only = read_only
        database = directory / DATABASE_FILE
        if database.exists() and database.stat().st_size == 0:
            raise StoreDamagedError(
                f"{database} is empty: the store was truncated or never finished being "
                "created. Restore it from a backup, or delete the file to start a new store."
            )
        if read_only and not database.exists():
            raise FileNotFoundError(f"no store at {directory} to open read-only")
        self._db = Connections(database, busy_timeout_ms, read_only=read_only)
        schema = resources.files("madeleine.store.sqlite").joinpath("schema.sql").read_text("utf-8")
        try:
            if read_only:
                _require_current_schema(self.meta("schema_version"), database)
            else:
                with self._db.write() as conn:
                    _migrate_ids(conn, schema)
                script = (
                    "BEGIN IMMEDIATE;"
                    + schema
                    + VAULT_SCHEMA
                    + SHORT_TERM_SCHEMA
                    + KB_SCHEMA
                    + LIFECYCLE_SCHEMA
                    + AUDIT_SCHEMA
                    + "COMMIT;"
                )
                self._db.get().executescript(script)
                self.set_meta("schema_version", SCHEMA_VERSION)
                # SQLite made the file with the umask's mode; its -wal/-shm copy the file's
                for path in (database, *(database.with_name(database.name + s) for s in _SIDE)):
                    tighten_existing(path)
        except (sqlite3.DatabaseError, StoreDamagedError) as exc:
            self._db.close()
            raise StoreDamagedError(
                f"{database} is damaged ({exc}); restore it from a backup. `madeleine check` "
                "tells what is damaged; the log of messages can be re-indexed with "
                "`madeleine reindex` once the file opens."
            ) from exc
        # typed as the port's protocols: each repository is checked against its contract
        self.facts: FactRepository = SQLiteFacts(self._db)
        self.graph: GraphRepository = SQLiteGraph(self._db)
        self.imports: ImportRepository = SQLiteImportLog(self._db)
        self.cache: SharedCache | None = None
        self.short_term: ShortTermRepository = SQLiteShortTerm(self._db)
        self.kb: KnowledgeRepository = SQLiteKnowledge(self._db)
        self.lifecycle: LifecycleRepository = SQLiteLifecycle(self._db)
        self.audit: AuditRepository = SQLiteAudit(self._db)
        self.vault: VaultRepository = SQLiteVault(
            self._db.get, VaultCipher(vault_key), self._db.write
        )
        self.vectors: VectorIndex = UsearchFiles(directory / "ann", ann_threshold)
        self.dense: DenseSearch | None = None  # vectors are searched in the process
        try:
            self.vault.check_key()
        except Exception:
            self._db.close()
            raise

    @property
    def path(self) -> Path:
        return self._db.path

    def reading(self) -> AbstractContextManager[None]:
        return nullcontext()

    def transaction(self) -> AbstractContextManager[Transaction]:
        """A write transaction (``BEGIN IMMEDIATE``): what is written with it commits together."""
        return self._db.transaction()

    def close(self) -> None:
        try:
            self.vectors.flush()
        except Exception:  # the ANN files are a cache: the next process re-adds what is missing
            log.exception("could not write the ANN index on close")
        close_short_term(self.short_term)
        self._db.close()

    def bind_embedder(self, name: str, dim: int) -> None:
        """Record the embedder on first use; refuse a different one later."""
        query = "SELECT key, value FROM meta WHERE key IN ('embedder', 'embedder_dim')"
        rows = dict(self._db.get().execute(query).fetchall())
        if not rows:
            with self._db.write() as conn:
                conn.executemany(
                    "INSERT OR IGNORE INTO meta(key, value) VALUES (?, ?)",
                    [("embedder", name), ("embedder_dim", str(dim))],
                )
                rows = dict(conn.execute(query).fetchall())  # another process may have won
        if rows.get("embedder") != name or rows.get("embedder_dim") != str(dim):
            raise EmbedderMismatchError(
                f"this store was indexed with embedder {rows.get('embedder')!r} "
                f"(dim {rows.get('embedder_dim')}), not {name!r} (dim {dim}); open it with the "
                "same embedder, or rebuild the indexes with `madeleine reindex --embedder ...`"
            )

    def reset_indexes(self, embedder_name: str, dim: int) -> int:
        """Drop every derived index and queue the whole log again; returns events queued."""
        now = time.time()
        with self._db.write() as conn:
            conn.execute("DELETE FROM episodes")
            conn.execute("DELETE FROM episode_vectors")
            conn.execute("DELETE FROM episodes_fts")
            conn.execute("DELETE FROM session_digests")
            conn.execute("DELETE FROM session_fts")
            # facts are derived from the log too: drawn again, their chains rebuilt by event time
            for table in ("facts", "fact_sources", "facts_fts", "alerts", "routing_log"):
                conn.execute(f"DELETE FROM {table}")
            conn.execute("UPDATE user_state SET changed_gen = changed_gen + 1")
            conn.execute("DELETE FROM outbox")
            conn.execute("UPDATE kb_chunks SET vector = NULL")  # embedded again as well
            conn.execute("UPDATE kb_collections SET vector = NULL, profile_stale = 1")
            conn.execute(
                "INSERT INTO kb_state(key, value) VALUES ('generation', 1) "
                "ON CONFLICT(key) DO UPDATE SET value = value + 1"
            )
            queued = conn.execute(
                "INSERT INTO outbox(event_id, user_id, enqueued_at) "
                "SELECT id, user_id, ? FROM events ORDER BY id",
                (now,),
            ).rowcount
            conn.executemany(
                "INSERT INTO meta(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                [("embedder", embedder_name), ("embedder_dim", str(dim))],
            )
        self.vectors.clear()
        return int(queued)

    def meta(self, key: str) -> str | None:
        row = self._db.get().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        with self._db.write() as conn:
            conn.execute(
                "INSERT INTO meta(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    def delete_event(self, event_id: int, user_id: str | None = None) -> bool:
        """Remove a message from the log and every index; re-index the turn that quoted it."""
        now = time.time()
        with self._db.write() as conn:
            row = conn.execute(
                "SELECT user_id, session_id FROM events WHERE id = ?", (event_id,)
            ).fetchone()
            if row is None or (user_id is not None and row[0] != user_id):
                return False
            user_id, session_id = str(row[0]), str(row[1])
            self._remove_episode_of_event(conn, event_id)
            conn.execute("DELETE FROM outbox WHERE event_id = ?", (event_id,))
            # before the row goes: the vault cascade reads the message's tokens
            tx = SQLiteTransaction(conn)
            self.facts.forget_event_sources(tx, [event_id])
            self._forget_vaulted_values(conn, event_id)
            conn.execute("DELETE FROM events WHERE id = ?", (event_id,))
            quoting = conn.execute(
                "SELECT focus_event_id FROM episodes WHERE context_event_id = ?", (event_id,)
            ).fetchall()
            for (successor,) in quoting:
                # Drop the stale episode now so the deleted text is gone from every index at once.
                self._remove_episode_of_event(conn, int(successor))
                enqueue(conn, int(successor), user_id, now)
            self._bump(conn, user_id, changed=True)
            refresh_digest(conn, user_id, session_id)
            purge_lexical_remnants(conn)
        # the deleted text must not linger in the write-ahead log either
        self._db.get().execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return True

    def forget_user(self, user_id: str) -> dict[str, int]:
        with self._db.write() as conn:
            episode_ids = [
                r[0] for r in conn.execute("SELECT id FROM episodes WHERE user_id = ?", (user_id,))
            ]
            for start in range(0, len(episode_ids), IN_CHUNK):
                chunk = episode_ids[start : start + IN_CHUNK]
                marks = ",".join("?" * len(chunk))
                conn.execute(f"DELETE FROM episodes_fts WHERE rowid IN ({marks})", chunk)
            counts = {
                "events": conn.execute("DELETE FROM events WHERE user_id = ?", (user_id,)).rowcount,
                "episodes": conn.execute(
                    "DELETE FROM episodes WHERE user_id = ?", (user_id,)
                ).rowcount,
                "vectors": conn.execute(
                    "DELETE FROM episode_vectors WHERE user_id = ?", (user_id,)
                ).rowcount,
                "pending_jobs": conn.execute(
                    "DELETE FROM outbox WHERE user_id = ?", (user_id,)
                ).rowcount,
            }
            conn.execute("DELETE FROM user_state WHERE user_id = ?", (user_id,))
            digest_ids = [
                r[0]
                for r in conn.execute(
                    "SELECT id FROM session_digests WHERE user_id = ?", (user_id,)
                )
            ]
            conn.executemany("DELETE FROM session_fts WHERE rowid = ?", [(i,) for i in digest_ids])
            conn.execute("DELETE FROM session_digests WHERE user_id = ?", (user_id,))
            tx = SQLiteTransaction(conn)
            counts["facts"] = self.facts.forget_user(tx, user_id)
            self.graph.forget_user(tx, user_id)
            self.imports.forget_user(tx, user_id)
            counts["vaulted_values"] = self.vault.forget_user(tx, user_id)
            counts["short_term"] = self.short_term.forget_user(tx, user_id)
            counts["item_states"] = self.lifecycle.forget_user(tx, user_id)
            self.audit.forget_user(tx, user_id)
            purge_lexical_remnants(conn)
        self._db.get().execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self.vectors.forget(user_id)
        return counts

    def export_user(self, user_id: str) -> dict[str, Any]:
        return exported_log(user_id, self.events_for_user(user_id), self.episodes_for_user(user_id))

    def stats(self) -> dict[str, Any]:
        conn = self._db.get()

        def count(sql: str) -> int:
            return int(conn.execute(sql).fetchone()[0])

        return {
            "users": count("SELECT count(DISTINCT user_id) FROM events"),
            "sessions": count(
                "SELECT count(*) FROM (SELECT DISTINCT user_id, session_id FROM events)"
            ),
            "events": count("SELECT count(*) FROM events"),
            "episodes": count("SELECT count(*) FROM episodes"),
            "vectors": count("SELECT count(*) FROM episode_vectors"),
            "facts": count("SELECT count(*) FROM facts WHERE status != 'superseded'"),
            "fact_versions": count("SELECT count(*) FROM facts"),
            "alerts": count("SELECT count(*) FROM alerts"),
            "pending_jobs": count(f"SELECT count(*) FROM outbox WHERE attempts < {MAX_ATTEMPTS}"),
            "failed_jobs": count(f"SELECT count(*) FROM outbox WHERE attempts >= {MAX_ATTEMPTS}"),
            "failures": self.failed_jobs(limit=10),  # the first dead-lettered jobs and their error
            "embedder": self.meta("embedder"),
            "embedder_dim": self.meta("embedder_dim"),
            "graph": self.graph.counts(),
            "kb": self.kb.counts(),
            "database_bytes": sum(
                p.stat().st_size
                for p in self._db.path.parent.glob(self._db.path.name + "*")
                if p.is_file()
            ),
        }

    def integrity(self) -> dict[str, int]:
        """Cross-index counts a test or an operator can compare: all equal when consistent."""
        conn = self._db.get()
        return {
            "episodes": int(conn.execute("SELECT count(*) FROM episodes").fetchone()[0]),
            "vectors": int(conn.execute("SELECT count(*) FROM episode_vectors").fetchone()[0]),
            "fts": int(conn.execute("SELECT count(*) FROM episodes_fts").fetchone()[0]),
            "orphan_episodes": int(
                conn.execute(
                    "SELECT count(*) FROM episodes "
                    "WHERE focus_event_id NOT IN (SELECT id FROM events)"
                ).fetchone()[0]
            ),
            "events_without_episode": int(
                conn.execute(
                    # a dead-lettered job is not pending: its message stays unindexed
                    "SELECT count(*) FROM events WHERE id NOT IN "
                    "(SELECT focus_event_id FROM episodes) "
                    "AND id NOT IN (SELECT event_id FROM outbox WHERE attempts < ?)",
                    (MAX_ATTEMPTS,),
                ).fetchone()[0]
            ),
        }

    def check(self) -> dict[str, Any]:
        """SQLite's own integrity check (every page and index of the file) and the cross-index
        counts; ``ok`` is False when either finds a problem."""
        conn = self._db.get()
        try:
            problems = [str(r[0]) for r in conn.execute("PRAGMA integrity_check(20)")]
        except (sqlite3.DatabaseError, StoreDamagedError) as exc:
            problems = [str(exc)]
        if problems == ["ok"]:
            problems = []
        counts = self.integrity() if not problems else {}
        consistent = bool(counts) and (
            counts["episodes"] == counts["vectors"] == counts["fts"]
            and counts["orphan_episodes"] == 0
            and counts["events_without_episode"] == 0
        )
        return {"ok": not problems and consistent, "database": problems or "ok", **counts}

    def _forget_vaulted_values(self, conn: sqlite3.Connection, event_id: int) -> None:
        """A deleted message takes its vaulted values along, unless another of the user's
        messages still holds the same value (tokens are shared by equal values)."""
        row = conn.execute(
            "SELECT user_id, content FROM events WHERE id = ?", (event_id,)
        ).fetchone()
        if row is None:
            return
        unused = [
            token
            for token in tokens_in(row[1])
            if not conn.execute(
                "SELECT 1 FROM events WHERE user_id = ? AND id != ? AND instr(content, ?) > 0",
                (row[0], event_id, token),
            ).fetchone()
        ]
        self.vault.delete_tokens(SQLiteTransaction(conn), row[0], unused)


def _migrate_ids(conn: sqlite3.Connection, schema: str) -> None:
    """Stores made before ids were never reused: rebuild those tables with AUTOINCREMENT
    (rows and ids unchanged; indexes and triggers are recreated by the schema script)."""
    for table in _NEVER_REUSED:
        row = conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
        ).fetchone()
        if row is None or "AUTOINCREMENT" in str(row[0]).upper():
            continue
        match = re.search(rf"CREATE TABLE IF NOT EXISTS {table} \((.*?)\n\);", schema, re.S)
        assert match is not None, f"schema.sql defines {table}"
        conn.execute(f"CREATE TABLE {table}_ids ({match.group(1)})")
        conn.execute(f"INSERT INTO {table}_ids SELECT * FROM {table}")
        conn.execute(f"DROP TABLE {table}")
        conn.execute(f"ALTER TABLE {table}_ids RENAME TO {table}")


def _require_current_schema(version: str | None, database: Path) -> None:
    """A read-only store cannot be upgraded on open: it must already be current."""
    if version != SCHEMA_VERSION:
        raise StoreReadOnlyError(
            f"{database} has schema {version}, this version needs {SCHEMA_VERSION}: open it "
            "once with write access to upgrade it"
        )
