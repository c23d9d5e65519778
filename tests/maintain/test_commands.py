"""The lifecycle commands: maintain, timeline, archive / restore / pin / unpin, undo, and the
worker's schedule."""

from __future__ import annotations

import json
from functools import partial

import pytest

from madeleine import Memory, cli
from madeleine.write.commands import maintain_if_due
from tests.fakes import HashingEmbedder

T0 = 1_700_000_000.0
hashing_memory = partial(Memory, embedder=HashingEmbedder(dim=256))


@pytest.fixture
def data(store_location: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """A store (a directory, or PostgreSQL in the PostgreSQL run) with one user's move."""
    monkeypatch.setattr("madeleine.cli.Memory", hashing_memory)
    where = store_location
    with hashing_memory(where, background=False) as memory:
        memory.add(
            [
                {"role": "user", "content": "I live in Lyon.", "timestamp": T0},
                {"role": "user", "content": "Good morning!", "timestamp": T0 + 60},
            ],
            user_id="mina",
            session_id="s1",
        )
        memory.add(
            [{"role": "user", "content": "I moved: I live in Berlin now.", "timestamp": T0 + 9e6}],
            user_id="mina",
            session_id="s2",
        )
        assert memory.wait(30)
    return where


def run(data: str, *args: str) -> int:
    return cli.main(["--data", str(data), *args])


def test_maintain_then_undo(data: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(data, "maintain", "--json") == 0
    reports = json.loads(capsys.readouterr().out)
    assert [r["user_id"] for r in reports] == ["mina"] and reports[0]["changes"]
    assert run(data, "maintain") == 0
    assert "mina: nothing to do" in capsys.readouterr().out
    assert run(data, "undo", reports[0]["run"], "--user", "mina") == 0
    assert "undid" in capsys.readouterr().out
    assert run(data, "undo", reports[0]["run"], "--user", "mina") == 1  # nothing left


def test_timeline_and_item_commands(data: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(data, "timeline", "--user", "mina") == 0
    out = capsys.readouterr().out
    assert "Lyon" in out and "Berlin" in out and "superseded by" in out
    assert run(data, "timeline", "--user", "mina", "--json") == 0
    items = json.loads(capsys.readouterr().out)["items"]
    turn = next(i["id"] for i in items if i["kind"] == "turn")
    assert run(data, "archive", turn, "--user", "mina", "--reason", "test") == 0
    assert f"{turn}: archived (run archive-" in capsys.readouterr().out
    assert run(data, "archive", turn, "--user", "mina") == 0
    assert "nothing changed" in capsys.readouterr().out
    assert run(data, "lifecycle-log", "--user", "mina", "--json") == 0
    archived = json.loads(capsys.readouterr().out)[0]
    assert archived["action"] == "archive" and archived["item"] == turn
    assert run(data, "undo", archived["run"], "--user", "mina") == 0  # an edit's run undoes
    assert run(data, "lifecycle-log", "--user", "mina", "--run", archived["run"]) == 0
    assert "(undone)" in capsys.readouterr().out
    assert run(data, "restore", turn, "--user", "mina") == 0
    assert "nothing changed" in capsys.readouterr().out  # the undo restored it already
    assert run(data, "pin", turn, "--user", "mina") == 0
    assert f"{turn}: pinned" in capsys.readouterr().out
    assert run(data, "pin", "ep_99999", "--user", "mina") == 1
    assert "has no turn" in capsys.readouterr().err
    assert run(data, "timeline", "--user", "mina", "--start", "2030-01-01") == 0
    assert "nothing in this period" in capsys.readouterr().out


def test_the_worker_maintains_on_schedule_once_per_period(data: str) -> None:
    with hashing_memory(data, background=False) as memory:
        assert maintain_if_due("store", memory, every_hours=24)
        assert not maintain_if_due("store", memory, every_hours=24)  # done this period
        assert not maintain_if_due("store", memory, every_hours=0)  # switched off
