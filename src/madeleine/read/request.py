"""A search request, validated once at the edge: every later stage can trust its fields."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import get_args

from madeleine.inputs import require_id, require_text
from madeleine.read.explain import FusionName
from madeleine.read.recipe import RECIPES, StageName
from madeleine.text.timeparse import parse_timestamp, to_epoch

TimeBound = datetime | str | float | int | None

_MAX_LIMIT = 1000
_MAX_QUERY_CHARS = 10_000

CHANNELS = ("dense", "bm25", "graph", "facts")
PASSAGE_CHANNELS = ("dense", "bm25", "graph")
FUSIONS: tuple[FusionName, ...] = get_args(FusionName)  # one list: the Literal
STAGE_NAMES = (
    "recipe",
    "fusion",
    "windows",
    "sessions",
    "entities",
    "dated",
    "time",
    "phatic",
    "decay",
    "strength",
    "rerank",
    "truth",
    "diversify",
)
_BOOL_STAGES = (
    "windows",
    "sessions",
    "entities",
    "dated",
    "time",
    "phatic",
    "decay",
    "strength",
    "rerank",
    "truth",
)


@dataclass(frozen=True, slots=True)
class Stages:
    """Per-query switches; the defaults come from ``Settings``."""

    recipe: str = "default"
    fusion: FusionName = "weighted"
    windows: bool = True
    sessions: bool = True
    entities: bool = True
    dated: bool = True
    time: bool = True
    phatic: bool = True
    decay: bool = True
    strength: bool = True
    rerank: bool = False
    truth: bool = True
    diversify: bool | None = None  # None: decided by query analysis (broad questions)

    def allows(self, stage: StageName) -> bool:
        """Whether this query runs the stage (stages without a switch always run)."""
        switch = getattr(self, stage, True)
        return bool(switch)

    @classmethod
    def parse(cls, raw: object, defaults: Stages) -> Stages:
        if raw is None:
            return defaults
        if not isinstance(raw, dict):
            raise TypeError("stages must be a dict, e.g. {'fusion': 'rrf', 'windows': False}")
        unknown = set(raw) - set(STAGE_NAMES)
        if unknown:
            raise ValueError(
                f"stages has unknown names {sorted(unknown)}; choose from {list(STAGE_NAMES)}"
            )
        recipe = raw.get("recipe", defaults.recipe)
        if recipe not in RECIPES:
            raise ValueError(f"stages['recipe'] must be one of {list(RECIPES)}, got {recipe!r}")
        fusion = raw.get("fusion", defaults.fusion)
        if fusion not in FUSIONS:
            raise ValueError(f"stages['fusion'] must be one of {list(FUSIONS)}, got {fusion!r}")
        for name in _BOOL_STAGES:
            if name in raw and not isinstance(raw[name], bool):
                raise TypeError(f"stages[{name!r}] must be a bool")
        diversify = raw.get("diversify", defaults.diversify)
        if diversify not in (None, True, False, "auto"):
            raise ValueError("stages['diversify'] must be True, False or 'auto'")
        switches = {name: raw[name] for name in _BOOL_STAGES if name in raw}
        absent = [n for n, on in switches.items() if on and n not in RECIPES[recipe].stages]
        if absent:
            raise ValueError(
                f"the {recipe!r} recipe has no {' or '.join(absent)} stage: "
                f"it runs {list(RECIPES[recipe].stages)}"
            )
        return replace(
            defaults,
            recipe=recipe,
            fusion=fusion,
            diversify=None if diversify == "auto" else diversify,
            **switches,
        )


@dataclass(frozen=True, slots=True)
class SearchRequest:
    query: str
    user_id: str
    limit: int
    channels: tuple[str, ...]
    time_range: tuple[float, float] | None
    stages: Stages
    now: float
    as_of: float | None = None
    include_history: bool = False
    include_archived: bool = False
    # the context's evidence pool: also return the best turn of up to this many sessions
    # the chosen hits miss, flagged ``session_anchor`` and after every hit (search: 0)
    session_anchors: int = 0


def build_request(
    query: object,
    user_id: object,
    limit: object,
    channels: Sequence[str] | None,
    time_range: object,
    stages: object,
    now: object,
    as_of: TimeBound,
    include_history: object,
    defaults: Stages,
    include_archived: object = False,
) -> SearchRequest:
    """Check every argument of ``search``/``context``; errors name the argument."""
    if not isinstance(query, str):
        raise TypeError(f"query must be a str, got {type(query).__name__}")
    if not query.strip():
        raise ValueError("query must be a non-empty string")
    if len(query) > _MAX_QUERY_CHARS:
        raise ValueError(f"query is longer than {_MAX_QUERY_CHARS:,} characters")
    require_text(query, "query")
    user = require_id(user_id, "user_id")
    count = require_limit(limit, "limit", _MAX_LIMIT)
    if not isinstance(include_history, bool):
        raise TypeError(f"include_history must be a bool, got {type(include_history).__name__}")
    if not isinstance(include_archived, bool):
        raise TypeError(f"include_archived must be a bool, got {type(include_archived).__name__}")
    return SearchRequest(
        query=query,
        user_id=user,
        limit=count,
        channels=_validate_channels(channels),
        time_range=_validate_time_range(time_range),
        stages=Stages.parse(stages, defaults),
        now=(
            datetime.now(UTC).timestamp() if now is None else to_epoch(parse_timestamp(now, "now"))
        ),
        as_of=None if as_of is None else epoch_of(as_of, "as_of"),
        include_history=include_history,
        include_archived=include_archived,
    )


def require_limit(value: object, field: str, most: int) -> int:
    """A count a caller asks for: an int from 1 to ``most`` (never a negative or a string
    that the database would take as "everything")."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{field} must be an int, got {type(value).__name__}")
    if not 1 <= value <= most:
        raise ValueError(f"{field} must be between 1 and {most}, got {value}")
    return value


def epoch_of(value: TimeBound, field: str) -> float:
    if value is None:
        raise ValueError(f"{field} must be a time")
    return to_epoch(parse_timestamp(value, field))


def _validate_channels(channels: Sequence[str] | None) -> tuple[str, ...]:
    if channels is None:
        return CHANNELS
    if isinstance(channels, str) or not isinstance(channels, Sequence):
        raise TypeError("channels must be a list of channel names, e.g. ['dense', 'bm25']")
    chosen = tuple(dict.fromkeys(channels))
    if not chosen:
        raise ValueError("channels must name at least one channel")
    unknown = [c for c in chosen if c not in CHANNELS]
    if unknown:
        raise ValueError(f"channels has unknown names {unknown}; choose from {list(CHANNELS)}")
    return chosen


def _validate_time_range(time_range: object) -> tuple[float, float] | None:
    if time_range is None:
        return None
    if not isinstance(time_range, tuple | list) or len(time_range) != 2:
        raise TypeError("time_range must be a (start, end) pair; use None for an open end")
    start_raw, end_raw = time_range
    start = (
        float("-inf")
        if start_raw is None
        else to_epoch(parse_timestamp(start_raw, "time_range[0]"))
    )
    end = float("inf") if end_raw is None else to_epoch(parse_timestamp(end_raw, "time_range[1]"))
    if start > end:
        raise ValueError("time_range start is after its end")
    return (start, end)
