"""The MCP server through the SDK's own client: over stdio (a real ``madeleine mcp``
process) and over streamable HTTP (with the server's API keys)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from madeleine.config import Settings
from madeleine.server.keys import key_ring
from madeleine.server.mcp_server import Access, KeyVerifier, build_mcp, tenant_memory
from madeleine.server.tenants import Tenants
from tests.fakes import HashingEmbedder
from tests.server.conftest import LiveServer

TOOLS = {"remember", "recall", "context", "profile", "forget"}


def _text(result: Any) -> str:
    assert not result.isError, result.content
    return "\n".join(part.text for part in result.content if hasattr(part, "text"))


async def _exercise(session: ClientSession) -> None:
    await session.initialize()
    names = {tool.name for tool in (await session.list_tools()).tools}
    assert names >= TOOLS
    said = _text(await session.call_tool("remember", {"text": "I live in Lisbon and I own a cat."}))
    assert "searchable now" in said
    recalled = _text(await session.call_tool("recall", {"query": "where do I live?"}))
    assert "Lisbon" in recalled and "[ep_" in recalled
    context = _text(await session.call_tool("context", {"query": "where do I live?"}))
    assert "Lisbon" in context
    profile = _text(await session.call_tool("profile", {}))
    assert "Lisbon" in profile
    memory_id = recalled.split("[", 1)[1].split(" ", 1)[0]
    assert "Deleted" in _text(await session.call_tool("forget", {"memory_id": memory_id}))
    bad = await session.call_tool("remember", {})
    assert bad.isError


def test_stdio_with_the_sdk_client(tmp_path: Path) -> None:
    env = {**os.environ, "MADELEINE_USER": "dev", "PYTHONPATH": str(Path.cwd() / "src")}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "madeleine", "mcp", "--data", str(tmp_path / "data")],
        env=env,
    )

    async def run() -> None:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await _exercise(session)

    asyncio.run(run())


class _McpHttp:
    def __init__(self, data: Path) -> None:
        self.tenants = Tenants(data, Settings(), HashingEmbedder())
        self.ring = key_ring(data, {"key-a": "alpha", "key-b": "beta"})
        verifier = KeyVerifier(self.ring)
        server = build_mcp(
            tenant_memory(self.tenants, verifier), "dev", port=0, token_verifier=verifier
        )
        self.live = LiveServer(app=server.streamable_http_app())
        self.url = f"{self.live.url}/mcp"

    def stop(self) -> None:
        self.live.stop()
        self.tenants.close()


@pytest.fixture
def mcp_http(tmp_path: Path) -> Any:
    server = _McpHttp(tmp_path / "data")
    yield server
    server.stop()


def _session(url: str, key: str | None) -> Any:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.AsyncClient(headers=headers, timeout=60)


def test_http_with_keys_and_tenants(mcp_http: _McpHttp) -> None:
    async def run() -> str:
        async with (
            _session(mcp_http.url, "key-a") as http,
            streamable_http_client(mcp_http.url, http_client=http) as (read, write, _),
            ClientSession(read, write) as session,
        ):
            await _exercise(session)
            await session.call_tool("remember", {"text": "My dentist is Dr. Rui Costa."})
        async with (
            _session(mcp_http.url, "key-b") as http,
            streamable_http_client(mcp_http.url, http_client=http) as (read, write, _),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return _text(await session.call_tool("recall", {"query": "dentist"}))

    assert "Rui Costa" not in asyncio.run(run())  # beta's store does not hold alpha's memory


def test_http_without_a_valid_key_is_401(mcp_http: _McpHttp) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    accept = {"Accept": "application/json, text/event-stream"}
    assert httpx.post(mcp_http.url, json=body, headers=accept).status_code == 401
    wrong = {**accept, "Authorization": "Bearer nope"}
    assert httpx.post(mcp_http.url, json=body, headers=wrong).status_code == 401


def test_http_malformed_json_and_huge_bodies_are_refused(mcp_http: _McpHttp) -> None:
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "Authorization": "Bearer key-a",
    }
    malformed = httpx.post(mcp_http.url, content=b"{not json", headers=headers)
    assert malformed.status_code == 400
    huge = b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "pad": "' + b"x" * 12_000_000 + b'"}'
    assert httpx.post(mcp_http.url, content=huge, headers=headers).status_code == 413


def _calls(url: str, key: str, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    async def run() -> list[Any]:
        async with (
            _session(url, key) as http,
            streamable_http_client(url, http_client=http) as (read, write, _),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return [await session.call_tool(name, args) for name, args in calls]

    return asyncio.run(run())


def _error(result: Any) -> str:
    assert result.isError, result.content
    return "\n".join(part.text for part in result.content if hasattr(part, "text"))


def test_http_tools_respect_the_key_scopes_and_limits(mcp_http: _McpHttp) -> None:
    _, reader = mcp_http.ring.create("alpha", "reader", scopes=["read"])
    _, agent = mcp_http.ring.create("alpha", "agent", users=["dev"])
    _, operator = mcp_http.ring.create(None, "ops", operator=True)
    remember = ("remember", {"text": "I live in Lisbon."})
    refused, recalled = _calls(mcp_http.url, reader, [remember, ("recall", {"query": "x"})])
    assert "lacks the 'write' scope" in _error(refused)
    assert not recalled.isError
    mine, theirs = _calls(
        mcp_http.url, agent, [remember, ("recall", {"query": "x", "user_id": "someone"})]
    )
    assert not mine.isError
    assert "may not reach user 'someone'" in _error(theirs)
    entries = mcp_http.tenants.memory("alpha").audit_log()
    assert [(e.route, e.status, e.user_id) for e in entries] == [
        ("mcp:remember", 200, "dev"),
        ("mcp:remember", 403, "dev"),
    ]
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    accept = {"Accept": "application/json, text/event-stream"}
    as_operator = {**accept, "Authorization": f"Bearer {operator}"}
    assert httpx.post(mcp_http.url, json=body, headers=as_operator).status_code == 401


class _Failing:
    """A store whose every call fails with a server-side detail."""

    def search(self, *args: Any, **kwargs: Any) -> Any:
        raise FileNotFoundError("[Errno 2] No such file or directory: '/srv/secret.md'")

    def profile(self, *args: Any, **kwargs: Any) -> Any:
        raise ValueError("user_id must be a non-empty str")


def test_mcp_errors_never_name_exceptions_or_server_details() -> None:
    from mcp.shared.memory import create_connected_server_and_client_session

    server = build_mcp(lambda: Access(_Failing()), "dev")  # type: ignore[arg-type]

    async def run() -> tuple[Any, Any]:
        async with create_connected_server_and_client_session(server._mcp_server) as session:
            failed = await session.call_tool("recall", {"query": "x"})
            refused = await session.call_tool("profile", {})
            return failed, refused

    failed, refused = asyncio.run(run())
    text = " ".join(p.text for p in failed.content if hasattr(p, "text"))
    assert failed.isError and "internal error (incident" in text
    assert "FileNotFound" not in text and "secret" not in text and "Errno" not in text
    said = " ".join(p.text for p in refused.content if hasattr(p, "text"))
    assert refused.isError and "user_id must be" in said  # the caller's own mistake, as said
