"""A damaged store says so, with a Madeleine error and what to do, instead of a raw
database exception or, worse, passing for a new or a healthy store (issue 13)."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from madeleine import Memory, StoreDamagedError
from tests.bench.test_cli_and_bench import _cli
from tests.fakes import HashingEmbedder

pytestmark = pytest.mark.sqlite_only  # the embedded store's own files

PAGE = 4096


def _healthy(path: Path) -> Path:
    with Memory(path, embedder=HashingEmbedder(), background=False) as memory:
        for n in range(40):
            memory.add(
                [{"content": f"note {n}: the staging cluster {n} needs a new certificate"}],
                user_id=f"user-{n % 3}",
            )
        memory.wait()
        assert memory.check()["ok"] is True
    return path / "memory.db"


def test_an_empty_database_file_is_not_taken_for_a_new_store(tmp_path: Path) -> None:
    database = _healthy(tmp_path / "m")
    database.write_bytes(b"")
    with pytest.raises(StoreDamagedError, match="is empty"):
        Memory(tmp_path / "m", embedder=HashingEmbedder())
    result = _cli("stats", data=tmp_path / "m")
    assert result.returncode == 1 and "is empty" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_file_that_is_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    database = _healthy(tmp_path / "m")
    database.write_bytes(b"this is not an SQLite file " * 500)
    with pytest.raises(StoreDamagedError, match="damaged"):
        Memory(tmp_path / "m", embedder=HashingEmbedder())


def test_every_damaged_page_is_noticed(tmp_path: Path) -> None:
    """Each page of the file in turn overwritten with garbage: the store either refuses to
    open (a Madeleine error) or ``check()`` reports the damage — never a healthy report."""
    database = _healthy(tmp_path / "healthy")
    pages = database.stat().st_size // PAGE
    assert pages > 10
    unnoticed = []
    for page in range(1, pages):
        copy = tmp_path / f"p{page}"
        shutil.copytree(tmp_path / "healthy", copy)
        with (copy / "memory.db").open("r+b") as handle:
            handle.seek(page * PAGE)
            handle.write(random.Random(page).randbytes(PAGE))
        try:
            with Memory(copy, embedder=HashingEmbedder(), background=False) as memory:
                if memory.check()["ok"]:
                    unnoticed.append(page)
        except StoreDamagedError:
            pass
    assert unnoticed == []
