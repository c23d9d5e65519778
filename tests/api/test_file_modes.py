"""Files holding users' data are the owner's alone: the store directory 0700, every file in
it 0600 (the database, its write-ahead log and shared memory, vector indexes, the vault
key), whatever the process umask, and a store made before this rule is tightened on open."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from madeleine import Memory
from tests.fakes import HashingEmbedder

pytestmark = pytest.mark.sqlite_only


def _modes(root: Path) -> dict[str, int]:
    found = {".": stat.S_IMODE(root.stat().st_mode)}
    for path in root.rglob("*"):
        found[path.relative_to(root).as_posix()] = stat.S_IMODE(path.stat().st_mode)
    return found


def _wrong(root: Path) -> dict[str, str]:
    return {
        name: oct(mode)
        for name, mode in _modes(root).items()
        if mode != (0o700 if (root / name).is_dir() else 0o600)
    }


def test_every_file_of_a_store_is_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "m"
    previous = os.umask(0o022)  # the usual umask: new files 0644, directories 0755
    try:
        with Memory(path, embedder=HashingEmbedder(), ann_threshold=1) as memory:
            memory.add([{"content": "I keep bees in Lyon."}], user_id="u")
            assert memory.wait()
            assert memory.search("bees", user_id="u")  # writes the user's vector index
            names = set(_modes(path))
            assert {"memory.db", "memory.db-wal", "vault.key"} <= names, names
            assert _wrong(path) == {}
        assert list(path.glob("ann/*.usearch")), "the vector index file was written"
        assert _wrong(path) == {}
    finally:
        os.umask(previous)


def test_an_older_world_readable_store_is_tightened_on_open(tmp_path: Path) -> None:
    path = tmp_path / "m"
    with Memory(path, embedder=HashingEmbedder()) as memory:
        memory.add([{"content": "hello"}], user_id="u")
    os.chmod(path, 0o755)
    os.chmod(path / "memory.db", 0o644)
    with Memory(path, embedder=HashingEmbedder()) as memory:
        assert _wrong(path) == {}
