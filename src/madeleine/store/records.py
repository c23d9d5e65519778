"""Typed records that cross the storage port: what the engine writes and what it reads back."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from madeleine.facts.cards import Card


@dataclass(frozen=True, slots=True)
class NewEvent:
    """A validated message ready for the log."""

    user_id: str
    session_id: str
    kind: str
    role: str
    name: str | None
    content: str
    metadata: dict[str, Any]
    occurred_at: float
    content_hash: str
    external_id: str | None


@dataclass(frozen=True, slots=True)
class StoredEvent:
    id: int
    user_id: str
    session_id: str
    kind: str
    role: str
    name: str | None
    content: str
    metadata: dict[str, Any]
    occurred_at: float
    recorded_at: float
    external_id: str | None

    @property
    def source_id(self) -> str:
        """The id a caller knows this message by: its external id, else ``ev_<n>``."""
        return self.external_id if self.external_id is not None else f"ev_{self.id}"


@dataclass(frozen=True, slots=True)
class IndexJob:
    outbox_id: int
    event_id: int
    user_id: str


@dataclass(frozen=True, slots=True)
class EpisodeRow:
    """An indexed episode as stored, with its analyzed terms and vector."""

    user_id: str
    session_id: str
    kind: str
    focus_event_id: int
    context_event_id: int | None
    event_ids: Sequence[int]
    source_ids: Sequence[str]
    speaker: str | None
    prefix: str
    body: str
    context: str
    occurred_at: float
    body_terms: str
    context_terms: str
    vector: npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class StoredEpisode:
    id: int
    user_id: str
    session_id: str
    kind: str
    focus_event_id: int
    event_ids: tuple[int, ...]
    source_ids: tuple[str, ...]
    speaker: str | None
    prefix: str
    body: str
    context: str
    occurred_at: float


@dataclass(frozen=True, slots=True)
class UserVectors:
    """All of one user's episode vectors, for exact or ANN search."""

    ids: npt.NDArray[np.int64]
    times: npt.NDArray[np.float64]
    matrix: npt.NDArray[np.float32]
    sessions: list[str]
    kinds: list[str]
    pinned: npt.NDArray[np.bool_]  # metadata {"pinned": true}: exempt from time decay


MAX_ID = 2**63 - 1  # record ids are 64-bit integers: a larger number names nothing


class Transaction:
    """An open write transaction of one backend. Opaque outside ``store/``: the engine only
    passes it back to the store's methods, so that records written by several parts of the
    write path (episodes, facts, graph edges, vaulted values) commit or roll back together."""

    __slots__ = ()


@dataclass(slots=True)
class StoredFact:
    card: Card
    vector: npt.NDArray[np.float32]

    @property
    def number(self) -> int:
        return fact_number(self.card.id)


@dataclass(frozen=True, slots=True)
class FactVectors:
    """One user's fact versions as parallel arrays (ascending id); NaN marks an open bound.
    ``exempt``: stable or pinned facts, which time decay leaves alone; ``successor``: the id of
    the fact that superseded each one (-1: none). ``link_facts[i]`` was said in the turn
    ``link_episodes[i]`` (the episode whose focus is one of the fact's source messages): how
    search finds the facts behind a turn and the turns behind a fact."""

    ids: npt.NDArray[np.int64]
    superseded: npt.NDArray[np.bool_]
    valid_from: npt.NDArray[np.float64]
    valid_to: npt.NDArray[np.float64]
    recorded_at: npt.NDArray[np.float64]
    exempt: npt.NDArray[np.bool_]
    matrix: npt.NDArray[np.float32]
    successor: npt.NDArray[np.int64]
    keys: list[str]
    link_facts: npt.NDArray[np.int64]
    link_episodes: npt.NDArray[np.int64]
    categories: list[str]  # for the lifecycle: a card's forgetting curve and exemptions
    importance: npt.NDArray[np.float64]
    pinned: npt.NDArray[np.bool_]


def fact_number(fact_id: object) -> int:
    """``fact_12`` → 12; a caller's id of the wrong type or shape is a TypeError or ValueError
    naming the expected form."""
    if not isinstance(fact_id, str):
        raise TypeError(f"a fact id is a str like 'fact_12', got {type(fact_id).__name__}")
    if not fact_id.startswith("fact_") or not fact_id[5:].isdigit():
        raise ValueError(f"a fact id looks like 'fact_12', got {fact_id!r}")
    return int(fact_id[5:])


@dataclass(frozen=True, slots=True)
class NewMention:
    """A mention to write: ``key`` is the entity's key (an alias already resolved to it)."""

    episode_id: int
    key: str
    name: str
    type: str
    alias: tuple[str, str] | None = None  # (alias key, surface) that names this entity


@dataclass(frozen=True, slots=True)
class GraphRows:
    """One user's entities and mention edges as arrays; entity vectors are float16."""

    entity_ids: npt.NDArray[np.int64]
    names: list[str]
    types: list[str]
    keys: dict[str, int]  # entity key or alias key -> entity position
    vectors: npt.NDArray[np.float16]
    mention_entity: npt.NDArray[np.int64]  # entity position per edge
    mention_episode: npt.NDArray[np.int64]  # episode id per edge


@dataclass(frozen=True, slots=True)
class FactLinks:
    """A user's current facts as graph nodes: ids, statements, and the episodes each fact
    was drawn from (``source_fact`` is a position in ``ids``)."""

    ids: npt.NDArray[np.int64]
    statements: list[str]
    source_fact: npt.NDArray[np.int64]
    source_episode: npt.NDArray[np.int64]

    @staticmethod
    def empty() -> FactLinks:
        none = np.zeros(0, dtype=np.int64)
        return FactLinks(none, [], none, none)


@dataclass(frozen=True, slots=True)
class BufferedMessage:
    """One message of a short-term conversation buffer; ``position`` counts from 1."""

    role: str
    content: str
    created_at: float
    name: str | None = None
    pinned: bool = False
    position: int = 0


@dataclass(frozen=True, slots=True)
class SessionInfo:
    session_id: str
    summary: str  # the rolling summary of messages up to ``folded``
    folded: int
    updated_at: float
    expires_at: float | None
    messages: int


@dataclass(frozen=True, slots=True)
class AgentRecord:
    state: str
    data: dict[str, Any]
    entered_at: float
    version: int  # bumped by every transition: a stale writer is refused


@dataclass(frozen=True, slots=True)
class TransitionRecord:
    from_state: str | None
    to_state: str
    reason: str
    at: float


class StaleStateError(Exception):
    """Another writer moved the agent's state since it was read (any backend raises it)."""


@dataclass(frozen=True, slots=True)
class ItemState:
    """The lifecycle of one turn or fact (``item`` is 'ep_12' or 'fact_3'). An item without
    a stored state has the defaults: derived importance, pinned as its record says, never
    archived, never recalled."""

    item: str
    importance: float | None = None  # set by the caller, a rule run or an LLM; None: derived
    importance_by: str | None = None  # 'caller', 'rules' or 'llm:<model>'
    pinned: bool | None = None  # None: as the record says (card.pinned, metadata "pinned")
    archived_at: float | None = None
    archive_reason: str | None = None
    recalls: int = 0
    stability: float = 1.0  # multiplies the curve's half-life; spaced recalls raise it
    last_recall: float | None = None  # a logical time: it never moves backwards

    def to_dict(self) -> dict[str, Any]:
        return {
            "importance": self.importance,
            "importance_by": self.importance_by,
            "pinned": self.pinned,
            "archived_at": self.archived_at,
            "archive_reason": self.archive_reason,
            "recalls": self.recalls,
            "stability": self.stability,
            "last_recall": self.last_recall,
        }

    @staticmethod
    def from_dict(item: str, data: dict[str, Any]) -> ItemState:
        return ItemState(
            item=item,
            importance=data.get("importance"),
            importance_by=data.get("importance_by"),
            pinned=data.get("pinned"),
            archived_at=data.get("archived_at"),
            archive_reason=data.get("archive_reason"),
            recalls=int(data.get("recalls", 0)),
            stability=float(data.get("stability", 1.0)),
            last_recall=data.get("last_recall"),
        )


@dataclass(frozen=True, slots=True)
class StateChange:
    """One lifecycle decision: ``item`` goes from ``before`` to ``after`` (None: no stored
    state). ``action`` names it in the log ('archive', 'restore', 'pin', 'merge', ...);
    ``detail`` says why. Logged changes can be undone; reinforcements are not logged."""

    action: str
    item: str
    before: ItemState | None
    after: ItemState | None
    detail: dict[str, Any] = field(default_factory=dict)
    logged: bool = True


@dataclass(frozen=True, slots=True)
class LifecycleEntry:
    """A logged lifecycle change: what ``run`` did to ``item``, and whether it was undone."""

    id: int
    run: str
    at: float
    action: str
    item: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    detail: dict[str, Any]
    undone_at: float | None
