"""The knowledge base over REST, MCP and the command line: the same governance as the
library (ACL, versions, tenants), clear errors, and no way to make the server read its files."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from mcp.shared.memory import create_connected_server_and_client_session

from madeleine import Memory
from madeleine.server.mcp_server import Access, build_mcp
from tests.fakes import HashingEmbedder
from tests.server.conftest import A, B

ROOT = Path(__file__).resolve().parents[2]
LEAVE = "# Annual leave\n\nEmployees get 25 days of annual leave per year."
SECRET = "Directors get 40 days of annual leave per year."


def _seed(client: TestClient) -> None:
    created = client.put("/v1/kb/hr", json={"description": "HR rules: leave"}, headers=A)
    assert created.status_code == 200, created.text
    for body in (
        {"text": LEAVE, "doc_id": "leave", "title": "Leave policy"},
        {"text": SECRET, "doc_id": "exec", "acl": ["group:directors"], "source_type": "faq"},
    ):
        response = client.post("/v1/kb/hr/documents", json=body, headers=A)
        assert response.status_code == 200, response.text
    assert client.post("/v1/wait", json={}, headers=A).status_code == 200


def _search(client: TestClient, principal: dict[str, Any] | None, headers: Any = A) -> Any:
    body: dict[str, Any] = {"query": "days of annual leave for directors", "limit": 10}
    if principal is not None:
        body["principal"] = principal
    response = client.post("/v1/kb/search", json=body, headers=headers)
    assert response.status_code == 200, response.text
    return [h["doc_id"] for h in response.json()["hits"]]


def test_documents_versions_and_acl_over_rest(client: TestClient) -> None:
    _seed(client)
    assert _search(client, {"user_id": "d1", "groups": ["directors"]})[0] == "exec"
    assert "exec" not in _search(client, {"user_id": "u1", "groups": ["hr"]})
    assert _search(client, None) == ["leave"]  # no principal: public documents only
    listed = client.get("/v1/kb", headers=A).json()["collections"]
    assert [c["name"] for c in listed] == ["hr"] and listed[0]["documents"] == 2
    documents = client.get("/v1/kb/hr/documents", headers=A).json()["documents"]
    assert {d["doc_id"] for d in documents} == {"leave", "exec"}
    updated = client.put(
        "/v1/kb/hr/documents/leave", json={"text": LEAVE.replace("25", "27")}, headers=A
    )
    assert updated.status_code == 200 and updated.json()["version"] == 2
    versions = client.get("/v1/kb/hr/documents/leave/versions", headers=A).json()["versions"]
    assert [v["version"] for v in versions] == [1, 2]
    assert client.delete("/v1/kb/hr/documents/leave", headers=A).json() == {"deleted": True}
    assert client.delete("/v1/kb/hr/documents/leave", headers=A).status_code == 404


def test_tenants_do_not_see_each_others_knowledge_base(client: TestClient) -> None:
    _seed(client)
    assert client.get("/v1/kb", headers=B).json() == {"collections": []}
    assert _search(client, {"user_id": "d1", "groups": ["directors"]}, headers=B) == []
    assert client.get("/v1/kb/hr/documents", headers=B).status_code == 404
    assert client.delete("/v1/kb/hr/documents/leave", headers=B).status_code == 404


def test_bad_requests_get_clear_errors(client: TestClient) -> None:
    _seed(client)
    cases = [
        ("post", "/v1/kb/hr/documents", {"text": ""}),
        ("post", "/v1/kb/hr/documents", {"text": 42}),
        ("post", "/v1/kb/hr/documents", {"text": "x", "acl": ["role:admin"]}),
        ("post", "/v1/kb/hr/documents", {"text": "x", "effective_from": "yesterday-ish"}),
        ("post", "/v1/kb/bad name!/documents", {"text": "x"}),
        ("post", "/v1/kb/search", {"query": "x", "limit": 0}),
        ("post", "/v1/kb/search", {"query": "x", "channels": ["graph"]}),
        ("post", "/v1/kb/search", {"query": "x", "principal": {"groups": "hr"}}),
        ("put", "/v1/kb/hr/documents/missing", {"text": "x"}),
    ]
    for method, url, body in cases:
        response = getattr(client, method)(url, json=body, headers=A)
        assert 400 <= response.status_code < 500, (url, body, response.text)
        assert response.json().get("detail") or response.json().get("error"), response.text
    assert client.post("/v1/kb/search", json={"query": "x"}).status_code == 401


def test_a_path_in_a_request_is_text_never_a_server_file(
    client: TestClient, tmp_path: Path
) -> None:
    secret = tmp_path / "server-secret.txt"
    secret.write_text("the root password is hunter2", encoding="utf-8")
    folder = tmp_path / "a-folder.md"
    folder.mkdir()
    answers = {}
    for name, path in (
        ("file", secret),
        ("folder", folder),
        ("missing", tmp_path / "missing.md"),
    ):
        added = client.post(
            "/v1/kb/hr/documents", json={"text": str(path), "doc_id": name}, headers=A
        )
        assert added.status_code == 200, added.text
        # an update without text re-reads the stored text: as text, never as a path
        updated = client.put(f"/v1/kb/hr/documents/{name}", json={"title": "again"}, headers=A)
        assert updated.status_code == 200, updated.text
        assert updated.json()["version"] == 2
        answers[name] = (added.json()["chunks"], updated.json()["chunks"])
    # a file, a folder and nothing at all answer alike: no existence oracle
    assert len(set(answers.values())) == 1
    client.post("/v1/wait", json={}, headers=A)
    for query in ("server secret txt", "root password hunter2"):  # the paths; the file's words
        hits = client.post("/v1/kb/search", json={"query": query, "limit": 50}, headers=A)
        assert all("hunter2" not in h["text"] for h in hits.json()["hits"])
    found = client.post("/v1/kb/search", json={"query": "server secret txt"}, headers=A).json()
    assert found["hits"], "the paths were stored as text, and are found as text"
    listing = client.get("/v1/kb/hr/documents", headers=A).text
    assert "hunter2" not in listing


def test_text_is_never_read_as_a_path_by_the_library(tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("the vault code is 4471", encoding="utf-8")
    with Memory(tmp_path / "m", embedder=HashingEmbedder()) as memory:
        kb = memory.kb("hr")
        for text in (str(secret), str(tmp_path / "missing.md")):
            try:
                kb.add_document(text)
            except ValueError as exc:  # the same refusal for both: shape, not existence
                assert "pathlib.Path" in str(exc)
            else:
                raise AssertionError("a path-shaped str must not be stored silently")
        stored = kb.add_document(str(secret), doc_id="words", format="text")
        kb.update_document("words", title="again")
        assert "4471" not in " ".join(v.l1 for v in kb.versions("words"))
        read = kb.add_document(secret, doc_id="file")  # a Path reads the file: a local act
        assert read.chunks == 1 and stored.chunks == 1


def test_ask_over_rest_without_an_llm_returns_evidence(client: TestClient) -> None:
    _seed(client)
    response = client.post(
        "/v1/ask",
        json={"question": "How many days of leave?", "user_id": "u1"},
        headers=A,
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["llm"] is False and body["kb_hits"][0]["doc_id"] == "leave"
    context = client.post(
        "/v1/context",
        json={"query": "How many days of leave?", "user_id": "u1", "budget_tokens": 300},
        headers=A,
    ).json()
    assert context["kb_items"] and "<reference-documents" in context["text"]


def test_mcp_search_kb_reads_as_the_configured_user_and_groups(tmp_path: Path) -> None:
    with Memory(tmp_path / "m", embedder=HashingEmbedder()) as memory:
        kb = memory.kb("hr")
        kb.add_document(LEAVE, doc_id="leave", title="Leave policy")
        kb.add_document(SECRET, doc_id="exec", acl=["group:directors"])
        assert memory.wait(30)

        async def found(groups: list[str]) -> str:
            server = build_mcp(lambda: Access(memory), "u1", groups=groups)
            async with create_connected_server_and_client_session(server) as session:
                result = await session.call_tool("search_kb", {"query": "directors leave days"})
                assert not result.isError
                return "\n".join(p.text for p in result.content if hasattr(p, "text"))

        assert "40 days" in asyncio.run(found(["directors"]))
        staff = asyncio.run(found([]))
        assert "40 days" not in staff and "25 days" in staff and "[kb_" in staff


def _cli(*args: str, data: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run(
        [sys.executable, "-m", "madeleine.cli", "--data", str(data), "kb", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_cli_adds_a_folder_incrementally_and_searches(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "leave.md").write_text(LEAVE, encoding="utf-8")
    (docs / "pay.html").write_text(
        "<html><body><h1>Payroll</h1><p>Salaries are paid on the 25th.</p></body></html>",
        encoding="utf-8",
    )
    data = tmp_path / "data"
    first = _cli("add", "hr", str(docs), "--description", "HR rules", data=data)
    assert first.returncode == 0, first.stderr
    assert "2 added" in first.stdout
    again = _cli("add", "hr", str(docs), data=data)
    assert again.returncode == 0 and "2 unchanged" in again.stdout, again.stdout + again.stderr
    listed = _cli("list", "hr", data=data)
    assert "leave" in listed.stdout and "pay" in listed.stdout, listed.stdout + listed.stderr
    found = _cli("search", "when are salaries paid", data=data)
    assert found.returncode == 0 and "25th" in found.stdout, found.stdout + found.stderr
    missing = _cli("add", "hr", str(tmp_path / "nope"), data=data)
    assert missing.returncode != 0 and "no file or folder" in missing.stderr
    for command in (
        ["list", "ghost"],
        ["delete", "ghost"],
        ["search", "x", "--collection", "ghost"],
    ):
        unknown = _cli(*command, data=data)
        assert unknown.returncode == 1 and "no collection 'ghost'" in unknown.stderr, command
    listed = _cli("list", data=data)
    assert "ghost" not in listed.stdout and "hr: 2 documents" in listed.stdout, listed.stdout
