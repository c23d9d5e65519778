"""Multi-intent questions split into sub-queries, without an LLM (English and Korean).

"What is the leave policy and how do I claim overtime?" asks two things; searching it as
one query lets the stronger intent crowd out the other. A question is split at sentence
ends that close a question, at conjunctions that join two clauses each carrying its own
question word or verb, and at Korean connective endings (…고, …하고, 그리고, 또); pieces too
short to stand alone (a bare noun phrase) are kept with their neighbour.
"""

from __future__ import annotations

import re

_EN_QUESTION = (
    r"what|when|where|who|whom|whose|which|why|how|is|are|was|were|do|does|did|can|could|"
    r"should|would|will|may|must|have|has"
)
# ", and how …" / " and where …": a conjunction followed by a new question or request
_EN_SPLIT = re.compile(
    rf"\s*(?:[,;]\s*)?\b(?:and|also|plus|as well as|but)\s+(?=(?:{_EN_QUESTION}|tell|show|"
    rf"list|explain|give|find)\b)",
    re.IGNORECASE,
)
_QUESTION_END = re.compile(r"(?<=[?？])\s+")
# Korean: a clause ending in a connective before another clause, or an explicit "그리고/또"
_KO_SPLIT = re.compile(r"(?<=[가-힣])(?:고|하고|이고|며|이며)[,\s]+(?=\S)|\s*(?:그리고|또한|또)\s+")
_KO_QUESTION = re.compile(
    r"(?:뭐|무엇|언제|어디|누구|어떻게|왜|몇|얼마|알려|인가요|나요|까요|어요|죠|니까)"
)
_MIN_WORDS = 3


def decompose(question: str, max_parts: int = 4) -> list[str]:
    """The question's sub-queries, in order; the question itself when it asks one thing."""
    text = " ".join(question.split())
    if not text:
        return []
    parts: list[str] = []
    for sentence in _QUESTION_END.split(text):
        for piece in _EN_SPLIT.split(sentence):
            parts += _korean_parts(piece)
    parts = _merge_short([p.strip(" ,;") for p in parts if p.strip(" ,;")])
    if len(parts) <= 1:
        return [text]
    if len(parts) > max_parts:  # the tail stays one query rather than being dropped
        return [*parts[: max_parts - 1], " ".join(parts[max_parts - 1 :])]
    return parts


def _korean_parts(piece: str) -> list[str]:
    if not re.search(r"[가-힣]", piece):
        return [piece]
    found = [p for p in _KO_SPLIT.split(piece) if p.strip()]
    # a connective splits only when both sides ask something of their own
    if len(found) > 1 and sum(bool(_KO_QUESTION.search(p)) for p in found) >= 2:
        return found
    if len(found) > 1 and re.search(r"\s*(?:그리고|또한|또)\s+", piece):
        return found
    return [piece]


def _merge_short(parts: list[str]) -> list[str]:
    merged: list[str] = []
    for part in parts:
        short = len(part.split()) < _MIN_WORDS and not re.search(r"[가-힣]{4,}", part)
        if merged and short:
            merged[-1] = f"{merged[-1]} {part}"
        else:
            merged.append(part)
    return merged
