from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from madeleine import Memory
from madeleine.bench.scale import (
    USER_ID,
    PooledEmbedder,
    generate_user,
    pool_count,
    run_scale,
    stage_totals,
)
from madeleine.embed.base import Embedder


def test_generator_is_deterministic_and_varied() -> None:
    user = generate_user(1000, seed=3, queries=20, pool_size=60)
    again = generate_user(1000, seed=3, queries=20, pool_size=60)
    assert user.turns == 1000
    assert [t.content for s in user.sessions for t in s.turns] == [
        t.content for s in again.sessions for t in s.turns
    ]
    assert len(user.pool) == pool_count(60)
    contents = {t.content for s in user.sessions for t in s.turns}
    assert len(contents) > 600  # siblings of the base sentences, not copies
    times = [t.timestamp for s in user.sessions for t in s.turns]
    assert times == sorted(times)
    assert (times[-1] - times[0]).days > 900
    planted = [q for q in user.queries if q.kind == "planted"]
    assert len(user.queries) == 20 and len(planted) == 5
    by_id = {t.id: t for s in user.sessions for t in s.turns}
    assert all(q.target in by_id and by_id[q.target].base is None for q in planted)


def test_pooled_embedder(embedder: Embedder) -> None:
    pooled = PooledEmbedder(embedder, {"Dana: I booked the Casa Azul in Porto.": 1}, seed=7)
    assert (pooled.name, pooled.dim) == (embedder.name, embedder.dim)
    assert pooled.similarity_range == embedder.similarity_range
    base = embedder.embed_passages(["Dana: ok thanks!", "Dana: I booked the Casa Azul in Porto."])
    pooled.set_pool(base)
    known = "[8 May 2023] Dana: I booked the Casa Azul in Porto.\n(replying to assistant: Hi)"
    unknown = "[8 May 2023] Dana: My locker code at Peak Fitness is XK-2231."
    vectors = pooled.embed_passages([known, unknown, known])
    assert vectors.shape == (3, embedder.dim) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert 0.9 < float(vectors[0] @ base[1]) < 0.9999  # near its base, not equal
    assert np.array_equal(vectors[0], vectors[2])  # seeded by the text
    assert np.allclose(vectors[1], embedder.embed_passages([unknown])[0], atol=1e-5)
    assert (pooled.pooled, pooled.embedded) == (2, 1)
    assert np.allclose(pooled.embed_queries(["where"]), embedder.embed_queries(["where"]))


def test_run_scale_small(tmp_path: Path, embedder: Embedder) -> None:
    seen: dict[str, int] = {}

    def progress(stage: str, n: int) -> None:
        seen[stage] = seen.get(stage, 0) + n

    workdir = tmp_path / "scale"
    result = run_scale(
        600,
        real=100,
        workdir=workdir,
        embedder=embedder,
        queries=8,
        seed=1,
        full_embed=False,
        progress=progress,
        pool_size=40,
        memory_options={"ann_threshold": 500},
    )
    assert seen == stage_totals(600, real=100, queries=8, pool_size=40)
    assert (result.real.turns, result.bulk.turns) == (100, 500)
    assert result.stored["episodes"] == 600 and result.consistent
    assert result.pool_texts == pool_count(40) and result.bulk_fallbacks >= 1  # planted facts
    assert len(result.latencies_ms) == 8 and all(ms > 0 for ms in result.latencies_ms)
    assert {"dense", "bm25", "total"} <= set(result.stage_ms)
    assert result.planted == 2 and result.ann_used and result.ann_bytes > 0
    assert result.db_bytes > 0 and result.rss_after_search > 0
    table = result.table()
    assert "turns/s" in table and "p50 / p95 / p99" in table and "without embedding" in table
    assert [len(v) for v in result.graph_cost_ms.values()] == [8, 8]
    assert "with / without the graph channel (interleaved)" in table
    with Memory(workdir, embedder=embedder, background=False) as memory:
        assert memory.stats()["episodes"] == 600
        assert memory.search("Dana", user_id=USER_ID, limit=3)


def test_cli_bench_scale(capsys: pytest.CaptureFixture[str]) -> None:
    from madeleine.cli import main

    args = ["--episodes", "200", "--real", "20", "--queries", "4", "--pool-size", "20"]
    assert main(["bench", "scale", *args]) == 0
    out = capsys.readouterr().out
    assert "p50" in out and "200" in out
    assert main(["bench", "scale", "--episodes", "0"]) == 2
    assert "positive" in capsys.readouterr().err


def test_run_scale_reuses_a_built_store(tmp_path: Path, embedder: Embedder) -> None:
    workdir = tmp_path / "scale"
    options: dict[str, Any] = {
        "real": 30,
        "workdir": workdir,
        "embedder": embedder,
        "queries": 4,
        "seed": 2,
        "pool_size": 20,
        "memory_options": {"ann_threshold": 100},
    }
    built = run_scale(300, **options)
    assert not built.reused and built.embed_alone.turns >= 30
    assert built.ingest_ratio > 0
    with pytest.raises(ValueError, match="not empty"):
        run_scale(300, **{**options, "reuse": False})
    with pytest.raises(ValueError, match="does not hold"):
        run_scale(300, **{**options, "seed": 3, "reuse": True})
    again = run_scale(300, **{**options, "reuse": True})
    assert again.reused and again.bulk.turns == 0 and again.real.turns == 30
    assert again.stored["episodes"] == 300 and again.consistent
    assert again.embed_alone.turns >= 30 and len(again.latencies_ms) == 4
    table = again.table()
    assert "ingest / embedder" in table and "reused" in table
