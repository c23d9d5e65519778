"""The ANN vector files of large users: written as the indexer commits (not by the first
search), kept in line with SQLite after deletes, rebuilt when a file is torn or stale."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from madeleine import Memory
from madeleine.store.sqlite.ann import UsearchFiles
from madeleine.store.sqlite.lexical import scope_token
from tests.fakes import HashingEmbedder

pytestmark = pytest.mark.sqlite_only  # the embedded store's own files

USER = "dana"
TOPICS = ["kyoto", "violin", "marathon", "invoice", "garden", "passport", "sushi", "chess"]


def _add(memory: Memory, count: int, start: int = 0) -> None:
    messages = [
        {"content": f"note {i}: {TOPICS[i % len(TOPICS)]} item {i}", "id": f"m{i}"}
        for i in range(start, start + count)
    ]
    memory.add(messages, user_id=USER, session_id=f"s{start}")
    memory.index_pending()


def _ann_file(root: Path) -> Path:
    return root / "ann" / f"{scope_token(USER)}.usearch"


def _ann_keys(root: Path) -> set[int]:
    from usearch.index import Index

    index = Index.restore(str(_ann_file(root)), view=False)
    assert index is not None
    return {int(k) for k in np.asarray(index.keys)}


def _episode_ids(memory: Memory) -> set[int]:
    return {int(e["id"].removeprefix("ep_")) for e in memory.export_user(USER)["episodes"]}


def _open(root: Path) -> Memory:
    return Memory(root, embedder=HashingEmbedder(), background=False, ann_threshold=20)


def test_the_indexer_builds_the_ann_file_before_any_search(tmp_path: Path) -> None:
    root = tmp_path / "m"
    with _open(root) as memory:
        _add(memory, 10)
        assert not _ann_file(root).exists()  # below the threshold: exact search, no file
        _add(memory, 30, start=10)
        ids = _episode_ids(memory)
    # written on close at the latest, without a single search
    assert _ann_keys(root) == ids and len(ids) == 40
    with _open(root) as memory:
        hits = memory.search("violin item", user_id=USER, limit=5)
        assert hits and all("violin" in h.text for h in hits)


def test_deletes_reach_the_ann_file(tmp_path: Path) -> None:
    root = tmp_path / "m"
    with _open(root) as memory:
        _add(memory, 40)
        assert memory.search("kyoto", user_id=USER)
        assert memory.delete_message("m0", user_id=USER)
        assert memory.delete_message("m8", user_id=USER)
        hits = memory.search("kyoto item", user_id=USER, limit=10)
        assert not {"m0", "m8"} & {s for h in hits for s in h.source_ids}
        ids = _episode_ids(memory)
    assert _ann_keys(root) == ids and len(ids) < 40


def test_a_stale_file_is_brought_in_line_with_the_store(tmp_path: Path) -> None:
    root = tmp_path / "m"
    with _open(root) as memory:
        _add(memory, 40)
    stale = _ann_file(root).read_bytes()  # the file as it was before the deletes and adds
    with _open(root) as memory:
        assert memory.delete_message("m1", user_id=USER)
        _add(memory, 5, start=40)
    _ann_file(root).write_bytes(stale)  # e.g. restored from an old backup
    with _open(root) as memory:
        hits = memory.search("violin item", user_id=USER, limit=10)
        sources = {s for h in hits for s in h.source_ids}
        assert "m1" not in sources
        ids = _episode_ids(memory)
    assert _ann_keys(root) == ids and 40 < len(ids) < 45


def test_a_torn_file_is_rebuilt_after_a_crash(tmp_path: Path) -> None:
    root = tmp_path / "m"
    with _open(root) as memory:
        _add(memory, 40)
    path = _ann_file(root)
    path.write_bytes(path.read_bytes()[:100])  # a crash mid-write
    (root / "ann" / "leftover.usearch.tmp").write_bytes(b"partial")
    with _open(root) as memory:
        hits = memory.search("marathon item", user_id=USER, limit=5)
        assert hits and "marathon" in hits[0].text
        ids = _episode_ids(memory)
    assert _ann_keys(root) == ids


def test_unsaved_changes_are_written_on_flush_only_when_there_are_some(tmp_path: Path) -> None:
    files = UsearchFiles(tmp_path / "ann", threshold=1)
    rng = np.random.default_rng(0)
    matrix = rng.standard_normal((100, 8)).astype(np.float32)
    ids = np.arange(1, 101, dtype=np.int64)
    files.sync(USER, (1, 0), ids, matrix)  # a new index: written at once
    path = tmp_path / "ann" / f"{scope_token(USER)}.usearch"
    first = path.stat().st_mtime_ns
    more = np.vstack([matrix, rng.standard_normal((5, 8)).astype(np.float32)])
    files.sync(USER, (2, 0), np.arange(1, 106, dtype=np.int64), more)  # 5 of 105: deferred
    assert path.stat().st_mtime_ns == first
    files.flush()
    keys, _ = files.search(USER, (2, 0), np.arange(1, 106, dtype=np.int64), more, more[103], 1)
    assert int(keys[0]) == 104
    reopened = UsearchFiles(tmp_path / "ann", threshold=1)
    keys, _ = reopened.search(USER, (2, 0), np.arange(1, 106, dtype=np.int64), more, more[103], 1)
    assert int(keys[0]) == 104
