"""A process killed at random points of add / index / delete / forget loses nothing it
acknowledged, keeps nothing it deleted, and leaves a store that checks clean (issue 13)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from madeleine import Memory
from tests.fakes import HashingEmbedder

ROOT = Path(__file__).resolve().parents[2]

WORKLOAD = r"""
import os, sys
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from madeleine import Memory
from tests.fakes import HashingEmbedder

path, journal_path = sys.argv[1], Path(sys.argv[2])
journal = open(journal_path, "a", buffering=1)

def note(line):
    journal.write(line + "\n"); journal.flush(); os.fsync(journal.fileno())

start = sum(1 for line in open(journal_path) if line.startswith("ack add"))
with Memory(path, embedder=HashingEmbedder(), background=False, lease_seconds=0.5) as memory:
    for n in range(start, start + 10_000):
        note(f"intent add m{n}")
        memory.add([{"content": f"note {n} zqx{n}marker", "id": f"m{n}"}], user_id="keep")
        memory.add([{"content": f"scratch {n}", "id": f"t{n}"}], user_id="scratch")
        note(f"ack add m{n}")
        if n % 3 == 0:
            memory.index_pending()
        if n % 5 == 4:
            note(f"intent delete m{n - 2}")
            memory.delete_message(f"m{n - 2}", user_id="keep")
            note(f"ack delete m{n - 2}")
        if n % 7 == 6:
            note("intent forget scratch")
            memory.forget_user("scratch")
            note("ack forget scratch")
"""


def test_random_kills_lose_nothing_acknowledged(tmp_path: Path, store_location: str) -> None:
    path, journal = store_location, tmp_path / "journal"
    journal.touch()
    rng = random.Random(13)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    for _ in range(4):
        written = len(journal.read_text().splitlines())
        child = subprocess.Popen(
            [sys.executable, "-c", WORKLOAD, path, str(journal), str(ROOT)],
            env=env,
            stderr=subprocess.PIPE,
        )
        # on a busy machine starting up takes seconds: kill at a random moment of the work,
        # not of the start-up
        deadline = time.monotonic() + 60
        while (
            len(journal.read_text().splitlines()) == written
            and child.poll() is None
            and time.monotonic() < deadline
        ):
            time.sleep(0.05)
        time.sleep(rng.uniform(0.5, 2.0))
        child.send_signal(signal.SIGKILL)
        child.wait()
    lines = journal.read_text().splitlines()
    acked = {line.split()[-1] for line in lines if line.startswith("ack add")}
    deleting = {line.split()[-1] for line in lines if line.startswith("intent delete")}
    deleted = {line.split()[-1] for line in lines if line.startswith("ack delete")}
    assert len(acked) > 20, "the workload ran"
    with Memory(path, embedder=HashingEmbedder(), lease_seconds=0.5) as memory:
        assert memory.wait(timeout=60) is True
        report = memory.check()
        assert report["ok"] is True, report
        present = {e["external_id"] for e in memory.export_user("keep")["events"]}
        assert acked - deleting <= present, "an acknowledged message was lost"
        assert not deleted & present, "a deleted message came back"
        for message_id in sorted(acked - deleting)[-5:]:
            marker = f"zqx{message_id[1:]}marker"
            hits = memory.search(marker, user_id="keep", channels=["bm25"])
            assert any(message_id in h.source_ids for h in hits), "acknowledged but not indexed"
