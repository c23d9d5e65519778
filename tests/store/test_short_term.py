"""The short-term repository's contract on every place it can live: the embedded store,
PostgreSQL, and Redis. Times are the caller's (a test clock far from the wall clock), so
expiry never depends on when the test runs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from madeleine.store import open_store
from madeleine.store.ports import ShortTermRepository, Store
from madeleine.store.records import AgentRecord, BufferedMessage, StaleStateError, TransitionRecord

T0 = 1_000_000.0  # the test clock: 1970, so a Redis TTL taken as absolute would have expired


@pytest.fixture(params=["sqlite", "postgres", "redis"])
def backing(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "sqlite":
        store = open_store(tmp_path / "s")
    else:
        from cryptography.fernet import Fernet

        options: dict[str, Any] = {}
        if request.param == "redis":
            options["redis_url"] = request.getfixturevalue("redis_url")
            options["redis_prefix"] = request.getfixturevalue("redis_prefix")
        store = open_store(
            request.getfixturevalue("pg_url"),
            schema=request.getfixturevalue("pg_schema"),
            vault_key=Fernet.generate_key().decode(),
            **options,
        )
    yield store
    store.close()


@pytest.fixture
def repo(backing: Store) -> ShortTermRepository:
    return backing.short_term


def _message(content: str, at: float, pinned: bool = False) -> BufferedMessage:
    return BufferedMessage(role="user", content=content, created_at=at, pinned=pinned)


def test_positions_count_from_one_per_session(repo: ShortTermRepository) -> None:
    assert repo.append("u", "s", _message("one", T0), T0 + 60) == 1
    assert repo.append("u", "s", _message("two", T0 + 1, pinned=True), T0 + 61) == 2
    assert repo.append("u", "other", _message("x", T0 + 2), None) == 1
    messages = repo.messages("u", "s", T0 + 2)
    assert [(m.position, m.content, m.pinned) for m in messages] == [
        (1, "one", False),
        (2, "two", True),
    ]
    assert messages[0].created_at == T0  # exact, not rounded
    info = repo.session("u", "s", T0 + 2)
    assert info is not None and info.messages == 2 and info.expires_at == T0 + 61
    assert [s.session_id for s in repo.sessions("u", T0 + 3)] == ["other", "s"]  # newest first


def test_a_session_expires_by_the_callers_clock_and_starts_over(repo: ShortTermRepository) -> None:
    repo.append("u", "s", _message("old", T0), T0 + 10)
    assert repo.session("u", "s", T0 + 10) is None
    assert repo.messages("u", "s", T0 + 11) == [] and repo.sessions("u", T0 + 11) == []
    assert repo.append("u", "s", _message("new", T0 + 20), T0 + 30) == 1  # starts over
    assert [m.content for m in repo.messages("u", "s", T0 + 21)] == ["new"]


def test_fold_keeps_the_furthest_point(repo: ShortTermRepository) -> None:
    for i in range(4):
        repo.append("u", "s", _message(f"m{i}", T0 + i), None)
    repo.fold("u", "s", "summary of three", 3)
    repo.fold("u", "s", "stale summary", 2)
    info = repo.session("u", "s", T0 + 5)
    assert info is not None and info.folded == 3 and info.summary == "stale summary"


def test_clear_purge_export_and_forget(backing: Store, repo: ShortTermRepository) -> None:
    repo.append("u", "keep", _message("kept: a", T0), None)
    repo.append("u", "gone", _message("expired", T0), T0 + 5)
    repo.append("v", "s", _message("other user", T0), None)
    assert repo.purge_expired(T0 + 6) == 1
    assert repo.clear("u", "missing") == 0
    repo.move_agent(
        "u",
        "a:1",
        0,
        AgentRecord("planning", {"k": [1]}, T0, 1),
        TransitionRecord(None, "planning", "start", T0),
    )
    exported = repo.export_user("u")
    assert [m["content"] for m in exported["short_term"]] == ["kept: a"]
    assert exported["agents"] == [
        {"agent_id": "a:1", "state": "planning", "data": {"k": [1]}, "entered_at": T0}
    ]
    with backing.transaction() as tx:
        removed = repo.forget_user(tx, "u")
    assert removed == 4  # one message, its session, the agent and its one transition
    assert repo.export_user("u") == {"short_term": [], "agents": []}
    assert repo.agent("u", "a:1") is None
    assert [m.content for m in repo.messages("v", "s", T0)] == ["other user"]


def test_a_stale_agent_writer_is_refused(repo: ShortTermRepository) -> None:
    first = AgentRecord("planning", {}, T0, 1)
    repo.move_agent("u", "a", 0, first, TransitionRecord(None, "planning", "", T0))
    with pytest.raises(StaleStateError):  # created twice
        repo.move_agent("u", "a", 0, first, TransitionRecord(None, "planning", "", T0))
    second = AgentRecord("executing", {"step": 2}, T0 + 1, 2)
    repo.move_agent("u", "a", 1, second, TransitionRecord("planning", "executing", "go", T0 + 1))
    with pytest.raises(StaleStateError):  # moved from version 1 again
        repo.move_agent("u", "a", 1, second, TransitionRecord("planning", "executing", "", T0))
    assert repo.agent("u", "a") == second
    assert [(t.from_state, t.to_state) for t in repo.transitions("u", "a", 10)] == [
        (None, "planning"),
        ("planning", "executing"),
    ]
    assert len(repo.transitions("u", "a", 1)) == 1
    assert repo.agent("u", "b") is None and repo.agent("other", "a") is None


def test_ids_with_separators_never_collide(repo: ShortTermRepository) -> None:
    repo.append("a:b", "c", _message("first", T0), None)
    repo.append("a", "b:c", _message("second", T0), None)
    assert [m.content for m in repo.messages("a:b", "c", T0)] == ["first"]
    assert [m.content for m in repo.messages("a", "b:c", T0)] == ["second"]
