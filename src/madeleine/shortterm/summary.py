"""Rolling summaries of the messages that no longer fit a session's window.

The heuristic keeps, per folded message, its speaker and its first sentence (clipped), the
newest lines first when the summary outgrows its share of the budget; with an LLM
configured, one call folds the new messages into the previous summary instead."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from typing import Protocol

from madeleine.llm.client import LLM, LLMError
from madeleine.store.records import BufferedMessage

log = logging.getLogger(__name__)

_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|\n+")
_LINE_WORDS = 24
_SUMMARY_CHARS = 4000  # the stored summary never grows past this


class Summarizer(Protocol):
    def __call__(self, previous: str, messages: Sequence[BufferedMessage]) -> str: ...


def first_sentence(text: str, words: int = _LINE_WORDS) -> str:
    sentence = _SENTENCE_END.split(text.strip(), maxsplit=1)[0]
    parts = sentence.split()
    return " ".join(parts[:words]) + (" …" if len(parts) > words else "")


def heuristic_summary(previous: str, messages: Sequence[BufferedMessage]) -> str:
    lines = [line for line in previous.splitlines() if line.strip()]
    lines += [f"- {m.name or m.role}: {first_sentence(m.content)}" for m in messages]
    while lines and sum(len(line) + 1 for line in lines) > _SUMMARY_CHARS:
        lines.pop(0)  # the oldest lines go first
    return "\n".join(lines)


class LLMSummarizer:
    """One call per fold: the previous summary and the new messages in, a summary out."""

    def __init__(self, llm: LLM, fallback: Summarizer = heuristic_summary) -> None:
        self._llm = llm
        self._fallback = fallback

    def __call__(self, previous: str, messages: Sequence[BufferedMessage]) -> str:
        transcript = "\n".join(f"{m.name or m.role}: {m.content}" for m in messages)
        prompt = [
            {
                "role": "system",
                "content": "You keep a running summary of a conversation for an assistant. "
                "Fold the new messages into the summary: keep decisions, facts, open "
                "questions and commitments; drop pleasantries. At most 200 words.",
            },
            {
                "role": "user",
                "content": f"Summary so far:\n{previous or '(none)'}\n\nNew messages:\n"
                f"{transcript}",
            },
        ]
        schema = {
            "type": "object",
            "properties": {"summary": {"type": "string"}},
            "required": ["summary"],
            "additionalProperties": False,
        }
        try:
            answer = self._llm.complete_json(prompt, schema, "rolling_summary")
            return str(answer["summary"])[:_SUMMARY_CHARS]
        except (LLMError, KeyError, TypeError) as exc:
            log.warning("the LLM could not summarize (%s); using the heuristic summary", exc)
            return self._fallback(previous, messages)


def summarizer_for(llm: LLM | None) -> Callable[[str, Sequence[BufferedMessage]], str]:
    return heuristic_summary if llm is None else LLMSummarizer(llm)
