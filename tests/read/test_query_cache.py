"""Recent query embeddings are reused: the same query text is embedded once."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from madeleine import Memory
from madeleine.embed.base import Vectors
from tests.fakes import HashingEmbedder


class QueryCounting(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.queries: list[str] = []

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        self.queries.extend(texts)
        return super().embed_queries(texts)


def test_a_repeated_query_is_embedded_once(tmp_path: Path) -> None:
    embedder = QueryCounting()
    with Memory(tmp_path / "m", embedder=embedder, background=False) as memory:
        memory.add([{"content": "we booked a ryokan in kyoto"}], user_id="u", session_id="s")
        memory.index_pending()
        first = memory.search("kyoto ryokan", user_id="u")
        second = memory.search("kyoto ryokan", user_id="u")
        assert [h.id for h in first] == [h.id for h in second] and first
        assert embedder.queries.count("kyoto ryokan") == 1
        memory.search("another question", user_id="u")
        assert embedder.queries.count("another question") == 1
        memory._engine.searcher.forget_queries()
        memory.search("kyoto ryokan", user_id="u")
        assert embedder.queries.count("kyoto ryokan") == 2
