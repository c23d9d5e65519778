"""Knowledge-base tables on PostgreSQL: collections, documents, versions and chunks.

Semantics follow the embedded store (``store/sqlite/kb.py``): a version carries its
governance (ACL, validity); an identical chunk anywhere in the tenant lends its vector at
write time; every change moves ``generation`` (in the change's own transaction), which
tells the in-memory index to reload.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from psycopg.types.json import Jsonb

from madeleine.kb.records import (
    CollectionInfo,
    ContextJob,
    KBSnapshot,
    NewVersion,
    VersionInfo,
    epoch_to_datetime,
)
from madeleine.store.postgres.connection import Database
from madeleine.store.postgres.episodes import as_array

_VERSION_COLUMNS = """v.id, d.doc_id, d.collection, v.number, v.title, v.source_type, v.acl,
    v.metadata, v.effective_from, v.expires_at, v.created_at, v.content_hash, v.reused, v.l0,
    v.l1, (SELECT count(*) FROM kb_chunks c WHERE c.version = v.id)"""
_LATEST = "v.number = (SELECT max(number) FROM kb_versions w WHERE w.document = d.id)"


class PgKnowledge:
    def __init__(self, db: Database) -> None:
        self._db = db

    # -- collections --------------------------------------------------------------------------

    def ensure_collection(self, name: str, description: str | None) -> None:
        with self._db.connect() as conn:
            row = conn.execute(
                """INSERT INTO kb_collections(name, description, created_at)
                   VALUES (%s, %s, %s) ON CONFLICT DO NOTHING RETURNING 1""",
                (name, description or "", time.time()),
            ).fetchone()
            if row is not None:
                _bump(conn)
            elif description is not None:
                changed = conn.execute(
                    """UPDATE kb_collections SET description = %s, profile_stale = true
                       WHERE name = %s AND description != %s RETURNING 1""",
                    (description, name, description),
                ).fetchone()
                if changed is not None:
                    _bump(conn)

    def collections(self) -> list[CollectionInfo]:
        with self._db.connect() as conn:
            rows = conn.execute(
                f"""SELECT k.name, k.description, k.l0, k.l1,
                      (SELECT count(*) FROM kb_documents d WHERE d.collection = k.name),
                      (SELECT count(*) FROM kb_documents d JOIN kb_versions v
                         ON v.document = d.id JOIN kb_chunks c ON c.version = v.id
                       WHERE d.collection = k.name AND {_LATEST})
                    FROM kb_collections k ORDER BY k.name"""
            ).fetchall()
        return [CollectionInfo(r[0], r[1], int(r[4]), int(r[5]), r[2], r[3]) for r in rows]

    def delete_collection(self, name: str) -> int:
        """Remove a collection with every document in it; how many documents went."""
        with self._db.connect() as conn:
            documents = conn.execute(
                "DELETE FROM kb_documents WHERE collection = %s RETURNING id", (name,)
            ).fetchall()
            gone = conn.execute("DELETE FROM kb_collections WHERE name = %s", (name,)).rowcount
            if gone or documents:
                _bump(conn)
        return len(documents)

    def stale_profiles(self) -> list[tuple[str, str, list[tuple[str, str]]]]:
        with self._db.connect() as conn:
            stale = conn.execute(
                "SELECT name, description FROM kb_collections WHERE profile_stale ORDER BY name"
            ).fetchall()
            out = []
            for name, description in stale:
                documents = conn.execute(
                    f"""SELECT v.title, v.l0 FROM kb_documents d JOIN kb_versions v
                        ON v.document = d.id WHERE d.collection = %s AND {_LATEST}
                        ORDER BY d.id""",
                    (name,),
                ).fetchall()
                out.append((str(name), str(description), [(t, l0) for t, l0 in documents]))
        return out

    def set_profile(
        self, name: str, l0: str, l1: str, profile: str, vector: np.ndarray[Any, Any]
    ) -> None:
        with self._db.connect() as conn:
            conn.execute(
                """UPDATE kb_collections SET l0 = %s, l1 = %s, profile = %s, vector = %s,
                   profile_stale = false WHERE name = %s""",
                (l0, l1, profile, np.asarray(vector, dtype=np.float32), name),
            )
            _bump(conn)

    # -- documents and versions ---------------------------------------------------------------

    def add_version(self, version: NewVersion) -> VersionInfo:
        """Store a new version (the document is created with its first one); chunks whose
        ``embed_key`` is already embedded reuse that vector and its LLM-written context."""
        now = time.time()
        with self._db.connect() as conn:
            conn.execute(
                """INSERT INTO kb_documents(collection, doc_id, created_at)
                   VALUES (%s, %s, %s) ON CONFLICT DO NOTHING""",
                (version.collection, version.doc_id, now),
            )
            document = conn.execute(
                "SELECT id FROM kb_documents WHERE collection = %s AND doc_id = %s FOR UPDATE",
                (version.collection, version.doc_id),
            ).fetchone()[0]
            version_id = conn.execute(
                """INSERT INTO kb_versions(document, number, title, source_type, acl, metadata,
                   effective_from, expires_at, created_at, content_hash, l0, l1)
                   SELECT %s, coalesce(max(number), 0) + 1, %s, %s, %s, %s, %s, %s, %s, %s,
                          %s, %s FROM kb_versions WHERE document = %s
                   RETURNING id""",
                (
                    document,
                    version.title,
                    version.source_type,
                    list(version.acl),
                    Jsonb(version.metadata),
                    version.effective_from,
                    version.expires_at,
                    now,
                    version.content_hash,
                    version.l0,
                    version.l1,
                    document,
                ),
            ).fetchone()[0]
            reused = 0
            for chunk in version.chunks:
                known = conn.execute(
                    """SELECT vector, context, terms, embed_text FROM kb_chunks
                       WHERE embed_key = %s AND vector IS NOT NULL LIMIT 1""",
                    (chunk.embed_key,),
                ).fetchone()
                reused += known is not None
                terms, embed_text = chunk.terms, chunk.embed_text
                if known is not None and known[1]:
                    terms, embed_text = known[2], known[3]
                conn.execute(
                    """INSERT INTO kb_chunks(version, position, section, text, prefix, terms,
                       embed_text, embed_key, context, vector)
                       VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)""",
                    (
                        version_id,
                        chunk.position,
                        Jsonb(list(chunk.section)),
                        chunk.text,
                        chunk.prefix,
                        terms,
                        embed_text,
                        chunk.embed_key,
                        None if known is None else known[1],
                        None if known is None else known[0],
                    ),
                )
            conn.execute("UPDATE kb_versions SET reused = %s WHERE id = %s", (reused, version_id))
            conn.execute(
                "UPDATE kb_collections SET profile_stale = true WHERE name = %s",
                (version.collection,),
            )
            _bump(conn)
            found = conn.execute(
                f"""SELECT {_VERSION_COLUMNS} FROM kb_versions v JOIN kb_documents d
                    ON d.id = v.document WHERE v.id = %s""",
                (version_id,),
            ).fetchone()
        return _version_info(found)

    def versions(self, collection: str, doc_id: str) -> list[VersionInfo]:
        with self._db.connect() as conn:
            rows = conn.execute(
                f"""SELECT {_VERSION_COLUMNS} FROM kb_versions v JOIN kb_documents d
                    ON d.id = v.document WHERE d.collection = %s AND d.doc_id = %s
                    ORDER BY v.number""",
                (collection, doc_id),
            ).fetchall()
        return [_version_info(r) for r in rows]

    def documents(self, collection: str) -> list[VersionInfo]:
        """The latest version of each document of the collection, in insertion order."""
        with self._db.connect() as conn:
            rows = conn.execute(
                f"""SELECT {_VERSION_COLUMNS} FROM kb_versions v JOIN kb_documents d
                    ON d.id = v.document WHERE d.collection = %s AND {_LATEST}
                    ORDER BY d.id""",
                (collection,),
            ).fetchall()
        return [_version_info(r) for r in rows]

    def version_text(self, collection: str, doc_id: str, number: int) -> str:
        with self._db.connect() as conn:
            rows = conn.execute(
                """SELECT c.text FROM kb_chunks c JOIN kb_versions v ON v.id = c.version
                   JOIN kb_documents d ON d.id = v.document
                   WHERE d.collection = %s AND d.doc_id = %s AND v.number = %s
                   ORDER BY c.position""",
                (collection, doc_id, number),
            ).fetchall()
        return "\n\n".join(r[0] for r in rows)

    def delete_document(self, collection: str, doc_id: str) -> bool:
        with self._db.connect() as conn:
            row = conn.execute(
                "DELETE FROM kb_documents WHERE collection = %s AND doc_id = %s RETURNING id",
                (collection, doc_id),
            ).fetchone()
            if row is None:
                return False
            conn.execute(
                # the collection's abstracts quote the document: cleared now, rebuilt in the
                # background like any stale profile
                "UPDATE kb_collections SET l1 = '', profile = '', vector = NULL, "
                "profile_stale = true WHERE name = %s",
                (collection,),
            )
            _bump(conn)
        return True

    # -- indexing -----------------------------------------------------------------------------

    def pending(self, limit: int, *, situated_only: bool = False) -> list[tuple[int, str]]:
        situated = " AND context IS NOT NULL" if situated_only else ""
        with self._db.connect() as conn:
            rows = conn.execute(
                f"SELECT id, embed_text FROM kb_chunks WHERE vector IS NULL{situated} "
                "ORDER BY id LIMIT %s",
                (limit,),
            ).fetchall()
        return [(int(r[0]), str(r[1])) for r in rows]

    def uncontextualized(self, limit: int) -> list[ContextJob]:
        with self._db.connect() as conn:
            rows = conn.execute(
                """SELECT c.id, c.version, v.title, c.text, c.prefix, c.terms, c.embed_text
                   FROM kb_chunks c JOIN kb_versions v ON v.id = c.version
                   WHERE c.vector IS NULL AND c.context IS NULL ORDER BY c.id LIMIT %s""",
                (limit,),
            ).fetchall()
            documents: dict[int, str] = {}
            for version in sorted({int(r[1]) for r in rows}):
                parts = conn.execute(
                    "SELECT text FROM kb_chunks WHERE version = %s ORDER BY position", (version,)
                ).fetchall()
                documents[version] = "\n\n".join(p[0] for p in parts)
        return [
            ContextJob(
                chunk_id=int(r[0]),
                version=int(r[1]),
                title=r[2],
                document=documents[int(r[1])],
                text=r[3],
                prefix=r[4],
                terms=r[5],
                embed_text=r[6],
            )
            for r in rows
        ]

    def set_contexts(self, contexts: Sequence[tuple[int, str, str, str]]) -> None:
        if not contexts:
            return
        with self._db.connect() as conn:
            for chunk_id, context, terms, text in contexts:
                conn.execute(
                    """UPDATE kb_chunks SET context = %s, terms = %s, embed_text = %s
                       WHERE id = %s AND vector IS NULL""",
                    (context, terms, text, chunk_id),
                )
            _bump(conn)

    def pending_count(self) -> int:
        with self._db.connect() as conn:
            chunks = conn.execute("SELECT count(*) FROM kb_chunks WHERE vector IS NULL")
            waiting = int(chunks.fetchone()[0])
            profiles = conn.execute("SELECT count(*) FROM kb_collections WHERE profile_stale")
            return waiting + int(profiles.fetchone()[0])

    def set_vectors(self, vectors: Sequence[tuple[int, np.ndarray[Any, Any]]]) -> None:
        """Store computed vectors; an identical chunk still waiting gets the same one."""
        if not vectors:
            return
        with self._db.connect() as conn:
            for chunk_id, vector in vectors:
                conn.execute(
                    """UPDATE kb_chunks SET vector = %s WHERE vector IS NULL AND embed_key =
                       (SELECT embed_key FROM kb_chunks WHERE id = %s)""",
                    (np.asarray(vector, dtype=np.float32), chunk_id),
                )
            _bump(conn)

    def reset_vectors(self) -> None:
        with self._db.connect() as conn:
            reset_kb_vectors(conn)

    # -- reading --------------------------------------------------------------------------------

    def generation(self) -> int:
        with self._db.connect() as conn:
            row = conn.execute("SELECT generation FROM kb_state").fetchone()
        return int(row[0])

    def snapshot(self, dim: int) -> KBSnapshot:
        with self._db.connect() as conn:  # one transaction: one consistent snapshot
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            generation = conn.execute("SELECT generation FROM kb_state").fetchone()[0]
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
        row_of = {v[0]: i for i, v in enumerate(versions)}
        matrix = np.zeros((len(chunks), dim), dtype=np.float32)
        has_vector = np.zeros(len(chunks), dtype=np.bool_)
        for i, chunk in enumerate(chunks):
            if chunk[3] is not None:
                vector = as_array(chunk[3])
                if vector.size == dim:
                    matrix[i] = vector
                    has_vector[i] = True
        profiles: dict[str, tuple[str, Any]] = {}
        for name, profile, vector in collections:
            array = None if vector is None else as_array(vector)
            profiles[name] = (profile, array if array is not None and array.size == dim else None)
        return KBSnapshot(
            generation=int(generation),
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
            version_acl=[tuple(v[6]) for v in versions],
            version_source=[v[7] for v in versions],
            version_title=[v[8] for v in versions],
            version_doc_id=[v[9] for v in versions],
            collections=profiles,
        )

    def chunks(self, chunk_ids: Sequence[int]) -> dict[int, tuple[str, str, tuple[str, ...]]]:
        if not chunk_ids:
            return {}
        with self._db.connect() as conn:
            rows = conn.execute(
                """SELECT id, text, prefix, section, context FROM kb_chunks
                   WHERE id = ANY(%s)""",
                (list(chunk_ids),),
            ).fetchall()
        return {
            int(r[0]): (r[1], " — ".join(p for p in (r[2], r[4]) if p), tuple(r[3])) for r in rows
        }

    def counts(self) -> dict[str, int]:
        with self._db.connect() as conn:
            row = conn.execute(
                """SELECT (SELECT count(*) FROM kb_collections),
                   (SELECT count(*) FROM kb_documents), (SELECT count(*) FROM kb_versions),
                   (SELECT count(*) FROM kb_chunks),
                   (SELECT count(*) FROM kb_chunks WHERE vector IS NULL)"""
            ).fetchone()
        names = ("kb_collections", "kb_documents", "kb_versions", "kb_chunks", "kb_pending")
        return {name: int(value) for name, value in zip(names, row, strict=True)}


def reset_kb_vectors(conn: Any) -> None:
    """Forget every vector (the embedder changed): the indexer embeds everything again."""
    conn.execute("UPDATE kb_chunks SET vector = NULL")
    conn.execute("UPDATE kb_collections SET vector = NULL, profile_stale = true")
    _bump(conn)


def _bump(conn: Any) -> None:
    conn.execute("UPDATE kb_state SET generation = generation + 1")


def _version_info(row: Any) -> VersionInfo:
    created = epoch_to_datetime(row[10])
    assert created is not None
    return VersionInfo(
        doc_id=row[1],
        collection=row[2],
        version=int(row[3]),
        title=row[4],
        source_type=row[5],
        acl=list(row[6]),
        metadata=dict(row[7]),
        effective_from=epoch_to_datetime(row[8]),
        expires_at=epoch_to_datetime(row[9]),
        created_at=created,
        content_hash=row[11],
        chunks=int(row[15]),
        reused_vectors=int(row[12]),
        l0=row[13],
        l1=row[14],
    )
