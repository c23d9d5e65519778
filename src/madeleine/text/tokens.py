"""Offline token counting for context budgets.

No BPE files are downloaded (tiktoken would fetch them at first use). The estimate is
deliberately conservative against common LLM tokenizers: an English word costs one token per
started four characters beyond the first four, each digit group of three one token, each
CJK/Hangul character one token, each other symbol one token. Budgets computed with it hold for
real tokenizers in practice, and the count is exact for Madeleine's own accounting.
"""

from __future__ import annotations

import re
from typing import Protocol

_PIECE = re.compile(
    r"(?P<cjk>[\u3040-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3\uf900-\ufaff])"
    r"|(?P<digits>\d+)"
    r"|(?P<word>[^\W\d_]+)"
    r"|(?P<symbol>[^\s\w]|_)",
    re.UNICODE,
)


class TokenCounter(Protocol):
    """Counts tokens of a text; plug in a real tokenizer if you have one offline."""

    def __call__(self, text: str) -> int: ...


def estimate_tokens(text: str) -> int:
    """Conservative offline token estimate (see module docstring)."""
    total = 0
    for match in _PIECE.finditer(text):
        kind = match.lastgroup
        piece = match.group()
        if kind == "word":
            total += 1 + max(0, len(piece) - 1) // 4
        elif kind == "digits":
            total += (len(piece) + 2) // 3
        else:
            total += 1
    return total
