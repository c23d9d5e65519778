"""Sessions and agent states through REST and the client, and both surviving a killed
server."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from madeleine import Client
from madeleine.bench.serve import free_port, start_server
from madeleine.shortterm.agent import ConcurrentUpdateError
from tests.server.conftest import KEY_A, KEY_B, LiveServer


def test_session_buffer_through_the_client(live: LiveServer) -> None:
    with Client(live.url, KEY_A) as client:
        session = client.session("chat-1", user_id="u1")
        session.append({"role": "system", "content": "Be brief."}, pinned=True)
        for i in range(25):
            session.append({"role": "user", "content": f"Point {i}: a few words to count."})
        window = session.window(budget_tokens=80)
        assert window.messages[0]["pinned"] and window.folded > 0 and window.summary
        assert window.tokens <= 80
        assert len(session.messages()) == 26
        assert client.sessions("u1")[0]["session_id"] == "chat-1"
        with pytest.raises(ValueError):
            session.append({"role": "user"})
        with Client(live.url, KEY_B) as other:
            assert other.session("chat-1", user_id="u1").messages() == []
        assert session.clear() == 26


def test_agent_through_the_client(live: LiveServer) -> None:
    with Client(live.url, KEY_A) as client:
        agent = client.agent("planner", user_id="u1")
        assert agent.current()["state"] == "idle"
        moved = agent.transition("planning", reason="new task", data={"goal": "book"})
        assert moved["state"] == "planning" and "executing" in moved["allowed"]
        with pytest.raises(ValueError, match="cannot go from planning to completed"):
            agent.transition("completed")
        with pytest.raises(ConcurrentUpdateError):
            agent.transition("executing", expected_version=0)
        snapshot = agent.snapshot()
        agent.transition("failed")
        assert agent.restore(snapshot)["state"] == "planning"
        assert [h["to"] for h in agent.history()] == ["planning", "failed", "planning"]


def test_sessions_and_agents_survive_a_killed_server(tmp_path: Path) -> None:
    data, port = tmp_path / "data", free_port()
    server = start_server(data, port, {KEY_A: "alpha"})
    url = f"http://127.0.0.1:{port}"
    try:
        with Client(url, KEY_A) as client:
            client.session("s", user_id="u1").append({"role": "user", "content": "keep this"})
            client.agent("a", user_id="u1").transition("planning", data={"step": 3})
            client.add([{"role": "user", "content": "I live in Porto."}], user_id="u1", wait=True)
    finally:
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=30)
    server = start_server(data, port, {KEY_A: "alpha"})
    try:
        with Client(url, KEY_A) as client:
            assert client.session("s", user_id="u1").messages()[0]["content"] == "keep this"
            state = client.agent("a", user_id="u1").current()
            assert state["state"] == "planning" and state["data"] == {"step": 3}
            assert any("Porto" in h.text for h in client.search("Porto", user_id="u1"))
    finally:
        server.terminate()
        server.wait(timeout=30)
