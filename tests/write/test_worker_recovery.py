"""No silent loss: failing work is dead-lettered and reported, a dead worker's work is
retaken within one lease, and a live worker keeps its claim however long it works."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from madeleine import Memory
from madeleine.embed.base import Vectors
from madeleine.store import open_store
from tests.fakes import HashingEmbedder


class FlakyEmbedder(HashingEmbedder):
    """Fails on passages that contain BOOM while ``broken``; sleeps ``delay`` per call."""

    def __init__(self) -> None:
        super().__init__()
        self.broken = True
        self.delay = 0.0

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        time.sleep(self.delay)
        if self.broken and any("BOOM" in t for t in texts):
            raise RuntimeError("embedding service unavailable")
        return super().embed_passages(texts)


def test_a_job_that_keeps_failing_is_reported_and_can_be_retried(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    embedder = FlakyEmbedder()
    with Memory(tmp_path / "m", embedder=embedder, background=False) as memory:
        memory.add([{"content": "BOOM goes the dynamite"}], user_id="u")
        assert memory.wait() is False
        assert "could not be indexed" in caplog.text
        stats = memory.stats()
        assert stats["failed_jobs"] == 1 and stats["pending_jobs"] == 0
        assert "embedding service unavailable" in stats["failures"][0]["error"]
        assert memory.integrity()["events_without_episode"] == 1  # not "consistent"
        assert memory.search("dynamite", user_id="u") == []

        embedder.broken = False
        assert memory.retry_failed() == 1
        assert memory.wait() is True
        assert memory.search("dynamite", user_id="u")
        assert memory.stats()["failed_jobs"] == 0
        assert memory.integrity()["events_without_episode"] == 0


def test_a_dead_workers_claim_is_taken_over_within_one_lease(tmp_path: Path) -> None:
    path = tmp_path / "m"
    with Memory(path, embedder=HashingEmbedder(), background=False, lease_seconds=0.5) as memory:
        memory.add([{"content": "claimed by a process that then died"}], user_id="u")
    dead = open_store(path)
    assert len(dead.claim_jobs("dead-worker", 10, 0.5)) == 1  # and never renewed
    dead.close()
    with Memory(path, embedder=HashingEmbedder(), lease_seconds=0.5) as memory:
        started = time.monotonic()
        assert memory.wait(timeout=10) is True
        assert time.monotonic() - started < 5  # one lease, not the old 120 s
        assert memory.search("process", user_id="u")


def test_a_live_worker_keeps_its_claim_while_it_works(tmp_path: Path) -> None:
    path = tmp_path / "m"
    slow = FlakyEmbedder()
    slow.broken, slow.delay = False, 3.0  # three leases long
    with (
        Memory(path, embedder=slow, background=False, lease_seconds=1.0) as busy,
        Memory(path, embedder=HashingEmbedder(), background=False, lease_seconds=1.0) as other,
    ):
        busy.add([{"content": "a slow batch"}], user_id="u")
        worker = threading.Thread(target=busy.index_pending)
        worker.start()
        time.sleep(2.0)  # past two leases: without renewal the job would be up for grabs
        assert other.index_pending() == 0
        worker.join()
        assert busy.integrity()["events_without_episode"] == 0
        assert busy.stats()["episodes"] == 1  # indexed exactly once
