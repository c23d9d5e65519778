"""The knowledge base with an LLM: chunk contexts written by the model, and ``mem.ask``'s
tool loop, both against a scripted OpenAI-compatible server on loopback."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from madeleine import Memory, Principal
from madeleine.tools import TOOL_NAMES, TOOLS, call_tool
from tests.fake_llm import FakeLLM, fake_llm_fixture, tool_calls  # noqa: F401
from tests.fakes import HashingEmbedder

POLICY = (
    "# Returns\n\nItems can be sent back within 30 days with the receipt.\n\n"
    "# Shipping\n\nParcels leave the warehouse within two working days."
)
SECRET = "Directors approve refunds above 5000 euros personally."


@pytest.fixture
def mem(tmp_path: Path, fake_llm: FakeLLM) -> Iterator[Memory]:
    memory = Memory(
        tmp_path / "m",
        embedder=HashingEmbedder(dim=128),
        llm_base_url=fake_llm.base_url,
        llm_model="test-model",
        llm_max_retries=0,
    )
    yield memory
    memory.close()


def _situate(request: dict[str, Any]) -> dict[str, str]:
    excerpt = request["messages"][-1]["content"]
    topic = "refund deadline" if "sent back" in excerpt else "dispatch delay"
    return {"context": f"Acme store policy section about the {topic}."}


def test_llm_contexts_are_embedded_and_searched_and_the_document_leads_the_prompt(
    mem: Memory, fake_llm: FakeLLM
) -> None:
    fake_llm.script(*[_situate] * 4)
    kb = mem.kb("store")
    kb.add_document(POLICY, doc_id="policy", title="Store policy")
    assert mem.wait(30)
    requests = [r for r in fake_llm.requests if "chunk_context" in json.dumps(r)]
    assert len(requests) == 2  # one per chunk
    # the cacheable part — instructions and the whole document — is identical and comes first
    assert requests[0]["messages"][:2] == requests[1]["messages"][:2]
    assert "<document" in requests[0]["messages"][1]["content"]
    assert "Parcels leave" in requests[0]["messages"][1]["content"]
    assert "<excerpt>" in requests[0]["messages"][-1]["content"]
    # a word only the model wrote finds the chunk through BM25, and the hit shows the context
    hits = mem.search_kb("refund deadline", channels=["bm25"])
    assert hits and "sent back" in hits[0].text
    assert "refund deadline" in hits[0].prefix and hits[0].prefix.startswith("Store policy")
    # an update re-situates only the chunk that changed
    kb.update_document(
        "policy", POLICY.replace("two working days", "one working day"), title="Store policy"
    )
    assert mem.wait(30)
    requests = [r for r in fake_llm.requests if "chunk_context" in json.dumps(r)]
    assert len(requests) == 3
    assert "one working day" in requests[-1]["messages"][-1]["content"]
    hits = mem.search_kb("refund deadline", channels=["bm25"])
    assert hits[0].version == 2 and "refund deadline" in hits[0].prefix


def test_a_failing_llm_leaves_the_heuristic_prefix_and_indexing_goes_on(
    mem: Memory, fake_llm: FakeLLM
) -> None:
    fake_llm.script(500, "not json at all")
    mem.kb("store").add_document(POLICY, doc_id="policy", title="Store policy")
    assert mem.wait(30)
    hits = mem.search_kb("how long do I have to send items back")
    assert hits and hits[0].prefix == "Store policy > Returns"
    assert mem.stats()["kb"]["kb_pending"] == 0


def test_ask_runs_the_tool_loop_and_cites_only_what_it_retrieved(
    mem: Memory, fake_llm: FakeLLM
) -> None:
    fake_llm.script(*[{"context": ""}] * 3)
    mem.kb("store").add_document(POLICY, doc_id="policy", title="Store policy")
    mem.kb("board").add_document(SECRET, doc_id="refunds", acl=["group:directors"])
    assert mem.wait(30)
    fake_llm.requests.clear()
    fake_llm.script(
        tool_calls(("search_kb", {"query": "return items deadline"}), ("get_profile", {})),
        lambda request: (
            f"You have 30 days with the receipt [{_first_kb_id(request)}] [kb_999999] [ep_1]."
        ),
    )
    answer = mem.ask("How long can I return an item?", user_id="u1", principal=Principal("u1"))
    assert answer.llm and "30 days" in answer.text
    assert [s.tool for s in answer.steps] == ["search_kb", "get_profile"]
    assert answer.steps[0].results >= 1 and answer.steps[0].error is None
    cited = answer.citations
    assert len(cited) == 1 and cited[0].startswith("kb_")  # invented ids are dropped
    first = fake_llm.requests[0]
    assert {t["function"]["name"] for t in first["tools"]} == set(TOOL_NAMES)
    tool_messages = [m for m in fake_llm.requests[1]["messages"] if m["role"] == "tool"]
    assert len(tool_messages) == 2
    # the principal bounds the tools: the directors' document never reached the model
    assert "5000 euros" not in json.dumps(fake_llm.requests[1])


def _first_kb_id(request: dict[str, Any]) -> str:
    for message in request["messages"]:
        if message["role"] == "tool" and "results" in message["content"]:
            return str(json.loads(message["content"])["results"][0]["id"])
    raise AssertionError("no search_kb result in the conversation")


def test_ask_stops_after_max_steps_and_forces_an_answer(mem: Memory, fake_llm: FakeLLM) -> None:
    mem.kb("store").add_document(POLICY, doc_id="policy", title="Store policy")
    fake_llm.script(*[{"context": ""}] * 2)
    assert mem.wait(30)
    fake_llm.clear()  # under load a chunk's context request may time out and leave its reply
    fake_llm.requests.clear()
    call = tool_calls(("search_kb", {"query": "returns"}))
    fake_llm.script(call, call, "Thirty days.")
    answer = mem.ask("returns?", user_id="u1", max_steps=2)
    assert answer.text == "Thirty days." and len(answer.steps) == 2
    assert [r["tool_choice"] for r in fake_llm.requests] == ["auto", "auto", "none"]


def test_ask_falls_back_to_the_evidence_when_the_endpoint_fails(
    mem: Memory, fake_llm: FakeLLM
) -> None:
    fake_llm.script(*[{"context": ""}] * 2)
    mem.kb("store").add_document(POLICY, doc_id="policy", title="Store policy")
    assert mem.wait(30)
    fake_llm.clear()
    fake_llm.script(*[401] * 3)
    answer = mem.ask("How long can I return an item?", user_id="u1")
    assert not answer.llm and answer.error and "could not answer" in answer.text
    assert answer.kb_hits and answer.kb_hits[0].doc_id == "policy"
    assert answer.citations


def test_ask_without_an_llm_returns_the_routed_evidence(tmp_path: Path) -> None:
    with Memory(tmp_path / "m", embedder=HashingEmbedder(dim=128)) as memory:
        memory.kb("store").add_document(POLICY, doc_id="policy", title="Store policy")
        assert memory.wait(30)
        answer = memory.ask("How long can I return an item?", user_id="u1")
        assert not answer.llm and "No LLM is configured" in answer.text
        assert "within 30 days" in answer.text
        assert answer.to_dict()["kb_hits"][0]["doc_id"] == "policy"


def test_tool_schemas_and_bad_tool_calls(tmp_path: Path) -> None:
    assert [t["function"]["name"] for t in TOOLS] == list(TOOL_NAMES)
    for tool in TOOLS:
        assert tool["type"] == "function"
        assert tool["function"]["parameters"]["type"] == "object"
    with Memory(tmp_path / "m", embedder=HashingEmbedder(dim=128)) as memory:
        memory.kb("store").add_document(POLICY, doc_id="policy", title="Store policy")
        assert memory.wait(30)
        assert "error" in call_tool(memory, "search_kb", "{not json", user_id="u1")
        assert "error" in call_tool(memory, "search_kb", "[1, 2]", user_id="u1")
        assert "error" in call_tool(memory, "drop_tables", {}, user_id="u1")
        assert "error" in call_tool(memory, "search_kb", {"query": ""}, user_id="u1")
        assert "error" in call_tool(
            memory, "search_kb", {"query": "returns", "limit": "ten"}, user_id="u1"
        )
        bounded = call_tool(
            memory,
            "search_kb",
            {"query": "returns", "collections": ["other"]},
            user_id="u1",
            collections=["store"],
        )
        assert bounded["results"] and bounded["results"][0]["collection"] == "store"
        assert "profile" in call_tool(memory, "get_profile", None, user_id="u1")


def test_a_chunk_committed_between_situating_and_embedding_waits_for_its_context(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    """The indexer asks for unsituated chunks, then for unembedded ones: a document stored
    in between must not be embedded without its LLM context (it once was, under load)."""
    memory = Memory(
        tmp_path / "m",
        embedder=HashingEmbedder(dim=128),
        llm_base_url=fake_llm.base_url,
        llm_model="test-model",
        llm_max_retries=0,
        background=False,
    )
    try:
        kb_indexer = memory._open().indexer.kb
        assert kb_indexer is not None
        repository = kb_indexer._repo
        real_uncontextualized = repository.uncontextualized
        calls = []

        def committed_too_late(limit: int) -> list[Any]:
            calls.append(limit)
            return [] if len(calls) == 1 else real_uncontextualized(limit)

        kb_indexer._repo = _Patched(repository, uncontextualized=committed_too_late)
        memory.kb("store").add_document(SECRET, doc_id="refunds")
        kb_indexer.run_batch()  # sees no chunk to situate: must not embed it either
        assert memory.stats()["kb"]["kb_pending"] == 1
        fake_llm.script({"context": "Board rules on refund approvals."})
        assert memory.wait(30)
        hits = memory.search_kb("board refund approvals", channels=["bm25"])
        assert hits and "Board rules" in hits[0].prefix
    finally:
        memory.close()


class _Patched:
    """A repository with some methods replaced, the rest passed through."""

    def __init__(self, inner: Any, **replaced: Any) -> None:
        self._inner = inner
        self._replaced = replaced

    def __getattr__(self, name: str) -> Any:
        return self._replaced.get(name) or getattr(self._inner, name)
