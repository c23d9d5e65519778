"""``madeleine worker`` processes sharing one PostgreSQL store: every acknowledged message
indexed exactly once, even when a worker is killed mid-batch; ``madeleine migrate``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from cryptography.fernet import Fernet

from madeleine import Memory
from madeleine.embed.base import Embedder

ROOT = Path(__file__).resolve().parents[2]


def _env(pg_url: str, schema: str, key: str) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(ROOT / "src"),
        "MADELEINE_STORE": pg_url,
        "MADELEINE_STORE_SCHEMA": schema,
        "MADELEINE_VAULT_KEY": key,
        "MADELEINE_WORKER_BATCH": "4",
        "MADELEINE_LEASE_SECONDS": "3",
        "MADELEINE_DATA": "",
    }


def test_migrate_command(pg_url: str, pg_schema: str) -> None:
    env = _env(pg_url, pg_schema, Fernet.generate_key().decode())
    command = [sys.executable, "-m", "madeleine.cli", "migrate"]
    first = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    assert f"{pg_schema}: 0001_log" in first.stdout
    again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert "nothing to apply" in again.stdout, again.stdout + again.stderr


def test_workers_share_the_outbox_and_survive_a_kill(
    pg_url: str, pg_schema: str, embedder: Embedder
) -> None:
    key = Fernet.generate_key().decode()
    env = _env(pg_url, pg_schema, key)
    messages = [
        {"role": "user", "id": f"m{i}", "content": f"Note {i}: the meeting about topic {i % 7}."}
        for i in range(80)
    ]
    with Memory(
        pg_url, embedder=embedder, store_schema=pg_schema, vault_key=key, background=False
    ) as api:
        assert len(api.add(messages, user_id="u1").added) == 80  # acknowledged: in the log
        workers = [
            subprocess.Popen(
                [sys.executable, "-m", "madeleine.cli", "worker"],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            for _ in range(2)
        ]
        try:
            deadline = time.monotonic() + 120
            while api.stats()["pending_jobs"] > 60 and time.monotonic() < deadline:
                time.sleep(0.2)
            workers[0].send_signal(signal.SIGKILL)  # mid-run: its claimed batch is leased
            while api.stats()["pending_jobs"] and time.monotonic() < deadline:
                time.sleep(0.3)
            stats = api.stats()
            assert stats["pending_jobs"] == 0 and stats["failed_jobs"] == 0
            assert stats["events"] == stats["episodes"] == 80  # each indexed exactly once
            assert api.check()["ok"]
            assert api.search("topic 3 meeting", user_id="u1")
        finally:
            for worker in workers:
                worker.kill()
                worker.wait(timeout=30)
