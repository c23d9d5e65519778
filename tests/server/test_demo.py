"""``madeleine demo``: one command to a populated dashboard, safe to run twice."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from madeleine import Memory, cli
from madeleine.embed.base import Embedder
from madeleine.server.app import ServerSettings, create_app
from madeleine.server.demo import seed_demo
from tests.fakes import HashingEmbedder


def test_the_demo_user_has_history_alerts_a_graph_and_a_knowledge_base(tmp_path: Path) -> None:
    with Memory(tmp_path / "m", embedder=HashingEmbedder()) as memory:
        counts = seed_demo(memory)
        assert counts["messages_added"] > 10 and counts["documents"] == 3
        assert counts["fact_versions"] > counts["facts"] > 5  # things changed over the year
        keys = {c.key for c in memory.facts("alex")}
        assert {"work.employer", "location.home", "preference.seat", "health.allergy"} <= keys
        seat = next(c for c in memory.facts("alex") if c.key == "preference.seat")
        assert "aisle" in seat.statement and seat.supersedes is not None
        assert [a["rule"] for a in memory.alerts("alex")] == ["passport_expiry_before_trip"]
        assert len(memory.graph_entities("alex")) >= 5
        assert len(memory.kb("travel-policy").versions("booking")) == 2
        timeline = memory.timeline("alex")
        assert len(timeline.groups) >= 5
        assert any(item.superseded_by for item in timeline.items)
        again = seed_demo(memory)
        assert again["messages_added"] == 0 and again["fact_versions"] == counts["fact_versions"]


def test_the_command_seeds_a_tenant_and_prints_a_working_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], embedder: Embedder
) -> None:
    data = tmp_path / "data"
    assert cli.main(["demo", "--data", str(data), "--no-serve", "--port", "8123"]) == 0
    out = capsys.readouterr()
    key = out.out.splitlines()[1]
    assert f"http://127.0.0.1:8123/#key={key}" in out.out
    assert "alex has" in out.err
    app = create_app(ServerSettings(data=data), embedder=embedder)
    with TestClient(app) as client:
        users = client.get("/v1/users", headers={"Authorization": f"Bearer {key}"}).json()
        assert [u["user_id"] for u in users["users"]] == ["alex"]


def test_a_busy_port_is_refused_before_anything_is_seeded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        data = tmp_path / "data"
        assert cli.main(["demo", "--data", str(data), "--port", str(port)]) == 2
    assert f"cannot serve on 127.0.0.1:{port}" in capsys.readouterr().err
    assert not data.exists()  # no store, no key
