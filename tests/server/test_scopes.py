"""Scoped keys over REST: every route against every scope (one table), user and collection
limits, per-tenant metrics, key administration and the audit log."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from madeleine.server.app import ServerSettings, create_app
from madeleine.server.grants import SCOPES
from madeleine.server.keys import key_ring
from madeleine.store.audit_rows import pseudonym
from tests.fakes import HashingEmbedder

TENANT = "acme"
# Every route, the scope it needs and whether it is audited. A route missing here fails
# test_the_table_covers_every_route: a new route must say what it needs.
ROUTES: dict[str, tuple[str | None, bool]] = {
    "POST /v1/memories": ("write", True),
    "POST /v1/events": ("write", True),
    "POST /v1/wait": ("read", False),
    "POST /v1/search": ("read", False),
    "POST /v1/context": ("read", False),
    "GET /v1/facts": ("read", False),
    "GET /v1/facts/{fact_id}/history": ("read", False),
    "GET /v1/profile": ("read", False),
    "GET /v1/alerts": ("read", False),
    "GET /v1/routing-log": ("read", False),
    "GET /v1/graph": ("read", False),
    "DELETE /v1/memories/{memory_id}": ("write", True),
    "DELETE /v1/messages/{message_id}": ("write", True),
    "POST /v1/forget": ("write", True),
    "GET /v1/export": ("read", True),
    "GET /v1/stats": ("admin", False),
    "POST /v1/sessions/{session_id}/messages": ("write", True),
    "GET /v1/sessions/{session_id}/messages": ("read", False),
    "GET /v1/sessions/{session_id}/window": ("read", False),
    "DELETE /v1/sessions/{session_id}": ("write", True),
    "GET /v1/sessions": ("read", False),
    "GET /v1/agents/{agent_id}": ("read", False),
    "POST /v1/agents/{agent_id}/transition": ("write", True),
    "GET /v1/agents/{agent_id}/history": ("read", False),
    "GET /v1/agents/{agent_id}/snapshot": ("read", False),
    "POST /v1/agents/{agent_id}/restore": ("write", True),
    "GET /v1/kb": ("admin", False),
    "PUT /v1/kb/{collection}": ("write", True),
    "DELETE /v1/kb/{collection}": ("write", True),
    "POST /v1/kb/{collection}/documents": ("write", True),
    "GET /v1/kb/{collection}/documents": ("admin", False),
    "PUT /v1/kb/{collection}/documents/{doc_id}": ("write", True),
    "DELETE /v1/kb/{collection}/documents/{doc_id}": ("write", True),
    "GET /v1/kb/{collection}/documents/{doc_id}/versions": ("admin", False),
    "POST /v1/kb/search": ("read", False),
    "POST /v1/ask": ("read", False),
    "POST /v1/memories/{item_id}/archive": ("write", True),
    "POST /v1/memories/{item_id}/restore": ("write", True),
    "POST /v1/memories/{item_id}/pin": ("write", True),
    "POST /v1/memories/{item_id}/unpin": ("write", True),
    "PUT /v1/memories/{item_id}/importance": ("write", True),
    "GET /v1/memories/{item_id}/lifecycle": ("read", False),
    "POST /v1/maintain": ("write", True),
    "POST /v1/undo": ("write", True),
    "GET /v1/lifecycle-log": ("read", False),
    "GET /v1/timeline": ("read", False),
    "GET /v1/users": ("admin", False),
    "PUT /v1/facts/{fact_id}": ("write", True),
    "GET /v1/facts/{fact_id}/sources": ("read", False),
    "GET /v1/entities": ("read", False),
    "GET /v1/status": ("admin", False),
    "GET /metrics": ("admin", False),
    "GET /v1/whoami": (None, False),  # any valid key
    "GET /v1/keys": ("admin", False),
    "POST /v1/keys": ("admin", True),
    "DELETE /v1/keys/{key_id}": ("admin", True),
    "GET /v1/audit": ("admin", False),
    "GET /health": (None, False),  # no key at all
}
PATH_VALUES = {"collection": "hr", "doc_id": "d1", "key_id": "999"}


class Server:
    """An app over a fresh data directory with one stored key per scope of ``TENANT``."""

    def __init__(self, data: Path) -> None:
        self.data = data
        self.ring = key_ring(data)
        self.keys = {s: self.ring.create(TENANT, s, scopes=[s])[1] for s in SCOPES}
        self.full = self.ring.create(TENANT, "full", scopes=SCOPES)[1]
        self.app = create_app(ServerSettings(data=data), embedder=HashingEmbedder())
        self.client = TestClient(self.app, raise_server_exceptions=False)

    def key(self, *, tenant: str = TENANT, **options: Any) -> str:
        return self.ring.create(tenant, "test", **options)[1]

    def audit(self) -> list[Any]:
        return _audit_of(self.app, TENANT)


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    found = Server(tmp_path / "data")
    with found.client:
        yield found


def call(server: Server, route: str, key: str | None) -> Any:
    method, template = route.split(" ", 1)
    path = re.sub(r"\{(\w+)\}", lambda m: PATH_VALUES.get(m[1], "x1"), template)
    body: dict[str, Any] | None = None
    if method in ("POST", "PUT"):  # a key admin hands out no more than it holds
        body = {"scopes": ["admin"]} if template == "/v1/keys" else {"user_id": "u1"}
    headers = auth(key) if key else {}
    return server.client.request(method, path, params={"user_id": "u1"}, json=body, headers=headers)


def test_the_table_covers_every_route(server: Server) -> None:
    served = {
        f"{method.upper()} {path}"
        for path, operations in server.app.openapi()["paths"].items()
        for method in operations
    }
    assert served == set(ROUTES)


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_each_route_needs_its_scope(server: Server, route: str) -> None:
    needed, audited = ROUTES[route]
    if needed is None:
        for key in server.keys.values():
            assert call(server, route, key).status_code == 200
        return
    for scope, key in server.keys.items():
        answer = call(server, route, key)
        if scope == needed:
            assert answer.status_code not in (401, 403), answer.text
        else:
            assert answer.status_code == 403, answer.text
            message = answer.json()["error"]["message"]
            assert f"lacks the {needed!r} scope" in message and f"has: {scope}" in message
    assert call(server, route, None).status_code == 401
    entries = server.audit()
    if not audited:
        assert entries == []
        return
    method, template = route.split(" ", 1)
    # the allowed call and each refused one, each under its key and outcome
    assert {(e.method, e.route) for e in entries} == {
        (method, template.replace("{doc_id}", "{doc_id:path}"))
    }
    by_key = {e.key_id: e.status for e in entries}
    records = {r.label: r for r in server.ring.list()}
    assert by_key[str(records[needed].id)] != 403
    assert all(by_key[str(records[s].id)] == 403 for s in SCOPES if s != needed)


def test_environment_keys_and_keys_stored_before_scopes_keep_every_scope(tmp_path: Path) -> None:
    import sqlite3

    data = tmp_path / "data"
    data.mkdir()
    with sqlite3.connect(data / "keys.db") as conn:  # the table as it was before scopes
        conn.execute(
            "CREATE TABLE api_keys (id INTEGER PRIMARY KEY, tenant TEXT NOT NULL, digest TEXT "
            "NOT NULL UNIQUE, hint TEXT NOT NULL, label TEXT NOT NULL DEFAULT '', created_at "
            "REAL NOT NULL, revoked_at REAL)"
        )
        from madeleine.server.keys import digest

        conn.execute(
            "INSERT INTO api_keys(tenant, digest, hint, created_at) VALUES (?, ?, ?, 0)",
            (TENANT, digest("old-key"), "old-key"),
        )
    app = create_app(
        ServerSettings(data=data, api_keys={"env-key": TENANT}), embedder=HashingEmbedder()
    )
    with TestClient(app) as client:
        for key in ("old-key", "env-key"):
            who = client.get("/v1/whoami", headers=auth(key)).json()
            assert who["scopes"] == ["read", "write", "admin"] and who["tenant"] == TENANT
            assert client.get("/v1/users", headers=auth(key)).status_code == 200
    new = key_ring(data).create(TENANT)[0]
    assert new.scopes == {"read", "write"}  # a new key without scopes: no operator views


def test_a_user_limited_key_reaches_only_its_users(server: Server) -> None:
    key = auth(server.key(scopes=SCOPES, users=["u1", "u2"]))
    client = server.client
    said = {"user_id": "u1", "messages": [{"role": "user", "content": "I like tea."}]}
    assert client.post("/v1/memories", json=said, headers=key).status_code == 200
    other = client.post("/v1/memories", json={**said, "user_id": "u3"}, headers=key)
    assert other.status_code == 403
    assert other.json()["error"]["message"] == "this key may not reach user 'u3'"
    assert client.get("/v1/facts", params={"user_id": "u2"}, headers=key).status_code == 200
    assert client.get("/v1/facts", params={"user_id": "u3"}, headers=key).status_code == 403
    assert client.get("/v1/export", params={"user_id": "u3"}, headers=key).status_code == 403
    everyone = client.post("/v1/maintain", json={"user_id": None}, headers=key)
    assert everyone.status_code == 403 and "give user_id" in everyone.json()["error"]["message"]
    assert client.get("/v1/users", headers=key).status_code == 403
    as_other = {"query": "tea", "principal": {"user_id": "u3", "groups": []}}
    assert client.post("/v1/kb/search", json=as_other, headers=key).status_code == 403
    as_mine = {"query": "tea", "principal": {"user_id": "u2", "groups": []}}
    assert client.post("/v1/kb/search", json=as_mine, headers=key).status_code == 200
    assert client.get("/v1/audit", headers=key).status_code == 403
    assert client.get("/v1/audit", params={"user_id": "u1"}, headers=key).status_code == 200


def test_a_collection_limited_key_reaches_only_its_collections(server: Server) -> None:
    full, client = auth(server.full), server.client
    for collection, text in (("hr", "Holidays: 25 days a year."), ("legal", "Holidays law.")):
        added = client.post(
            f"/v1/kb/{collection}/documents", json={"text": text, "doc_id": "d"}, headers=full
        )
        assert added.status_code == 200, added.text
    key = auth(server.key(scopes=SCOPES, collections=["hr"]))
    found = client.post("/v1/kb/search", json={"query": "holidays"}, headers=key).json()
    assert {h["collection"] for h in found["hits"]} == {"hr"}
    everywhere = client.post("/v1/kb/search", json={"query": "holidays"}, headers=full).json()
    assert {h["collection"] for h in everywhere["hits"]} == {"hr", "legal"}
    legal = client.post(
        "/v1/kb/search", json={"query": "holidays", "collections": ["legal"]}, headers=key
    )
    assert legal.status_code == 403
    assert legal.json()["error"]["message"] == "this key may not reach collection 'legal'"
    context = {"query": "holidays", "user_id": "u1", "kb": True}
    packed = client.post("/v1/context", json=context, headers=key).json()
    assert {h["collection"] for h in packed["kb_items"]} <= {"hr"}
    assert client.get("/v1/kb/legal/documents", headers=key).status_code == 403
    assert client.put("/v1/kb/legal", json={}, headers=key).status_code == 403
    assert client.get("/v1/kb/hr/documents", headers=key).status_code == 200
    listed = client.get("/v1/kb", headers=key).json()["collections"]
    assert [c["name"] for c in listed] == ["hr"]


def test_metrics_are_per_tenant_and_server_wide_for_an_operator(server: Server) -> None:
    other = auth(server.key(tenant="other", scopes=SCOPES))
    operator = auth(server.ring.create(None, "ops", operator=True)[1])
    client = server.client
    said = {"user_id": "u1", "messages": [{"role": "user", "content": "hello"}]}
    assert client.post("/v1/memories", json=said, headers=auth(server.full)).status_code == 200
    assert client.post("/v1/kb/search", json={"query": "x"}, headers=other).status_code == 200
    mine = client.get("/metrics", headers=auth(server.keys["admin"])).text
    assert 'route="/v1/memories"' in mine and 'method="POST"' in mine  # not "unmatched"
    assert 'tenant="acme"' in mine and 'tenant="other"' not in mine
    assert "/v1/kb/search" not in mine and "madeleine_open_tenants" not in mine
    everything = client.get("/metrics", headers=operator).text
    assert 'tenant="other"' in everything and 'route="/v1/kb/search"' in everything
    assert "madeleine_open_tenants" in everything and "unmatched" not in everything
    assert 'madeleine_request_seconds_bucket{le="0.005",method="POST",route="/v1/memories"' in (
        everything
    )
    # an operator key reaches no tenant's data
    refused = client.get("/v1/facts", params={"user_id": "u1"}, headers=operator)
    assert refused.status_code == 403 and "operator key has no tenant" in refused.text


def test_keys_are_managed_over_rest_within_what_the_admin_holds(server: Server) -> None:
    client, admin = server.client, auth(server.full)
    made = client.post(
        "/v1/keys",
        json={"scopes": ["read"], "collections": ["hr"], "label": "hr bot"},
        headers=admin,
    )
    assert made.status_code == 200, made.text
    created = made.json()
    assert created["tenant"] == TENANT and created["scopes"] == ["read"]
    assert created["collections"] == ["hr"] and created["key"].startswith("mdl_")
    new = auth(created["key"])
    assert client.get("/v1/whoami", headers=new).json()["collections"] == ["hr"]
    listed = client.get("/v1/keys", headers=admin).json()["keys"]
    assert created["id"] in [k["id"] for k in listed] and all("key" not in k for k in listed)
    # no more than it holds; not another tenant's
    limited = auth(server.key(scopes=["read", "admin"], collections=["hr"]))
    for body in ({"scopes": ["write"], "collections": ["hr"]}, {"scopes": ["read"]}):
        assert client.post("/v1/keys", json=body, headers=limited).status_code == 403
    assert client.post("/v1/keys", json={"tenant": "other"}, headers=admin).status_code == 403
    theirs = server.ring.create("other", "theirs")[0]
    assert client.delete(f"/v1/keys/{theirs.id}", headers=admin).status_code == 404
    # revoked: refused at once
    assert client.delete(f"/v1/keys/{created['id']}", headers=admin).status_code == 200
    assert client.get("/v1/whoami", headers=new).status_code == 401
    # an operator manages every tenant's keys, naming the tenant
    operator = auth(server.ring.create(None, "ops", operator=True)[1])
    assert client.post("/v1/keys", json={}, headers=operator).status_code == 403
    made_for_other = client.post("/v1/keys", json={"tenant": "other"}, headers=operator)
    assert made_for_other.json()["tenant"] == "other"
    assert client.delete(f"/v1/keys/{theirs.id}", headers=operator).status_code == 200
    assert {k["tenant"] for k in client.get("/v1/keys", headers=operator).json()["keys"]} >= {
        TENANT,
        "other",
    }
    changes = [(e.method, e.route, e.status) for e in server.audit()]
    assert ("DELETE", "/v1/keys/{key_id}", 200) in changes
    # the limited admin's two refusals and the attempt on another tenant, in this tenant's log
    assert changes.count(("POST", "/v1/keys", 403)) == 3
    theirs_log = _audit_of(server.app, "other")
    assert [(e.method, e.status, e.target) for e in theirs_log] == [
        ("DELETE", 200, f"key_id={theirs.id}"),
        ("POST", 200, ""),
    ]


def test_the_audit_log_records_who_not_what_and_survives_a_restart(
    server: Server, stored_text: Any
) -> None:
    client, key = server.client, auth(server.keys["write"])
    secret = "my locker code is 4417-zebra"
    said = {"user_id": "alice", "messages": [{"role": "user", "content": secret}]}
    assert client.post("/v1/memories", json=said, headers=key).status_code == 200
    assert client.get("/v1/export", params={"user_id": "alice"}, headers=key).status_code == 403
    assert client.post("/v1/forget", json={"user_id": "alice"}, headers=key).status_code == 200
    server.client.__exit__(None, None, None)
    restarted = create_app(ServerSettings(data=server.data), embedder=HashingEmbedder())
    with TestClient(restarted) as again:
        admin = auth(server.keys["admin"])
        entries = again.get("/v1/audit", headers=admin).json()["entries"]
        found = again.get("/v1/audit", params={"user_id": "alice"}, headers=admin).json()
    write_id = str(server.ring.list()[1].id)
    assert [(e["method"], e["route"], e["status"], e["key_id"]) for e in entries] == [
        ("POST", "/v1/forget", 200, write_id),
        ("GET", "/v1/export", 403, write_id),
        ("POST", "/v1/memories", 200, write_id),
    ]
    assert {e["user_id"] for e in entries} == {pseudonym("alice")}  # forgotten: a hash
    assert len(found["entries"]) == 3 and all(e["tenant"] == TENANT for e in entries)
    assert "4417" not in str(entries)


def test_errors_name_the_missing_scope(server: Server) -> None:
    answer = server.client.get("/v1/users", headers=auth(server.keys["read"]))
    assert answer.status_code == 403
    assert answer.json()["error"] == {
        "code": "forbidden",
        "message": "this key lacks the 'admin' scope (it has: read)",
    }


def _audit_of(app: Any, tenant: str) -> list[Any]:
    with app.state.tenants.lease(tenant) as memory:
        return list(memory.audit_log())
