"""The lifecycle over REST: archive, restore, pins, importance, maintenance, undo, the log
and the timeline, with the tenant isolation and errors of every route."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.server.conftest import A, B

MOVE = [
    {"role": "user", "content": "I live in Seattle.", "timestamp": "2024-01-01T10:00:00Z"},
    {"role": "user", "content": "Good morning!", "timestamp": "2024-03-01T10:00:00Z"},
    {"role": "user", "content": "I now live in Denver.", "timestamp": "2024-03-01T10:01:00Z"},
]


def _seed(client: TestClient) -> str:
    body = {"user_id": "u1", "messages": MOVE, "wait": True}
    assert client.post("/v1/memories", headers=A, json=body).status_code == 200
    hits = client.post(
        "/v1/search", headers=A, json={"query": "Seattle", "user_id": "u1", "channels": ["bm25"]}
    ).json()["hits"]
    return str(next(h["id"] for h in hits if h["kind"] == "turn"))


def test_archive_restore_pin_and_importance(client: TestClient) -> None:
    turn = _seed(client)
    archived = client.post(f"/v1/memories/{turn}/archive", headers=A, json={"user_id": "u1"})
    assert archived.json() == {"id": turn, "changed": True}
    search = {"query": "Seattle", "user_id": "u1", "channels": ["bm25"]}
    hits = client.post("/v1/search", headers=A, json=search).json()["hits"]
    assert turn not in {h["id"] for h in hits}
    hits = client.post("/v1/search", headers=A, json={**search, "include_archived": True})
    assert turn in {h["id"] for h in hits.json()["hits"]}
    state = client.get(f"/v1/memories/{turn}/lifecycle", headers=A, params={"user_id": "u1"})
    assert state.json()["archived"] is True
    restored = client.post(f"/v1/memories/{turn}/restore", headers=A, json={"user_id": "u1"})
    assert restored.json()["changed"] is True
    assert client.post(f"/v1/memories/{turn}/pin", headers=A, json={"user_id": "u1"}).json()[
        "changed"
    ]
    body = {"user_id": "u1", "importance": 0.9}
    assert client.put(f"/v1/memories/{turn}/importance", headers=A, json=body).json()["changed"]
    state = client.get(f"/v1/memories/{turn}/lifecycle", headers=A, params={"user_id": "u1"})
    assert state.json()["pinned"] and state.json()["importance"] == 0.9
    log = client.get("/v1/lifecycle-log", headers=A, params={"user_id": "u1"}).json()["entries"]
    assert [e["action"] for e in log] == ["importance", "pin", "restore", "archive"]


def test_errors_are_clear_and_tenants_cannot_reach_each_other(client: TestClient) -> None:
    turn = _seed(client)
    other = client.post(f"/v1/memories/{turn}/archive", headers=B, json={"user_id": "u1"})
    assert other.status_code == 404 and other.json()["error"]["code"] == "not_found"
    bad = client.post("/v1/memories/nonsense/archive", headers=A, json={"user_id": "u1"})
    assert bad.status_code == 400 and "item id" in bad.json()["error"]["message"]
    body = {"user_id": "u1", "importance": 3}
    high = client.put(f"/v1/memories/{turn}/importance", headers=A, json=body)
    assert high.status_code == 400 and "between 0 and 1" in high.json()["error"]["message"]
    wrong = client.put(
        f"/v1/memories/{turn}/importance", headers=A, json={"user_id": "u1", "importance": "x"}
    )
    assert wrong.status_code == 422


def test_maintain_undo_and_timeline(client: TestClient) -> None:
    _seed(client)
    reports = client.post("/v1/maintain", headers=A, json={"user_id": "u1"}).json()["reports"]
    assert len(reports) == 1 and reports[0]["user_id"] == "u1"
    run = reports[0]["run"]
    again = client.post("/v1/maintain", headers=A, json={}).json()["reports"]
    assert [r["changes"] for r in again] == [[]]
    undone = client.post("/v1/undo", headers=A, json={"user_id": "u1", "run": run}).json()
    assert len(undone["undone"]) == len(reports[0]["changes"])
    timeline = client.get("/v1/timeline", headers=A, params={"user_id": "u1"}).json()
    assert [i["kind"] for i in timeline["items"]].count("turn") == 3
    seattle = next(i for i in timeline["items"] if i["kind"] == "fact" and "Seattle" in i["text"])
    assert seattle["superseded_by"] is not None
    assert timeline["groups"] and timeline["narrative"]
    narrowed = client.get(
        "/v1/timeline",
        headers=A,
        params={"user_id": "u1", "start": "2024-02-01T00:00:00Z", "query": "Denver"},
    ).json()
    assert narrowed["items"] and all("Seattle" not in i["text"] for i in narrowed["items"])


def test_session_digests_stay_out_of_facts_and_profile_unless_asked(client: TestClient) -> None:
    _seed(client)
    params = {"user_id": "u1"}
    (home,) = client.get("/v1/facts", headers=A, params=params).json()["facts"]
    client.post(f"/v1/memories/{home['id']}/pin", headers=A, json=params)  # kept, not faded
    client.post("/v1/maintain", headers=A, json={"user_id": "u1"})

    def keys(response: dict[str, object]) -> list[str]:
        return [str(c["key"]) for c in response["facts"]]  # type: ignore[attr-defined]

    plain = keys(client.get("/v1/facts", headers=A, params=params).json())
    asked = keys(
        client.get("/v1/facts", headers=A, params={**params, "include_digests": True}).json()
    )
    assert plain and not any(k.startswith("digest.") for k in plain)
    assert any(k.startswith("digest.") for k in asked) and set(plain) < set(asked)
    profile = client.get("/v1/profile", headers=A, params=params).json()["profile"]
    with_digests = client.get(
        "/v1/profile", headers=A, params={**params, "include_digests": "true"}
    ).json()["profile"]
    statements = [c["statement"] for subs in profile.values() for cs in subs.values() for c in cs]
    assert statements and not any(s.startswith("Session ") for s in statements)
    assert len(str(with_digests)) > len(str(profile))
