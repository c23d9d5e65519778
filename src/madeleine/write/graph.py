"""From a batch of episodes to graph edges: extract and embed before the write lock, then
write the mentions in the transaction that commits the episodes."""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from madeleine.embed.base import Embedder
from madeleine.graph.entities import (
    SPEAKER_TYPE,
    EntityExtractor,
    Mention,
    entity_key,
    speaker_key,
)
from madeleine.graph.llm_entities import LLMEntityExtractor
from madeleine.llm.client import LLMError
from madeleine.store.ports import GraphRepository
from madeleine.store.records import EpisodeRow, NewMention, Transaction

log = logging.getLogger(__name__)
_ROLE_LABELS = frozenset({"user", "assistant", "system", "tool", "event"})


@dataclass(slots=True)
class PreparedGraph:
    # user -> [(focus event id, mentions)]
    mentions: dict[str, list[tuple[int, list[Mention]]]] = field(default_factory=dict)
    vectors: dict[str, dict[str, npt.NDArray[np.float32]]] = field(default_factory=dict)
    # user -> key -> entity key, as the dictionary stood after reading the batch
    resolved: dict[str, dict[str, str]] = field(default_factory=dict)


class GraphPipeline:
    def __init__(
        self,
        graph: GraphRepository,
        extractor: EntityExtractor,
        embedder: Embedder,
        llm_entities: LLMEntityExtractor | None = None,
    ) -> None:
        self.graph = graph
        self._extractor = extractor
        self._embedder = embedder
        self._llm_entities = llm_entities

    def prepare(self, rows: Sequence[EpisodeRow]) -> PreparedGraph:
        """Entities per turn (what was said, not the speaker label); names of entities new to
        the user are embedded here, outside the lock, for query-time seeding."""
        by_user: dict[str, list[EpisodeRow]] = defaultdict(list)
        for row in rows:
            by_user[row.user_id].append(row)
        prepared = PreparedGraph()
        for user_id, user_rows in by_user.items():
            known = self.graph.known(user_id)
            found: list[tuple[int, list[Mention]]] = []
            new: dict[str, str] = {}
            from_llm = self._from_llm([_said(row) for row in user_rows])
            for index, row in enumerate(user_rows):
                mentions = self._extractor.extract(_said(row), known)
                keys = {m.key for m in mentions}
                mentions += [m for m in from_llm[index] if m.key not in keys]
                speaker = _speaker_mention(row)
                if speaker is not None:
                    mentions.append(speaker)
                found.append((row.focus_event_id, mentions))
                for mention in mentions:
                    target = mention.alias_of or mention.key
                    key = known.get(target, target)
                    # a speaker node is reached by name, never by similarity: no vector
                    if key not in known and key not in new and mention.type != SPEAKER_TYPE:
                        new[key] = mention.surface
                # the dictionary grows as the batch is read: later turns match earlier names
                for mention in mentions:
                    target = mention.alias_of or mention.key
                    known.setdefault(target, target)
                    known.setdefault(mention.key, known[target])
            prepared.mentions[user_id] = found
            prepared.resolved[user_id] = known
            if new:
                names = list(new.values())
                vectors = self._embedder.embed_passages(names)
                prepared.vectors[user_id] = dict(zip(new, vectors, strict=True))
        return prepared

    def _from_llm(self, texts: list[str]) -> list[list[Mention]]:
        if self._llm_entities is None:
            return [[] for _ in texts]
        try:
            return self._llm_entities.extract(texts)
        except LLMError as exc:
            log.warning(
                "entity extraction (%s) failed for %d turns; rules only: %s",
                self._llm_entities.name,
                len(texts),
                exc,
            )
            return [[] for _ in texts]

    def commit(self, tx: Transaction, prepared: PreparedGraph) -> None:
        for user_id, found in prepared.mentions.items():
            episodes = self.graph.episode_ids_of_events(tx, [event for event, _ in found])
            known = self.graph.known_in(tx, user_id, _keys(found))
            resolved = prepared.resolved.get(user_id, {})
            # an entity is named by a surface of its own, not by an alias ("Bob")
            names = {
                m.key: m.surface for _, mentions in found for m in mentions if m.alias_of is None
            }
            writes: list[NewMention] = []
            for event_id, mentions in found:
                episode_id = episodes.get(event_id)
                if episode_id is None:
                    continue  # the message was deleted meanwhile
                for mention in mentions:
                    target = mention.alias_of or mention.key
                    key = known.get(target) or resolved.get(target, target)
                    alias = None
                    if mention.alias_of is not None or key != mention.key:
                        alias = (mention.key, mention.surface)
                    name = names.get(key, mention.surface)
                    writes.append(NewMention(episode_id, key, name, mention.type, alias))
            self.graph.write(tx, user_id, writes, prepared.vectors.get(user_id, {}))


def _speaker_mention(row: EpisodeRow) -> Mention | None:
    """A named speaker is linked to what they said: "I" in a turn is its speaker, so a
    question naming a person reaches their turns. A bare role ("user") names nobody."""
    if not row.speaker or row.speaker.casefold() in _ROLE_LABELS:
        return None
    key = speaker_key(entity_key(row.speaker))
    return Mention(row.speaker, key, SPEAKER_TYPE) if len(key) >= 3 else None


def _said(row: EpisodeRow) -> str:
    label = f"{row.speaker}: " if row.speaker else ""
    return row.body[len(label) :] if label and row.body.startswith(label) else row.body


def _keys(found: list[tuple[int, list[Mention]]]) -> set[str]:
    """Every key the batch uses: its own, and the entity's an alias points to."""
    keys: set[str] = set()
    for _, mentions in found:
        for mention in mentions:
            keys.add(mention.key)
            if mention.alias_of is not None:
                keys.add(mention.alias_of)
    return keys
