"""The contradiction check for cards that are alike but not duplicates (the 0.50–0.85 band).

Rules decide when no LLM is configured (same slot, or same category and subject with a
different value for one attribute). With an LLM, the pairs of one window go to the model in
one call — it sees statements with PII placeholders, never raw values — and answers, per
pair, ``contradicts`` / ``duplicate`` / ``compatible``. Invalid answers get one repair turn;
a judge that still fails raises, and the write path records the failure and uses the rules.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from madeleine.llm.client import LLM, LLMError, LLMInvalidOutput, strict_json_schema

Relation = Literal["contradicts", "duplicate", "compatible"]
SCHEMA_NAME = "fact_relations"
_MAX_ECHO_CHARS = 8_000


@dataclass(frozen=True, slots=True)
class Pair:
    """A new card's statement against a stored one of the same subject."""

    new_statement: str
    old_statement: str
    category: str
    subject: str
    old_fact_id: int


@dataclass(frozen=True, slots=True)
class Verdict:
    relation: Relation
    reason: str


class ContradictionJudge(Protocol):
    name: str

    def judge(self, pairs: Sequence[Pair]) -> list[Verdict | None]:
        """One verdict per pair (None: no answer for it; the rules decide that pair)."""
        ...


class JudgeError(LLMError):
    """The judge gave no usable answer; the write path falls back to the rules."""


class _VerdictItem(BaseModel):
    model_config = ConfigDict(extra="ignore")

    pair: int = Field(ge=0)
    relation: Relation
    reason: str = Field(max_length=300)


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")

    verdicts: list[_VerdictItem]


SYSTEM_PROMPT = """You check a memory of facts about one user for contradictions.
Each pair holds a NEW statement and an OLD stored statement about the same person.
For every pair answer one relation:
- "contradicts": both cannot hold now; the new one replaces the old (a move, a changed
  preference, a new employer, a corrected date).
- "duplicate": they say the same thing in other words.
- "compatible": both can hold at once (different topics, or one adds detail to the other).
Placeholders such as [pii:account:v1a2b3c4] stand for values you cannot see; equal
placeholders are equal values. Give a short reason. Answer every pair exactly once."""


def user_prompt(pairs: Sequence[Pair]) -> str:
    lines = [
        json.dumps(
            {
                "pair": index,
                "subject": pair.subject,
                "category": pair.category,
                "new": pair.new_statement,
                "old": pair.old_statement,
            },
            ensure_ascii=False,
        )
        for index, pair in enumerate(pairs)
    ]
    return "Pairs (one JSON object per line):\n" + "\n".join(lines)


def relations_schema() -> dict[str, Any]:
    return strict_json_schema(_Reply.model_json_schema())


class LLMJudge:
    """The ``ContradictionJudge`` over any OpenAI-compatible endpoint: one call per window."""

    def __init__(self, llm: LLM, max_retries: int = 1) -> None:
        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        self.name = f"llm:{llm.name}"
        self._llm = llm
        self._max_retries = max_retries
        self._schema = relations_schema()

    def judge(self, pairs: Sequence[Pair]) -> list[Verdict | None]:
        if not pairs:
            return []
        messages = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": user_prompt(pairs)},
        ]
        error = "no attempt made"
        for _ in range(self._max_retries + 1):
            try:
                data = self._llm.complete_json(messages, self._schema, SCHEMA_NAME)
            except LLMInvalidOutput as exc:
                error, reply = exc.error, exc.raw
            except LLMError as exc:
                raise JudgeError(f"{type(exc).__name__}: {exc}") from exc
            else:
                try:
                    parsed = _Reply.model_validate(data)
                except ValidationError as exc:
                    error = "; ".join(
                        f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
                    )
                    reply = json.dumps(data, ensure_ascii=False)
                else:
                    return _by_pair(parsed, len(pairs))
            messages = [
                *messages,
                {"role": "assistant", "content": reply[:_MAX_ECHO_CHARS]},
                {
                    "role": "user",
                    "content": f"That answer was invalid ({error}). Reply again with "
                    '{"verdicts": [{"pair": n, "relation": ..., "reason": ...}, ...]} only.',
                },
            ]
        raise JudgeError(f"invalid output after {self._max_retries + 1} attempt(s): {error}")


def _by_pair(reply: _Reply, count: int) -> list[Verdict | None]:
    """Verdicts in pair order; unknown pair numbers are ignored, the first answer counts."""
    found: list[Verdict | None] = [None] * count
    for item in reply.verdicts:
        if item.pair < count and found[item.pair] is None:
            found[item.pair] = Verdict(item.relation, item.reason)
    return found
