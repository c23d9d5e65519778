"""Crash recovery and concurrent writers, with real processes against one store."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from madeleine import Memory
from madeleine.embed.base import Embedder

INGEST_SCRIPT = textwrap.dedent(
    """
    import sys
    from madeleine import Memory

    path, user, prefix, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    with Memory(path) as memory:
        for i in range(count):
            memory.add(
                [{"content": f"{prefix} note {i}: the weather was mild and I walked {i} km",
                  "id": f"{prefix}-{i}"}],
                user_id=user, session_id=f"s{i // 10}",
            )
            print(f"{prefix}-{i}", flush=True)  # acknowledged: add() returned
        memory.wait()
    print("DONE", flush=True)
    """
)


def _spawn(tmp_path: Path, *args: str, lease: str | None = None) -> subprocess.Popen[str]:
    script = tmp_path / "ingest.py"
    script.write_text(INGEST_SCRIPT)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    if lease is not None:  # how long the child's claims outlive it
        env["MADELEINE_LEASE_SECONDS"] = lease
    return subprocess.Popen(
        [sys.executable, str(script), *args], stdout=subprocess.PIPE, text=True, env=env
    )


def _assert_indexed_exactly_once(memory: Memory, expected_ids: set[str], user_id: str) -> None:
    exported = memory.export_user(user_id)
    event_ids = [e["external_id"] for e in exported["events"]]
    assert len(event_ids) == len(set(event_ids))
    assert expected_ids <= set(event_ids)
    episode_sources = [s for e in exported["episodes"] for s in e["source_ids"]]
    assert sorted(episode_sources) == sorted(event_ids)  # each message indexed exactly once
    integrity = memory.integrity()
    assert integrity["episodes"] == integrity["vectors"] == integrity["fts"]
    assert integrity["orphan_episodes"] == 0 and integrity["events_without_episode"] == 0


def test_sigkill_mid_ingest_loses_no_acknowledged_message(
    tmp_path: Path, store_location: str, embedder: Embedder
) -> None:
    store = store_location
    # a short lease: the batch the child was indexing when killed is retried within seconds
    process = _spawn(tmp_path, store, "u1", "k", "400", lease="1.0")
    acknowledged: list[str] = []
    assert process.stdout is not None
    deadline = time.monotonic() + 120
    while len(acknowledged) < 60 and time.monotonic() < deadline:
        line = process.stdout.readline().strip()
        if line and line != "DONE":
            acknowledged.append(line)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    assert len(acknowledged) >= 60
    # read what the child printed before it died: those were acknowledged too
    acknowledged += [line.strip() for line in process.stdout if line.strip() != "DONE"]

    with Memory(store, embedder=embedder, lease_seconds=1.0) as memory:
        time.sleep(1.1)  # let the dead worker's claims expire
        assert memory.wait(timeout=180)
        _assert_indexed_exactly_once(memory, set(acknowledged), "u1")
        hit = memory.search("walked 5 km", user_id="u1", limit=50)
        assert "k-5" in [s for h in hit for s in h.source_ids]


def test_two_processes_write_concurrently(
    tmp_path: Path, store_location: str, embedder: Embedder
) -> None:
    store = store_location
    Memory(store, embedder=embedder).close()  # create the schema first, like a deployment would
    first = _spawn(tmp_path, store, "shared", "p", "60")
    second = _spawn(tmp_path, store, "shared", "q", "60")
    outputs = [first.communicate(timeout=300)[0], second.communicate(timeout=300)[0]]
    assert first.returncode == 0 and second.returncode == 0
    for output in outputs:
        assert output.strip().endswith("DONE")
    with Memory(store, embedder=embedder) as memory:
        assert memory.wait(timeout=120)
        expected = {f"p-{i}" for i in range(60)} | {f"q-{i}" for i in range(60)}
        _assert_indexed_exactly_once(memory, expected, "shared")
        assert memory.stats()["events"] == 120
        assert json.dumps(memory.stats())  # stats stay serializable
