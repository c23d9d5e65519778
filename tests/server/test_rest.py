"""The REST contract: auth, tenants, the main calls, and errors as JSON with the right status."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from madeleine.server.app import ServerSettings, create_app
from tests.fakes import HashingEmbedder
from tests.server.conftest import A, B

MOVE = [
    {"role": "user", "content": "I live in Seattle and work at Stripe as a backend engineer."},
    {"role": "assistant", "content": "Got it, Seattle and Stripe."},
]


def _add(client: TestClient, headers: dict[str, str], user: str = "u1", **extra: Any) -> Any:
    body = {"user_id": user, "messages": MOVE, "timestamp": "2024-05-01T10:00:00Z", "wait": True}
    body.update(extra)
    response = client.post("/v1/memories", headers=headers, json=body)
    assert response.status_code == 200, response.text
    return response.json()


def test_health_needs_no_key_and_docs_are_served(client: TestClient) -> None:
    assert client.get("/health").json()["status"] == "ok"
    assert client.get("/openapi.json").json()["info"]["title"] == "Madeleine"
    assert client.get("/docs").status_code == 200


def test_missing_or_unknown_key_is_401(client: TestClient) -> None:
    body = {"query": "x", "user_id": "u1"}
    for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": "Basic abc"}):
        response = client.post("/v1/search", headers=headers, json=body)
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "unauthorized"
    assert client.get("/metrics").status_code == 401


def test_add_wait_then_search_and_context(client: TestClient) -> None:
    added = _add(client, A)
    assert len(added["added"]) == 2 and added["duplicates"] == [] and added["searchable"]
    again = _add(client, A)
    assert again["added"] == [] and len(again["duplicates"]) == 2
    hits = client.post(
        "/v1/search", headers=A, json={"query": "where does the user live", "user_id": "u1"}
    ).json()["hits"]
    assert any("Seattle" in h["text"] for h in hits)
    first = hits[0]
    assert set(first) == {
        "id", "kind", "text", "score", "source_ids", "timestamp", "session_id", "speaker",
        "explain",
    }  # fmt: skip
    context = client.post(
        "/v1/context",
        headers=A,
        json={"query": "where does the user work", "user_id": "u1", "budget_tokens": 300},
    ).json()
    assert "Stripe" in context["text"] and 0 < context["tokens"] <= 300
    assert context["items"]


def test_tenants_are_isolated_even_by_guessed_ids(client: TestClient) -> None:
    _add(client, A)
    hits = client.post("/v1/search", headers=A, json={"query": "Seattle", "user_id": "u1"})
    memory_id = hits.json()["hits"][0]["id"]
    assert (
        client.post("/v1/search", headers=B, json={"query": "Seattle", "user_id": "u1"}).json()[
            "hits"
        ]
        == []
    )
    assert client.get("/v1/facts", headers=B, params={"user_id": "u1"}).json()["facts"] == []
    exported = client.get("/v1/export", headers=B, params={"user_id": "u1"}).json()
    assert "Seattle" not in str(exported)
    deleted = client.delete(f"/v1/memories/{memory_id}", headers=B, params={"user_id": "u1"})
    assert deleted.status_code == 404
    forgot = client.post("/v1/forget", headers=B, json={"user_id": "u1"})
    assert forgot.status_code == 200
    still = client.post("/v1/search", headers=A, json={"query": "Seattle", "user_id": "u1"})
    assert any(h["id"] == memory_id for h in still.json()["hits"])


def test_facts_profile_history_and_delete(client: TestClient) -> None:
    _add(client, A)
    facts = client.get("/v1/facts", headers=A, params={"user_id": "u1"}).json()["facts"]
    assert any("Seattle" in f["statement"] for f in facts)
    fact_id = facts[0]["id"]
    history = client.get(f"/v1/facts/{fact_id}/history", headers=A, params={"user_id": "u1"})
    assert history.json()["history"][0]["id"] == fact_id
    assert client.get("/v1/profile", headers=A, params={"user_id": "u1"}).json()["profile"]
    assert client.get("/v1/alerts", headers=A, params={"user_id": "u1"}).status_code == 200
    log = client.get("/v1/routing-log", headers=A, params={"user_id": "u1"}).json()
    assert log["decisions"]
    deleted = client.delete(f"/v1/memories/{fact_id}", headers=A, params={"user_id": "u1"})
    assert deleted.status_code == 200
    stats = client.get("/v1/stats", headers=A).json()
    assert "path" not in stats


def test_errors_are_json_with_the_right_status(client: TestClient) -> None:
    bad_json = client.post("/v1/search", headers=A, content=b"{not json")
    assert bad_json.status_code == 400
    assert bad_json.json()["error"]["code"] == "malformed_json"
    wrong_type = client.post("/v1/search", headers=A, json={"query": 5, "user_id": "u1"})
    assert wrong_type.status_code == 422
    assert "query" in wrong_type.json()["error"]["message"]
    unknown_field = client.post(
        "/v1/search", headers=A, json={"query": "x", "user_id": "u1", "limt": 3}
    )
    assert unknown_field.status_code == 422
    bad_value = client.post(
        "/v1/search", headers=A, json={"query": "x", "user_id": "u1", "limit": 0}
    )
    assert bad_value.status_code == 400
    assert "limit" in bad_value.json()["error"]["message"]
    bad_message = client.post(
        "/v1/memories", headers=A, json={"user_id": "u1", "messages": [{"role": "user"}]}
    )
    assert bad_message.status_code == 400
    not_found = client.get("/v1/nothing-here", headers=A)
    assert not_found.status_code == 404 and not_found.json()["error"]["code"] == "not_found"
    for response in (bad_json, wrong_type, bad_value, not_found):
        assert "Traceback" not in response.text


def test_a_body_over_the_limit_is_413_and_nothing_is_written(
    server_settings: ServerSettings,
) -> None:
    server_settings.max_body_bytes = 2_000
    app = create_app(server_settings, embedder=HashingEmbedder())
    with TestClient(app, raise_server_exceptions=False) as client:
        huge = [{"role": "user", "content": "x" * 5_000}]
        response = client.post("/v1/memories", headers=A, json={"user_id": "u1", "messages": huge})
        assert response.status_code == 413
        assert response.json()["error"]["code"] == "too_large"
        assert client.get("/v1/export", headers=A, params={"user_id": "u1"}).json()["events"] == []


def test_a_streamed_body_over_the_limit_is_413_too(server_settings: ServerSettings) -> None:
    """Chunked transfer has no Content-Length: the body is cut where it crosses the limit."""
    import httpx

    from tests.server.conftest import LiveServer

    server_settings.max_body_bytes = 2_000
    live = LiveServer(server_settings)
    try:
        prefix = b'{"user_id": "u1", "messages": [{"role": "user", "content": "'

        def chunks() -> Any:
            yield prefix
            for _ in range(50):
                yield b"x" * 500
            yield b'"}]}'

        response = httpx.post(f"{live.url}/v1/memories", headers=A, content=chunks())
        assert response.status_code == 413, response.text
        assert response.json()["error"]["code"] == "too_large"
        exported = httpx.get(f"{live.url}/v1/export", headers=A, params={"user_id": "u1"})
        assert exported.json()["events"] == []
    finally:
        live.stop()


def test_wrong_method_is_405_and_unknown_fact_history_404(client: TestClient) -> None:
    for method, path in (("GET", "/v1/search"), ("GET", "/v1/memories"), ("PUT", "/v1/forget")):
        response = client.request(method, path, headers=A)
        assert response.status_code == 405, (method, path, response.status_code)
        assert response.json()["error"]["code"] == "method_not_allowed"
        assert "POST" in response.headers["allow"]
    assert client.get("/", headers=A).status_code in (200, 503)  # the dashboard still served
    history = client.get("/v1/facts/fact_99/history", headers=A, params={"user_id": "u1"})
    assert history.status_code == 404 and history.json()["error"]["code"] == "not_found"


def test_rate_limit_gives_429_with_retry_after(server_settings: ServerSettings) -> None:
    server_settings.rate_limit = 1.0
    server_settings.rate_burst = 2
    app = create_app(server_settings, embedder=HashingEmbedder())
    with TestClient(app, raise_server_exceptions=False) as client:
        codes = [client.get("/v1/stats", headers=A).status_code for _ in range(4)]
        assert codes[:2] == [200, 200] and 429 in codes[2:]
        limited = client.get("/v1/stats", headers=A)
        assert limited.status_code == 429 and int(limited.headers["Retry-After"]) >= 1
        assert client.get("/v1/stats", headers=B).status_code == 200  # per key


def test_stored_keys_work_and_stop_working_when_revoked(
    server_settings: ServerSettings,
) -> None:
    from madeleine.server.keys import key_ring

    ring = key_ring(server_settings.data)
    record, key = ring.create("gamma", "test")
    app = create_app(server_settings, embedder=HashingEmbedder())
    with TestClient(app, raise_server_exceptions=False) as client:
        headers = {"Authorization": f"Bearer {key}"}
        sessions = {"user_id": "u1"}
        assert client.get("/v1/sessions", headers=headers, params=sessions).status_code == 200
        assert ring.revoke(str(record.id))
        app.state.auth.forget_cached_keys()
        assert client.get("/v1/sessions", headers=headers, params=sessions).status_code == 401
    assert key not in (server_settings.data / "keys.db").read_bytes().decode("latin-1")


def test_internal_errors_hide_the_trace(client: TestClient, monkeypatch: Any) -> None:
    from madeleine.api import Memory

    def boom(self: Memory) -> dict[str, Any]:
        raise RuntimeError("secret detail")

    monkeypatch.setattr(Memory, "stats", boom)
    response = client.get("/v1/stats", headers=A)
    assert response.status_code == 500
    assert response.json()["error"]["code"] == "internal"
    assert "secret detail" not in response.text


def test_metrics_count_requests_by_route_template(client: TestClient) -> None:
    _add(client, A)
    client.get("/v1/facts/fact_1/history", headers=A, params={"user_id": "u1"})
    text = client.get("/metrics", headers=A).text
    assert 'route="/v1/facts/{fact_id}/history"' in text
    # latency is by route, for every tenant together: the server operator's view only
    assert "madeleine_request_seconds_bucket" not in text
