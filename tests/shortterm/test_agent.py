"""The agent state machine: allowed moves only, timeouts, the log, snapshots, and a
writer that read a stale version is refused."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from madeleine import Memory
from madeleine.shortterm.agent import (
    ALLOWED,
    AgentStatus,
    ConcurrentUpdateError,
    InvalidTransitionError,
)
from tests.fakes import HashingEmbedder


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    memory = Memory(tmp_path / "m", embedder=HashingEmbedder())
    yield memory
    memory.close()


def test_a_full_run_and_its_log(mem: Memory) -> None:
    agent = mem.agent("booker", user_id="u1")
    assert agent.state == AgentStatus.IDLE
    agent.transition("planning", reason="user asked for a flight")
    agent.transition("executing", data={"step": 1})
    agent.transition("waiting_input", reason="which seat?")
    agent.transition("executing", data={"step": 2})
    done = agent.transition("completed")
    assert done.state == "completed" and done.data == {"step": 2} and done.version == 5
    assert [h["to"] for h in agent.history()] == [
        "planning", "executing", "waiting_input", "executing", "completed",
    ]  # fmt: skip
    assert agent.history()[0]["from"] is None and agent.history()[2]["reason"] == "which seat?"


@pytest.mark.parametrize("start", list(AgentStatus))
def test_every_disallowed_move_is_refused_and_changes_nothing(
    mem: Memory, start: AgentStatus
) -> None:
    agent = mem.agent("a", user_id="u1")
    agent.restore({"state": start.value, "data": {"k": 1}})
    for target in AgentStatus:
        if target in ALLOWED[start]:
            continue
        with pytest.raises(InvalidTransitionError, match="can go to"):
            agent.transition(target.value)
        assert agent.state == start and agent.data == {"k": 1}


def test_unknown_states_and_bad_arguments(mem: Memory) -> None:
    agent = mem.agent("a", user_id="u1")
    with pytest.raises(ValueError, match="unknown agent state"):
        agent.transition("sleeping")
    with pytest.raises(TypeError):
        agent.transition("planning", data=["not", "a", "dict"])  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        mem.agent("a", user_id="u1", timeouts={"completed": 5})
    with pytest.raises(ValueError):
        mem.agent("a", user_id="u1", timeouts={"planning": -1})


def test_a_state_past_its_timeout_has_failed(mem: Memory) -> None:
    agent = mem.agent("a", user_id="u1", timeouts={"waiting_input": 60})
    now = [1_000.0]
    agent._clock = lambda: now[0]
    agent.transition("planning")
    view = agent.transition("waiting_input")
    assert view.deadline == 1_060.0
    now[0] = 1_059.0
    assert agent.state == "waiting_input"
    now[0] = 1_061.0
    assert agent.state == "failed"
    assert agent.history()[-1]["reason"] == "timed out in waiting_input after 60 s"


def test_snapshot_restores_on_another_store(mem: Memory, tmp_path: Path) -> None:
    agent = mem.agent("a", user_id="u1")
    agent.transition("planning", data={"plan": ["search", "book"]})
    snapshot = agent.snapshot()
    with Memory(tmp_path / "other", embedder=HashingEmbedder()) as other:
        restored = other.agent("a", user_id="u1").restore(snapshot)
        assert restored.state == "planning" and restored.data == {"plan": ["search", "book"]}
        assert "restored" in other.agent("a", user_id="u1").history()[-1]["reason"]
    with pytest.raises(ValueError):
        agent.restore({"data": {}})


def test_a_writer_with_a_stale_version_is_refused(mem: Memory) -> None:
    first = mem.agent("a", user_id="u1")
    second = mem.agent("a", user_id="u1")
    seen = first.current().version
    second.transition("planning")
    with pytest.raises(ConcurrentUpdateError):
        first.transition("executing", expected_version=seen)
    assert first.state == "planning"


def test_agents_are_per_user(mem: Memory) -> None:
    mem.agent("a", user_id="u1").transition("planning")
    assert mem.agent("a", user_id="u2").state == "idle"
    mem.forget_user("u1")
    assert mem.agent("a", user_id="u1").state == "idle"
