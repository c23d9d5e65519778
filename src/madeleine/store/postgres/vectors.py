"""Nearest neighbours inside PostgreSQL: pgvector's HNSW index over every episode, searched
per user with ``hnsw.iterative_scan`` so the user filter never leaves fewer rows than asked.
The index lives with the data: nothing to sync, flush or rebuild in the process."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from madeleine.store.postgres.connection import Database
from madeleine.store.postgres.episodes import as_array

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
        """The HNSW query of the read path's port (``PgDense``): one copy of the SQL."""
        return PgDense(self._db).nearest(user_id, query, limit, None, None, exact=False)

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


class PgDense:
    """The storage port's ``DenseSearch``: the dense channel runs in PostgreSQL. A small user
    is scanned exactly (their rows by the user index, every distance computed); a large one
    goes through the HNSW index with iterative scans, so the user filter never leaves fewer
    rows than asked."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def nearest(
        self,
        user_id: str,
        query: npt.NDArray[np.float32],
        depth: int,
        time_range: tuple[float, float] | None,
        floor: float | None,
        exact: bool,
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        dim = int(query.shape[0])
        vector = np.asarray(query, dtype=np.float32)
        where = "user_id = %(user)s"
        params: dict[str, Any] = {"user": user_id, "q": vector, "depth": depth}
        if time_range is not None:
            where += " AND occurred_at >= %(start)s AND occurred_at <= %(end)s"
            params |= {"start": time_range[0], "end": time_range[1]}
        with self._db.connect() as conn:
            if exact:
                # every row's distance: the top depth, and any further one above the floor
                params["floor"] = -np.inf if floor is None else float(floor)
                rows = conn.execute(
                    f"""SELECT id, similarity FROM (
                          SELECT id, -(vector <#> %(q)s) AS similarity,
                                 row_number() OVER (ORDER BY vector <#> %(q)s, id) AS rank
                          FROM episodes WHERE {where}) ranked
                        WHERE rank <= %(depth)s OR similarity > %(floor)s
                        ORDER BY similarity DESC, id""",
                    params,
                ).fetchall()
            else:
                conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
                conn.execute(f"SET LOCAL hnsw.ef_search = {max(EF_SEARCH, min(depth, 1000))}")
                rows = conn.execute(
                    f"""SELECT id, -(vector::vector({dim}) <#> %(q)s::vector({dim})) AS similarity
                        FROM episodes WHERE {where}
                        ORDER BY vector::vector({dim}) <#> %(q)s::vector({dim})
                        LIMIT %(depth)s""",
                    params,
                ).fetchall()
                rows.sort(key=lambda r: (-float(r[1]), int(r[0])))
        return (
            np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows)),
            np.fromiter((r[1] for r in rows), dtype=np.float32, count=len(rows)),
        )

    def vectors(self, ids: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
        wanted = [int(i) for i in ids]
        with self._db.connect() as conn:
            rows = conn.execute(
                "SELECT id, vector FROM episodes WHERE id = ANY(%s)", (wanted,)
            ).fetchall()
        found = {int(r[0]): as_array(r[1]) for r in rows}
        dim = next((v.size for v in found.values()), 0)
        out = np.zeros((len(wanted), dim), dtype=np.float32)
        for i, episode in enumerate(wanted):
            if episode in found:
                out[i] = found[episode]
        return out
