"""A store whose files cannot be written (a mounted snapshot, another account's store) opens
for reading; writes are refused with a clear error and nothing on disk changes (issue 13)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from madeleine import Memory, StoreReadOnlyError
from tests.fakes import HashingEmbedder

pytestmark = pytest.mark.sqlite_only  # the embedded store's own files


def _fingerprint(path: Path) -> dict[str, str]:
    """The store's own files (SQLite may leave its empty -wal / -shm coordination files)."""
    return {
        name: hashlib.sha256((path / name).read_bytes()).hexdigest()
        for name in ("memory.db", "vault.key")
    }


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    path = tmp_path / "m"
    with Memory(path, embedder=HashingEmbedder(), background=False) as memory:
        memory.add(
            [
                {"content": "My email is mina@example.com", "id": "e"},
                {"content": "I live in Lisbon near the river.", "id": "l"},
            ],
            user_id="mina",
        )
        memory.wait()
    return path


def test_a_read_only_store_answers_reads_and_refuses_writes(snapshot: Path) -> None:
    before = _fingerprint(snapshot)
    with Memory(snapshot, embedder=HashingEmbedder(), read_only=True) as memory:
        hits = memory.search("where does Mina live?", user_id="mina")
        assert any("Lisbon" in h.text for h in hits)
        assert "mina@example.com" in memory.export_user("mina")["events"][0]["content"]
        assert memory.wait() is True
        assert memory.check()["ok"] is True
        with pytest.raises(StoreReadOnlyError, match="read-only"):
            memory.add([{"content": "hello"}], user_id="mina")
        with pytest.raises(StoreReadOnlyError):
            memory.delete_message("l", user_id="mina")
        with pytest.raises(StoreReadOnlyError):
            memory.forget_user("mina")
    assert _fingerprint(snapshot) == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write a read-only directory anyway")
def test_a_directory_that_cannot_be_written_opens_read_only(snapshot: Path) -> None:
    for entry in [snapshot, *snapshot.iterdir()]:
        entry.chmod(0o555 if entry.is_dir() else 0o444)
    try:
        with Memory(snapshot, embedder=HashingEmbedder()) as memory:
            assert memory.search("Lisbon", user_id="mina")
    finally:
        for entry in [snapshot, *snapshot.iterdir()]:
            entry.chmod(0o755 if entry.is_dir() else 0o644)


def test_read_only_needs_an_existing_store(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no store"):
        Memory(tmp_path / "nothing", embedder=HashingEmbedder(), read_only=True)


def test_files_that_cannot_be_written_are_detected(
    snapshot: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the permission check sees decides (as root every file is writable, so the check
    is stubbed: the path taken is the one a non-root user of a read-only mount takes)."""
    real_access = os.access

    def no_writes(path: object, mode: int, *args: object, **kwargs: object) -> bool:
        return False if mode & os.W_OK else real_access(path, mode)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "access", no_writes)
    with Memory(snapshot, embedder=HashingEmbedder()) as memory:
        assert memory.search("Lisbon", user_id="mina")
        with pytest.raises(StoreReadOnlyError):
            memory.add([{"content": "hello"}], user_id="mina")
