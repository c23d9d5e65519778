"""Optional entity extraction by an LLM (``graph_llm_entities=True`` with an LLM configured).

One schema-constrained call per indexing batch and user: the model sees the batch's turns
(PII already replaced by placeholders) and names the people, places, organizations, products,
projects and identifiers each one mentions. Its names join the rule-based mentions; merging
stays guarded (equal keys only). A failed or invalid answer leaves the rules' entities, and
the batch is indexed all the same.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from madeleine.graph.entities import Mention, entity_key
from madeleine.llm.client import LLM, LLMError, strict_json_schema

log = logging.getLogger(__name__)

SCHEMA_NAME = "turn_entities"
_MAX_TURN_CHARS = 2_000
SYSTEM_PROMPT = """You list the entities that chat turns mention, for a memory graph.
For each turn, give the people, places, organizations, products, projects, events, titles
and identifiers (order numbers, ticket ids, code names) it names, as written in the turn.
Skip pronouns, dates, times and generic words. Placeholders such as [pii:email:v1a2b3c4]
are not entities. Answer {"entities": [{"turn": n, "name": "...", "type": "..."}]}."""


class _Item(BaseModel):
    model_config = ConfigDict(extra="ignore")

    turn: int = Field(ge=0)
    name: str = Field(min_length=1, max_length=80)
    type: str = Field("entity", max_length=30)


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")

    entities: list[_Item]


class LLMEntityExtractor:
    def __init__(self, llm: LLM) -> None:
        self.name = f"llm:{llm.name}"
        self._llm = llm
        self._schema = strict_json_schema(_Reply.model_json_schema())

    def extract(self, turns: Sequence[str]) -> list[list[Mention]]:
        """Mentions per turn; raises ``LLMError`` when the model gives no usable answer."""
        if not turns:
            return []
        lines = [
            json.dumps({"turn": i, "text": text[:_MAX_TURN_CHARS]}, ensure_ascii=False)
            for i, text in enumerate(turns)
        ]
        messages = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": "Turns (one JSON object per line):\n" + "\n".join(lines)},
        ]
        data: dict[str, Any] = self._llm.complete_json(messages, self._schema, SCHEMA_NAME)
        try:
            reply = _Reply.model_validate(data)
        except ValidationError as exc:
            raise LLMError(f"invalid entity list: {exc.error_count()} error(s)") from exc
        found: list[list[Mention]] = [[] for _ in turns]
        for item in reply.entities:
            if item.turn >= len(turns) or "[pii:" in item.name:
                continue
            name = item.name.strip()
            key = entity_key(name)
            # the model must quote the turn: a name it made up is not a mention
            if len(key) >= 2 and name.casefold() in turns[item.turn].casefold():
                found[item.turn].append(Mention(name, key, f"llm:{item.type.casefold()}"))
        return found
