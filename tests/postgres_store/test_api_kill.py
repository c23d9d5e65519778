"""An API process killed with SIGKILL right after acknowledging adds loses none of them: the
add commits the message and its outbox row before the answer leaves, and a worker indexes
them afterwards, each exactly once. Runs a real ``madeleine serve`` on PostgreSQL (+ Redis
when installed), with indexing left to a separate ``madeleine worker``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import psycopg
import pytest
from cryptography.fernet import Fernet

from madeleine import Memory
from madeleine.bench.serve import free_port, start_server
from madeleine.embed.base import Embedder
from madeleine.store.postgres.tenants import tenant_namespace as tenant_schema

ROOT = Path(__file__).resolve().parents[2]


def test_a_killed_api_process_loses_no_acknowledged_add(
    tmp_path: Path,
    pg_url: str,
    pg_schema: str,
    embedder: Embedder,
    request: pytest.FixtureRequest,
) -> None:
    vault_key = Fernet.generate_key().decode()
    env = {
        "PYTHONPATH": str(ROOT / "src"),
        "MADELEINE_STORE": pg_url,
        "MADELEINE_STORE_SCHEMA": pg_schema,
        "MADELEINE_VAULT_KEY": vault_key,
        "MADELEINE_BACKGROUND": "false",  # the API only logs; the worker indexes
    }
    try:
        env["MADELEINE_REDIS_URL"] = request.getfixturevalue("redis_url")
        env["MADELEINE_REDIS_PREFIX"] = request.getfixturevalue("redis_prefix")
    except pytest.skip.Exception:
        pass  # PostgreSQL alone
    port = free_port()
    server = start_server(tmp_path / "data", port, {"k" * 24: "acme"}, env=env)
    acknowledged: list[str] = []
    stop = threading.Event()

    def client() -> None:
        with httpx.Client(
            base_url=f"http://127.0.0.1:{port}",
            headers={"Authorization": "Bearer " + "k" * 24},
            timeout=30,
        ) as http:
            n = 0
            while not stop.is_set():
                body = {
                    "user_id": "u",
                    "messages": [{"content": f"order {n} shipped", "id": f"m{n}"}],
                }
                try:
                    response = http.post("/v1/memories", json=body)
                except httpx.HTTPError:
                    return  # the server is gone
                if response.status_code == 200:
                    acknowledged.append(f"m{n}")
                n += 1

    threads = [threading.Thread(target=client) for _ in range(3)]
    for thread in threads:
        thread.start()
    try:
        while len(acknowledged) < 40 and server.poll() is None:
            threading.Event().wait(0.05)
        server.send_signal(signal.SIGKILL)  # adds are in flight
        server.wait(timeout=30)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
        if server.poll() is None:
            server.kill()
    assert len(acknowledged) >= 40

    worker = subprocess.run(
        [sys.executable, "-m", "madeleine.cli", "worker", "--tenants", "--once"],
        env={**os.environ, **env, "MADELEINE_DATA": ""},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert worker.returncode == 0, worker.stderr
    with Memory(
        pg_url,
        embedder=embedder,
        store_schema=tenant_schema(pg_schema, "acme"),
        vault_key=vault_key,
        background=False,
    ) as memory:
        assert memory.wait(timeout=120)
        exported = memory.export_user("u")
        ids = [e["external_id"] for e in exported["events"]]
        assert set(acknowledged) <= set(ids), "an acknowledged add was lost"
        assert len(ids) == len(set(ids))
        sources = sorted(s for e in exported["episodes"] for s in e["source_ids"])
        assert sources == sorted(ids)  # every logged message indexed exactly once
        integrity = memory.integrity()
        assert integrity["episodes"] == integrity["vectors"] == integrity["fts"] == len(ids)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {tenant_schema(pg_schema, 'acme')} CASCADE")
