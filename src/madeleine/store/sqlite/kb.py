"""Knowledge-base tables: collections, documents, their versions and chunks.

A version carries everything governance needs (title, source type, ACL, effective_from /
expires_at), so history is exact and ``as_of`` can see what held then. A chunk's vector is
NULL until the indexer embeds it; an identical chunk (same ``embed_key``) anywhere in the
tenant lends its vector at write time, so an update only re-embeds what changed. Every
change bumps ``generation``, which tells the in-memory index to reload.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from madeleine.kb.records import (
    CollectionInfo,
    ContextJob,
    KBSnapshot,
    NewVersion,
    VersionInfo,
    epoch_to_datetime,
)
from madeleine.store.sqlite.connection import Connections

KB_SCHEMA = """
CREATE TABLE IF NOT EXISTS kb_collections (
    name          TEXT PRIMARY KEY,
    description   TEXT NOT NULL DEFAULT '',
    l0            TEXT NOT NULL DEFAULT '',
    l1            TEXT NOT NULL DEFAULT '',
    profile       TEXT NOT NULL DEFAULT '',
    vector        BLOB,
    profile_stale INTEGER NOT NULL DEFAULT 1,
    created_at    REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS kb_documents (
    id         INTEGER PRIMARY KEY,
    collection TEXT NOT NULL,
    doc_id     TEXT NOT NULL,
    created_at REAL NOT NULL,
    UNIQUE (collection, doc_id)
);
CREATE TABLE IF NOT EXISTS kb_versions (
    id             INTEGER PRIMARY KEY,
    document       INTEGER NOT NULL,
    number         INTEGER NOT NULL,
    title          TEXT NOT NULL,
    source_type    TEXT NOT NULL,
    acl            TEXT NOT NULL,
    metadata       TEXT NOT NULL,
    effective_from REAL,
    expires_at     REAL,
    created_at     REAL NOT NULL,
    content_hash   TEXT NOT NULL,
    reused         INTEGER NOT NULL DEFAULT 0,
    l0             TEXT NOT NULL DEFAULT '',
    l1             TEXT NOT NULL DEFAULT '',
    UNIQUE (document, number)
);
CREATE TABLE IF NOT EXISTS kb_chunks (
    id         INTEGER PRIMARY KEY,
    version    INTEGER NOT NULL,
    position   INTEGER NOT NULL,
    section    TEXT NOT NULL,
    text       TEXT NOT NULL,
    prefix     TEXT NOT NULL,
    terms      TEXT NOT NULL,
    embed_text TEXT NOT NULL,
    embed_key  TEXT NOT NULL,
    context    TEXT,
    vector     BLOB
);
CREATE INDEX IF NOT EXISTS kb_chunks_version ON kb_chunks(version, position);
CREATE INDEX IF NOT EXISTS kb_chunks_key ON kb_chunks(embed_key);
CREATE INDEX IF NOT EXISTS kb_chunks_pending ON kb_chunks(id) WHERE vector IS NULL;
CREATE TABLE IF NOT EXISTS kb_state (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""

_VERSION_COLUMNS = """v.id, d.doc_id, d.collection, v.number, v.title, v.source_type, v.acl,
    v.metadata, v.effective_from, v.expires_at, v.created_at, v.content_hash, v.reused, v.l0,
    v.l1, (SELECT count(*) FROM kb_chunks c WHERE c.version = v.id)"""


class SQLiteKnowledge:
    def __init__(self, db: Connections) -> None:
        self._db = db

    # -- collections ----------------------------------------------------------------------------

    def ensure_collection(self, name: str, description: str | None) -> None:
        with self._db.write() as conn:
            found = conn.execute(
                "SELECT description FROM kb_collections WHERE name = ?", (name,)
            ).fetchone()
            if found is None:
                conn.execute(
                    "INSERT INTO kb_collections(name, description, created_at) VALUES (?, ?, ?)",
                    (name, description or "", time.time()),
                )
                _bump(conn)
            elif description is not None and description != found[0]:
                conn.execute(
                    "UPDATE kb_collections SET description = ?, profile_stale = 1 WHERE name = ?",
                    (description, name),
                )
                _bump(conn)

    def collections(self) -> list[CollectionInfo]:
        rows = (
            self._db.get()
            .execute(
                """SELECT k.name, k.description, k.l0, k.l1,
                      (SELECT count(*) FROM kb_documents d WHERE d.collection = k.name),
                      (SELECT count(*) FROM kb_documents d JOIN kb_versions v ON v.document = d.id
                         JOIN kb_chunks c ON c.version = v.id WHERE d.collection = k.name
                         AND v.number = (SELECT max(number) FROM kb_versions w
                                         WHERE w.document = d.id))
               FROM kb_collections k ORDER BY k.name"""
            )
            .fetchall()
        )
        return [CollectionInfo(r[0], r[1], r[4], r[5], r[2], r[3]) for r in rows]

    def delete_collection(self, name: str) -> int:
        """Remove a collection with every document in it; how many documents went."""
        with self._db.write() as conn:
            documents = [
                r[0]
                for r in conn.execute(
                    "SELECT id FROM kb_documents WHERE collection = ?", (name,)
                ).fetchall()
            ]
            for document in documents:
                _delete_document(conn, document)
            gone = conn.execute("DELETE FROM kb_collections WHERE name = ?", (name,)).rowcount
            if gone or documents:
                _bump(conn)
        self._checkpoint()
        return len(documents)

    def stale_profiles(self) -> list[tuple[str, str, list[tuple[str, str]]]]:
        """Collections whose L0/L1 and routing vector need rebuilding: (name, description,
        [(title, document L0)] of their current documents)."""
        conn = self._db.get()
        stale = conn.execute(
            "SELECT name, description FROM kb_collections WHERE profile_stale = 1"
        ).fetchall()
        out = []
        for name, description in stale:
            documents = conn.execute(
                """SELECT v.title, v.l0 FROM kb_documents d JOIN kb_versions v ON v.document = d.id
                   WHERE d.collection = ? AND v.number = (SELECT max(number) FROM kb_versions w
                                                          WHERE w.document = d.id)
                   ORDER BY d.id""",
                (name,),
            ).fetchall()
            out.append((name, description, [(t, l0) for t, l0 in documents]))
        return out

    def set_profile(
        self, name: str, l0: str, l1: str, profile: str, vector: np.ndarray[Any, Any]
    ) -> None:
        with self._db.write() as conn:
            conn.execute(
                """UPDATE kb_collections SET l0 = ?, l1 = ?, profile = ?, vector = ?,
                   profile_stale = 0 WHERE name = ?""",
                (l0, l1, profile, np.asarray(vector, dtype=np.float32).tobytes(), name),
            )
            _bump(conn)

    # -- documents and versions -----------------------------------------------------------------

    def add_version(self, version: NewVersion) -> VersionInfo:
        """Store a new version (the document is created with its first one); chunks whose
        ``embed_key`` is already embedded reuse that vector."""
        now = time.time()
        with self._db.write() as conn:
            row = conn.execute(
                "SELECT id FROM kb_documents WHERE collection = ? AND doc_id = ?",
                (version.collection, version.doc_id),
            ).fetchone()
            if row is None:
                document = conn.execute(
                    "INSERT INTO kb_documents(collection, doc_id, created_at) VALUES (?, ?, ?)",
                    (version.collection, version.doc_id, now),
                ).lastrowid
            else:
                document = row[0]
            number = conn.execute(
                "SELECT coalesce(max(number), 0) + 1 FROM kb_versions WHERE document = ?",
                (document,),
            ).fetchone()[0]
            version_id = conn.execute(
                """INSERT INTO kb_versions(document, number, title, source_type, acl, metadata,
                   effective_from, expires_at, created_at, content_hash, l0, l1)
                   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                (
                    document,
                    number,
                    version.title,
                    version.source_type,
                    json.dumps(list(version.acl)),
                    json.dumps(version.metadata, ensure_ascii=False, default=str),
                    version.effective_from,
                    version.expires_at,
                    now,
                    version.content_hash,
                    version.l0,
                    version.l1,
                ),
            ).lastrowid
            reused = 0
            for chunk in version.chunks:
                # an embedded twin lends its vector, and its LLM-written context with it
                known = conn.execute(
                    "SELECT vector, context, terms, embed_text FROM kb_chunks "
                    "WHERE embed_key = ? AND vector IS NOT NULL LIMIT 1",
                    (chunk.embed_key,),
                ).fetchone()
                reused += known is not None
                terms, embed_text = chunk.terms, chunk.embed_text
                if known is not None and known[1]:
                    terms, embed_text = known[2], known[3]
                conn.execute(
                    """INSERT INTO kb_chunks(version, position, section, text, prefix, terms,
                       embed_text, embed_key, context, vector)
                       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                    (
                        version_id,
                        chunk.position,
                        json.dumps(list(chunk.section), ensure_ascii=False),
                        chunk.text,
                        chunk.prefix,
                        terms,
                        embed_text,
                        chunk.embed_key,
                        None if known is None else known[1],
                        None if known is None else known[0],
                    ),
                )
            conn.execute("UPDATE kb_versions SET reused = ? WHERE id = ?", (reused, version_id))
            conn.execute(
                "UPDATE kb_collections SET profile_stale = 1 WHERE name = ?",
                (version.collection,),
            )
            _bump(conn)
            found = conn.execute(
                f"SELECT {_VERSION_COLUMNS} FROM kb_versions v JOIN kb_documents d "
                "ON d.id = v.document WHERE v.id = ?",
                (version_id,),
            ).fetchone()
        return _version_info(found)

    def versions(self, collection: str, doc_id: str) -> list[VersionInfo]:
        rows = (
            self._db.get()
            .execute(
                f"SELECT {_VERSION_COLUMNS} FROM kb_versions v JOIN kb_documents d "
                "ON d.id = v.document WHERE d.collection = ? AND d.doc_id = ? ORDER BY v.number",
                (collection, doc_id),
            )
            .fetchall()
        )
        return [_version_info(r) for r in rows]

    def documents(self, collection: str) -> list[VersionInfo]:
        """The latest version of each document of the collection, in insertion order."""
        rows = (
            self._db.get()
            .execute(
                f"""SELECT {_VERSION_COLUMNS} FROM kb_versions v JOIN kb_documents d
                ON d.id = v.document WHERE d.collection = ?
                AND v.number = (SELECT max(number) FROM kb_versions w WHERE w.document = d.id)
                ORDER BY d.id""",
                (collection,),
            )
            .fetchall()
        )
        return [_version_info(r) for r in rows]

    def version_text(self, collection: str, doc_id: str, number: int) -> str:
        """A version's text, its chunks joined (what ``update_document`` diffs against)."""
        rows = (
            self._db.get()
            .execute(
                """SELECT c.text FROM kb_chunks c JOIN kb_versions v ON v.id = c.version
               JOIN kb_documents d ON d.id = v.document
               WHERE d.collection = ? AND d.doc_id = ? AND v.number = ? ORDER BY c.position""",
                (collection, doc_id, number),
            )
            .fetchall()
        )
        return "\n\n".join(r[0] for r in rows)

    def delete_document(self, collection: str, doc_id: str) -> bool:
        with self._db.write() as conn:
            row = conn.execute(
                "SELECT id FROM kb_documents WHERE collection = ? AND doc_id = ?",
                (collection, doc_id),
            ).fetchone()
            if row is None:
                return False
            _delete_document(conn, row[0])
            # the collection's abstracts quote the document: cleared now, rebuilt in the
            # background like any stale profile
            conn.execute(
                "UPDATE kb_collections SET l1 = '', profile = '', vector = NULL, "
                "profile_stale = 1 WHERE name = ?",
                (collection,),
            )
            _bump(conn)
        self._checkpoint()
        return True

    def _checkpoint(self) -> None:
        """Deleted text must not linger in the write-ahead log (secure_delete already zeroes
        the database file's freed pages)."""
        self._db.get().execute("PRAGMA wal_checkpoint(TRUNCATE)")

    # -- indexing -------------------------------------------------------------------------------

    def pending(self, limit: int, *, situated_only: bool = False) -> list[tuple[int, str]]:
        """Chunks still without a vector: (chunk id, the text to embed), oldest first; with
        ``situated_only``, only those an LLM has situated (or failed to)."""
        situated = " AND context IS NOT NULL" if situated_only else ""
        rows = (
            self._db.get()
            .execute(
                f"SELECT id, embed_text FROM kb_chunks WHERE vector IS NULL{situated} "
                "ORDER BY id LIMIT ?",
                (limit,),
            )
            .fetchall()
        )
        return [(r[0], r[1]) for r in rows]

    def uncontextualized(self, limit: int) -> list[ContextJob]:
        """Chunks waiting for their embedding that no LLM has situated yet, oldest first,
        with their version's title and full text (the cacheable part of the prompt)."""
        conn = self._db.get()
        rows = conn.execute(
            """SELECT c.id, c.version, v.title, c.text, c.prefix, c.terms, c.embed_text
               FROM kb_chunks c JOIN kb_versions v ON v.id = c.version
               WHERE c.vector IS NULL AND c.context IS NULL ORDER BY c.id LIMIT ?""",
            (limit,),
        ).fetchall()
        documents: dict[int, str] = {}
        for version in {r[1] for r in rows}:
            parts = conn.execute(
                "SELECT text FROM kb_chunks WHERE version = ? ORDER BY position", (version,)
            ).fetchall()
            documents[version] = "\n\n".join(p[0] for p in parts)
        return [
            ContextJob(
                chunk_id=r[0],
                version=r[1],
                title=r[2],
                document=documents[r[1]],
                text=r[3],
                prefix=r[4],
                terms=r[5],
                embed_text=r[6],
            )
            for r in rows
        ]

    def set_contexts(self, contexts: Sequence[tuple[int, str, str, str]]) -> None:
        """Store (chunk id, context, terms, text to embed) for chunks still unembedded; an
        empty context marks a chunk the LLM could not situate (it keeps its heuristic prefix)."""
        if not contexts:
            return
        with self._db.write() as conn:
            conn.executemany(
                """UPDATE kb_chunks SET context = ?, terms = ?, embed_text = ?
                   WHERE id = ? AND vector IS NULL""",
                [(context, terms, text, chunk_id) for chunk_id, context, terms, text in contexts],
            )
            _bump(conn)

    def pending_count(self) -> int:
        conn = self._db.get()
        chunks = conn.execute("SELECT count(*) FROM kb_chunks WHERE vector IS NULL").fetchone()[0]
        profiles = conn.execute(
            "SELECT count(*) FROM kb_collections WHERE profile_stale = 1"
        ).fetchone()[0]
        return int(chunks) + int(profiles)

    def set_vectors(self, vectors: Sequence[tuple[int, np.ndarray[Any, Any]]]) -> None:
        """Store computed vectors; a chunk deleted meanwhile is simply skipped. An identical
        chunk still waiting gets the same vector (it would be embedded the same)."""
        if not vectors:
            return
        with self._db.write() as conn:
            for chunk_id, vector in vectors:
                blob = np.asarray(vector, dtype=np.float32).tobytes()
                conn.execute(
                    """UPDATE kb_chunks SET vector = ? WHERE vector IS NULL AND embed_key =
                       (SELECT embed_key FROM kb_chunks WHERE id = ?)""",
                    (blob, chunk_id),
                )
            _bump(conn)

    def reset_vectors(self) -> None:
        """Forget every vector (the embedder changed): the indexer embeds everything again."""
        with self._db.write() as conn:
            conn.execute("UPDATE kb_chunks SET vector = NULL")
            conn.execute("UPDATE kb_collections SET vector = NULL, profile_stale = 1")
            _bump(conn)

    # -- reading --------------------------------------------------------------------------------

    def generation(self) -> int:
        row = (
            self._db.get().execute("SELECT value FROM kb_state WHERE key = 'generation'").fetchone()
        )
        return 0 if row is None else int(row[0])

    def snapshot(self, dim: int) -> KBSnapshot:
        conn = self._db.get()
        conn.execute("BEGIN")
        try:
            generation = self.generation()
            versions = conn.execute(
                """SELECT v.id, v.document, v.number, coalesce(v.effective_from, v.created_at),
                          v.expires_at, d.collection, v.acl, v.source_type, v.title, d.doc_id
                   FROM kb_versions v JOIN kb_documents d ON d.id = v.document ORDER BY v.id"""
            ).fetchall()
            chunks = conn.execute(
                "SELECT id, version, terms, vector FROM kb_chunks ORDER BY id"
            ).fetchall()
            collections = conn.execute(
                "SELECT name, profile, vector FROM kb_collections ORDER BY name"
            ).fetchall()
        finally:
            conn.execute("COMMIT")
        row_of = {v[0]: i for i, v in enumerate(versions)}
        matrix = np.zeros((len(chunks), dim), dtype=np.float32)
        has_vector = np.zeros(len(chunks), dtype=np.bool_)
        for i, chunk in enumerate(chunks):
            if chunk[3] is not None:
                vector = np.frombuffer(chunk[3], dtype=np.float32)
                if vector.size == dim:
                    matrix[i] = vector
                    has_vector[i] = True
        return KBSnapshot(
            generation=generation,
            chunk_ids=np.array([c[0] for c in chunks], dtype=np.int64),
            chunk_version=np.array([row_of[c[1]] for c in chunks], dtype=np.int64),
            chunk_terms=[c[2] for c in chunks],
            matrix=matrix,
            has_vector=has_vector,
            version_ids=np.array([v[0] for v in versions], dtype=np.int64),
            version_doc=np.array([v[1] for v in versions], dtype=np.int64),
            version_number=np.array([v[2] for v in versions], dtype=np.int64),
            version_effective=np.array([v[3] for v in versions], dtype=np.float64),
            version_expires=np.array(
                [np.inf if v[4] is None else v[4] for v in versions], dtype=np.float64
            ),
            version_collection=[v[5] for v in versions],
            version_acl=[tuple(json.loads(v[6])) for v in versions],
            version_source=[v[7] for v in versions],
            version_title=[v[8] for v in versions],
            version_doc_id=[v[9] for v in versions],
            collections={
                name: (
                    profile,
                    None
                    if blob is None or len(blob) != dim * 4
                    else np.frombuffer(blob, dtype=np.float32),
                )
                for name, profile, blob in collections
            },
        )

    def chunks(self, chunk_ids: Sequence[int]) -> dict[int, tuple[str, str, tuple[str, ...]]]:
        """(text, prefix, section path) of chunks by id; the prefix ends with the LLM-written
        context when there is one."""
        if not chunk_ids:
            return {}
        marks = ",".join("?" * len(chunk_ids))
        rows = (
            self._db.get()
            .execute(
                f"SELECT id, text, prefix, section, context FROM kb_chunks WHERE id IN ({marks})",
                list(chunk_ids),
            )
            .fetchall()
        )
        return {
            r[0]: (r[1], " — ".join(p for p in (r[2], r[4]) if p), tuple(json.loads(r[3])))
            for r in rows
        }

    def counts(self) -> dict[str, int]:
        conn = self._db.get()
        return {
            "kb_collections": conn.execute("SELECT count(*) FROM kb_collections").fetchone()[0],
            "kb_documents": conn.execute("SELECT count(*) FROM kb_documents").fetchone()[0],
            "kb_versions": conn.execute("SELECT count(*) FROM kb_versions").fetchone()[0],
            "kb_chunks": conn.execute("SELECT count(*) FROM kb_chunks").fetchone()[0],
            "kb_pending": conn.execute(
                "SELECT count(*) FROM kb_chunks WHERE vector IS NULL"
            ).fetchone()[0],
        }


def _bump(conn: sqlite3.Connection) -> None:
    conn.execute(
        """INSERT INTO kb_state(key, value) VALUES ('generation', 1)
           ON CONFLICT(key) DO UPDATE SET value = value + 1"""
    )


def _delete_document(conn: sqlite3.Connection, document: int) -> None:
    conn.execute(
        "DELETE FROM kb_chunks WHERE version IN (SELECT id FROM kb_versions WHERE document = ?)",
        (document,),
    )
    conn.execute("DELETE FROM kb_versions WHERE document = ?", (document,))
    conn.execute("DELETE FROM kb_documents WHERE id = ?", (document,))


def _version_info(row: Any) -> VersionInfo:
    created = epoch_to_datetime(row[10])
    assert created is not None
    return VersionInfo(
        doc_id=row[1],
        collection=row[2],
        version=row[3],
        title=row[4],
        source_type=row[5],
        acl=json.loads(row[6]),
        metadata=json.loads(row[7]),
        effective_from=epoch_to_datetime(row[8]),
        expires_at=epoch_to_datetime(row[9]),
        created_at=created,
        content_hash=row[11],
        chunks=row[15],
        reused_vectors=row[12],
        l0=row[13],
        l1=row[14],
    )
