"""The typed shape of ``Hit.explain``: every stage that touched a hit leaves one entry."""

from __future__ import annotations

from typing import Any, Literal, TypedDict

HitKind = Literal["turn", "fact", "digest"]  # a digest: a session summarized by maintenance
FusionName = Literal["weighted", "rrf"]


class ChannelEntry(TypedDict, total=False):
    rank: int
    score: float
    calibrated: float


class Contribution(TypedDict):
    contribution: float


class SessionEntry(TypedDict):
    bm25: float
    contribution: float
    digest: str


class EntitiesEntry(TypedDict):
    contribution: float
    matched: dict[str, dict[str, float]]


class DecayEntry(TypedDict, total=False):
    factor: float
    exempt: bool


class RerankEntry(TypedDict):
    by: str
    score: float


class GraphEntry(TypedDict):
    seeds: list[dict[str, Any]]
    path: list[str]


class FactEntry(TypedDict):
    status: str
    category: str
    key: str
    subject: str
    valid_from: str | None
    valid_to: str | None
    superseded_by: str | None
    confidence: float


class Explain(TypedDict, total=False):
    """Why a hit ranks where it does. ``channels``: each recall channel's rank, raw and
    calibrated score; ``base``: the fused score; ``fused``: the final score; one entry per
    stage that changed it; ``ms``: where the query's time went."""

    fusion: FusionName
    channels: dict[str, ChannelEntry]
    base: float
    fused: float
    query: dict[str, Any]
    ms: dict[str, float]
    graph: GraphEntry
    window: Contribution
    session: SessionEntry
    entities: EntitiesEntry
    dated: Contribution
    time: dict[str, Any]
    decay: DecayEntry
    strength: dict[str, Any]  # strength, factor, curve, age_days, importance, recalls, protected
    rerank: RerankEntry
    phatic: dict[str, float]  # a greeting or a turn that only names someone: its factor
    truth: dict[str, Any]  # superseded: "fact", "by", "since", "current"; lifted: "replaces"
    current: dict[str, Any]  # a current fact lifted above the turn it replaced
    diversity_penalty: float
    fact: FactEntry
    fact_weight: float
    digest_weight: float  # a session digest's score share
    window_of: str
    session_anchor: bool  # the best turn of a session the hits miss (context evidence only)
    evidence: float  # brought by the context's evidence packing: its sentences' value
    open_card: dict[str, Any]  # the open card of this turn, folded into it (id, statement)
    # knowledge-base hits
    route: dict[str, Any]  # the collection's affinity to the query and the factor it gave
    source: dict[str, Any]  # source type, its weight, an FAQ boost
    subquery: str  # the part of a multi-part question that found the chunk
    cascade: dict[str, Any]  # the dense channel skipped: BM25's lead over the next document
    injection: list[str]  # instruction-like passages found in the chunk (it stays data)
    validity: dict[str, Any]  # the version and the time span it holds for
