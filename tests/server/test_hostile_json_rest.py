"""Hostile JSON against every JSON-taking REST route and MCP tool (Hypothesis), sent as raw
JSON text (NaN literals, 5,000 levels of nesting, 20,000 keys, lone-surrogate escapes).
Each request is either refused with a 400/422 whose message names the field (or says the
body cannot be read at all) and stores nothing, or stored, and then every read route of
what it touched answers 200: the export, the agent's state, history and snapshot, the KB's
listings and versions, the session's buffer. Never a 500.

One server (or MCP server) per test, shared by its examples."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from fastapi.testclient import TestClient
from hypothesis import assume, given
from hypothesis.control import currently_in_test_context, event
from mcp.server.fastmcp.exceptions import ToolError

from madeleine import Memory
from madeleine.server.app import ServerSettings, create_app
from madeleine.server.mcp_server import Access, build_mcp
from tests.fakes import HashingEmbedder
from tests.hostile_json import (
    HOSTILE_ANY,
    HOSTILE_OBJECTS,
    HOSTILE_SECONDS,
    RUN,
    Hostile,
    readable,
    refused_cleanly,
)
from tests.server.conftest import A

_ids = itertools.count()
_UNREADABLE = "request body"  # a body JSON cannot read at all names no field


@pytest.fixture
def api(server_settings: ServerSettings) -> Iterator[TestClient]:
    server_settings.rate_limit = 0  # hundreds of requests a second from one key, on purpose
    app = create_app(server_settings, embedder=HashingEmbedder())
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client


def _note(text: str) -> None:
    if currently_in_test_context():
        event(text)


def _stored(api: TestClient, method: str, path: str, body: str, field: str, shape: str) -> bool:
    response = api.request(method, path, content=body.encode("utf-8", "surrogatepass"), headers=A)
    if response.status_code == 200:
        _note(f"{shape}: stored")
        return True
    assert response.status_code in (400, 413, 422), (response.status_code, response.text[:300])
    message = response.json()["error"]["message"]
    assert field in message or _UNREADABLE in message, message[:300]
    _note(f"{shape}: refused ({response.status_code})")
    return False


def _get(api: TestClient, path: str) -> Any:
    response = api.get(path, headers=A)
    assert response.status_code == 200, (path, response.status_code, response.text[:300])
    found = response.json()
    readable(found)
    return found


def _text(hostile: Hostile) -> str:
    assume(hostile.text is not None)  # JSON cannot say it (a tuple key): Python's tests cover it
    assert hostile.text is not None
    return hostile.text


def _user_reads_answer(api: TestClient, user: str) -> int:
    assert api.post("/v1/wait", json={"timeout": 60}, headers=A).status_code == 200
    exported = _get(api, f"/v1/export?user_id={user}")
    assert api.post("/v1/search", json={"user_id": user, "query": "hello"}, headers=A).is_success
    assert api.post("/v1/context", json={"user_id": user, "query": "hello"}, headers=A).is_success
    _get(api, f"/v1/sessions?user_id={user}")
    return len(exported["events"])


@RUN
@given(hostile=HOSTILE_ANY)
def test_message_metadata(api: TestClient, hostile: Hostile) -> None:
    user = f"u{next(_ids)}"
    message = f'{{"content": "hello", "metadata": {_text(hostile)}}}'
    body = f'{{"user_id": "{user}", "messages": [{message}]}}'
    stored = _stored(api, "POST", "/v1/memories", body, "metadata", hostile.shape)
    assert _user_reads_answer(api, user) == int(stored)


@RUN
@given(hostile=HOSTILE_ANY)
def test_event_data(api: TestClient, hostile: Hostile) -> None:
    user = f"u{next(_ids)}"
    body = f'{{"user_id": "{user}", "type": "cart", "data": {_text(hostile)}}}'
    stored = _stored(api, "POST", "/v1/events", body, "data", hostile.shape)
    assert _user_reads_answer(api, user) == int(stored)


def _agent_reads_answer(api: TestClient, agent_id: str) -> dict[str, Any]:
    state: dict[str, Any] = _get(api, f"/v1/agents/{agent_id}?user_id=agents")
    _get(api, f"/v1/agents/{agent_id}/history?user_id=agents")
    _get(api, f"/v1/agents/{agent_id}/snapshot?user_id=agents")
    _get(api, "/v1/export?user_id=agents")
    return state


@RUN
@given(hostile=HOSTILE_ANY)
def test_agent_transition_data(api: TestClient, hostile: Hostile) -> None:
    agent_id = f"a{next(_ids)}"
    body = f'{{"user_id": "agents", "to": "planning", "data": {_text(hostile)}}}'
    path = f"/v1/agents/{agent_id}/transition"
    stored = _stored(api, "POST", path, body, "data", hostile.shape)
    assert _agent_reads_answer(api, agent_id)["version"] == int(stored)


@RUN
@given(hostile=HOSTILE_ANY)
def test_agent_restore_data(api: TestClient, hostile: Hostile) -> None:
    agent_id = f"a{next(_ids)}"
    start = {"user_id": "agents", "to": "planning", "data": {"step": 1}}
    assert api.post(f"/v1/agents/{agent_id}/transition", json=start, headers=A).is_success
    snapshot = f'{{"state": "executing", "version": 1, "data": {_text(hostile)}}}'
    body = f'{{"user_id": "agents", "snapshot": {snapshot}}}'
    stored = _stored(api, "POST", f"/v1/agents/{agent_id}/restore", body, "data", hostile.shape)
    state = _agent_reads_answer(api, agent_id)
    assert state["version"] == 1 + int(stored)
    assert stored or state["data"] == {"step": 1}


def _versions(api: TestClient, doc_id: str) -> list[dict[str, Any]]:
    _get(api, "/v1/kb")
    listing = api.get("/v1/kb/hostile/documents", headers=A)
    assert listing.status_code in (200, 404), listing.text[:300]  # 404: no collection yet
    readable(listing.json())
    response = api.get(f"/v1/kb/hostile/documents/{doc_id}/versions", headers=A)
    assert response.status_code in (200, 404), response.text[:300]
    found: list[dict[str, Any]] = response.json().get("versions", [])
    readable(found)
    assert api.post("/v1/kb/search", json={"query": "handbook"}, headers=A).is_success
    return found


@RUN
@given(hostile=HOSTILE_ANY)
def test_kb_document_metadata(api: TestClient, hostile: Hostile) -> None:
    doc_id = f"d{next(_ids)}"
    document = json.dumps({"text": "The handbook says hello.", "doc_id": doc_id})
    body = document[:-1] + f', "metadata": {_text(hostile)}}}'
    stored = _stored(api, "POST", "/v1/kb/hostile/documents", body, "metadata", hostile.shape)
    assert len(_versions(api, doc_id)) == int(stored)


@RUN
@given(hostile=HOSTILE_OBJECTS)
def test_kb_update_metadata(api: TestClient, hostile: Hostile) -> None:
    doc_id = f"d{next(_ids)}"
    document = {"text": "The handbook says hello.", "doc_id": doc_id, "metadata": {"v": 1}}
    assert api.post("/v1/kb/hostile/documents", json=document, headers=A).is_success
    body = f'{{"metadata": {_text(hostile)}}}'
    path = f"/v1/kb/hostile/documents/{doc_id}"
    stored = _stored(api, "PUT", path, body, "metadata", hostile.shape)
    versions = _versions(api, doc_id)
    assert stored or versions[-1]["metadata"] == {"v": 1}


def _session_reads_answer(api: TestClient, user: str) -> int:
    messages = _get(api, f"/v1/sessions/chat/messages?user_id={user}")["messages"]
    _get(api, f"/v1/sessions/chat/window?user_id={user}")
    assert _user_reads_answer(api, user) == len(messages)
    return len(messages)


@RUN
@given(hostile=HOSTILE_ANY)
def test_session_message_metadata(api: TestClient, hostile: Hostile) -> None:
    user = f"u{next(_ids)}"
    message = f'{{"content": "hello", "metadata": {_text(hostile)}}}'
    body = f'{{"user_id": "{user}", "message": {message}, "ttl_seconds": 60}}'
    stored = _stored(api, "POST", "/v1/sessions/chat/messages", body, "metadata", hostile.shape)
    assert _session_reads_answer(api, user) == int(stored)


@pytest.mark.parametrize("ttl", HOSTILE_SECONDS)
def test_session_ttl(api: TestClient, ttl: str) -> None:
    body = f'{{"user_id": "u", "message": {{"content": "hello"}}, "ttl_seconds": {ttl}}}'
    stored = _stored(api, "POST", "/v1/sessions/chat/messages", body, "ttl_seconds", ttl)
    assert stored == (ttl in ("60", "86400"))
    assert _session_reads_answer(api, "u") == int(stored)


def test_a_body_too_deep_to_parse_is_a_400_that_says_so(api: TestClient) -> None:
    body = '{"user_id": "u", "messages": ' + "[" * 100_000 + "]" * 100_000 + "}"
    response = api.post("/v1/memories", content=body, headers=A)
    assert response.status_code == 400
    assert "nested too deeply" in response.json()["error"]["message"]


_ANY_FIELD = {
    "NaN": "NaN",
    "-Infinity": "-Infinity",
    "1e300": "1e300",
    "a 400-digit int": "9" * 400,
    "40 levels": '{"a":' * 40 + "1" + "}" * 40,
    "3,000 levels": "[" * 3_000 + "]" * 3_000,
    "a lone surrogate": '"x\\ud800y"',
    "20,000 keys": json.dumps({f"k{i}": i for i in range(20_000)}),
}
_SANE = {
    "user_id": "u",
    "query": "q",
    "question": "q",
    "text": "t",
    "to": "planning",
    "type": "t",
    "statement": "s",
    "description": "d",
    "run": "r",
    "importance": 0.5,
    "message": {"content": "c"},
    "messages": [{"content": "c"}],
    "snapshot": {"state": "idle"},
}


def test_no_field_of_any_route_answers_500_to_hostile_json(api: TestClient) -> None:
    """Every field of every request body the API declares (routes added later included),
    given each hostile value in turn, with sane values in the other fields: a 4xx, never a
    500. Found an int too large for float() in the importance and maintain routes."""
    spec = api.app.openapi()  # type: ignore[attr-defined]
    tried = 0
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            schema_ref = (
                operation.get("requestBody", {})
                .get("content", {})
                .get("application/json", {})
                .get("schema", {})
                .get("$ref")
            )
            if schema_ref is None:
                continue
            fields = spec["components"]["schemas"][schema_ref.rsplit("/", 1)[1]]["properties"]
            url = re.sub(r"\{[^}]+\}", "x", path)
            for field in fields:
                others = {k: v for k, v in _SANE.items() if k in fields and k != field}
                for name, raw in _ANY_FIELD.items():
                    body = (
                        json.dumps(others)[:-1] + (", " if others else "") + f'"{field}": {raw}}}'
                    )
                    response = api.request(method.upper(), url, content=body, headers=A)
                    assert response.status_code < 500, (method, path, field, name, response.text)
                    tried += 1
    assert tried > 300  # the spec was read: every body route, every field


# -- MCP ---------------------------------------------------------------------------------------


@pytest.fixture
def mcp_memory(tmp_path: Path) -> Iterator[Memory]:
    with Memory(tmp_path / "mcp", embedder=HashingEmbedder(), background=False) as memory:
        yield memory


@RUN
@given(hostile=HOSTILE_ANY)
def test_mcp_remember_metadata(mcp_memory: Memory, hostile: Hostile) -> None:
    """The ``remember`` tool's messages as the SDK hands them over, hostile metadata and all."""
    _text(hostile)  # what an MCP client can send: JSON
    server = build_mcp(lambda: Access(mcp_memory), "dev")  # the stdio server's full access
    user = f"u{next(_ids)}"
    messages = [{"role": "user", "content": "hello there", "metadata": hostile.value}]

    async def remember() -> Any:
        return await server.call_tool("remember", {"messages": messages, "user_id": user})

    try:
        anyio.run(remember)
        stored = True
    except ToolError as exc:
        refused_cleanly(ValueError(str(exc)), "metadata")
        stored = False
    event(f"{hostile.shape}: {'stored' if stored else 'refused'}")
    for tool, arguments in (("recall", {"query": "hello"}), ("profile", {})):
        anyio.run(server.call_tool, tool, {**arguments, "user_id": user})
    exported = mcp_memory.export_user(user)
    readable(exported)
    assert len(exported["events"]) == int(stored)
