"""``madeleine bench scale --store postgresql://…``: the synthetic user built in a schema
named after the parameters, measured, kept for ``--reuse`` and refused without it."""

from __future__ import annotations

from typing import Any

import pytest

from madeleine.bench.scale import run_scale
from madeleine.embed.base import Embedder
from madeleine.store.postgres.tenants import drop_schema


def test_scale_on_postgres_builds_measures_and_reuses(pg_url: str, embedder: Embedder) -> None:
    options: dict[str, Any] = {
        "real": 40,
        "store": pg_url,
        "embedder": embedder,
        "queries": 4,
        "seed": 7,
        "pool_size": 20,
        "memory_options": {"ann_threshold": 100},
    }
    built = run_scale(300, **options)
    schema = next(n for n in built.notes if "schema" in n).split()[4]
    try:
        assert built.stored["episodes"] == 300 and built.consistent and not built.reused
        assert built.planted >= 1
        assert built.ann_used and built.ann_bytes > 0  # the HNSW index, in the database
        assert len(built.latencies_ms) == 4 and "p50 / p95 / p99" in built.table()
        with pytest.raises(ValueError, match="--reuse"):
            run_scale(300, **options)
        again = run_scale(300, **{**options, "reuse": True})
        assert again.reused and again.bulk.turns == 0 and again.real.turns == 40
        assert again.stored["episodes"] == 300 and again.consistent
    finally:
        drop_schema(pg_url, schema)
    with pytest.raises(ValueError, match="postgresql://"):
        run_scale(300, **{**options, "store": "mysql://nope"})
