"""Nearest neighbours inside PostgreSQL: pgvector's HNSW index over every episode, searched
per user with ``hnsw.iterative_scan`` so the user filter never leaves fewer rows than asked.
The index lives with the data: nothing to sync, flush or rebuild in the process."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from madeleine.store.postgres.connection import Database

EF_SEARCH = 100


def hnsw_index_sql(dim: int) -> str:
    """The HNSW index for vectors of ``dim`` (inner product: vectors are normalized)."""
    return (
        f"CREATE INDEX IF NOT EXISTS episodes_hnsw_{dim} ON episodes "
        f"USING hnsw ((vector::vector({dim})) vector_ip_ops)"
    )


def drop_other_hnsw_indexes(conn: Any, schema: str, dim: int) -> None:
    """An index built for another dimension refuses the new vectors: drop it."""
    rows = conn.execute(
        """SELECT indexname FROM pg_indexes WHERE schemaname = %s
           AND indexname LIKE 'episodes_hnsw_%%' AND indexname != %s""",
        (schema, f"episodes_hnsw_{dim}"),
    ).fetchall()
    for (name,) in rows:
        conn.execute(f'DROP INDEX IF EXISTS "{name}"')


class PgVectors:
    """The storage port's ``VectorIndex`` for users with at least ``threshold`` episodes."""

    def __init__(self, db: Database, threshold: int) -> None:
        self._db = db
        self.threshold = threshold

    def search(
        self,
        user_id: str,
        generation: tuple[int, int],
        ids: npt.NDArray[np.int64],
        matrix: npt.NDArray[np.float32],
        query: npt.NDArray[np.float32],
        limit: int,
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        dim = int(query.shape[0])
        vector = np.asarray(query, dtype=np.float32)
        with self._db.connect() as conn:
            conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            conn.execute(f"SET LOCAL hnsw.ef_search = {max(EF_SEARCH, limit)}")
            rows = conn.execute(
                f"""SELECT id, -(vector::vector({dim}) <#> %s::vector({dim})) AS similarity
                    FROM episodes WHERE user_id = %s
                    ORDER BY vector::vector({dim}) <#> %s::vector({dim}) LIMIT %s""",
                (vector, user_id, vector, limit),
            ).fetchall()
        rows.sort(key=lambda r: -float(r[1]))  # relaxed order: sort the few found
        return (
            np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows)),
            np.fromiter((r[1] for r in rows), dtype=np.float32, count=len(rows)),
        )

    def sync(
        self,
        user_id: str,
        generation: tuple[int, int],
        ids: npt.NDArray[np.int64],
        matrix: npt.NDArray[np.float32],
    ) -> None:
        """Nothing to do: the database keeps its index with every write."""

    def flush(self) -> None:
        """Nothing to do: the index is in the database."""

    def forget(self, user_id: str) -> None:
        """Nothing to do: deleting the rows removed them from the index."""

    def clear(self) -> None:
        """Nothing to do: deleting the rows removed them from the index."""
