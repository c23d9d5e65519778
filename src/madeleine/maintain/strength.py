"""How strongly a memory is held: an Ebbinghaus-style forgetting curve per memory type,
stretched by spaced recalls, with importance and pins as a separate axis that stops fading.

A memory's strength is ``curve(age / (half_life x stability x (0.5 + importance)))`` where
``age`` runs from the later of its own time and its last recall: small talk (importance 0.1)
fades in 0.6 of the half-life, an ordinary memory (0.5) in the half-life. A recall
multiplies the stability by ``1 + gain x (1 - strength at the recall)``: a recall after
the memory had half faded lengthens its half-life a lot, a second recall the same minute
almost nothing (the spacing effect). Protected items (pinned, important, an exempt
category or key, a curve of 'none') keep strength 1 and are never archived.

Times are logical where clocks disagree: an item dated after ``now`` (a client clock ahead
of the server's) has age 0, and a recall never moves ``last_recall`` backwards.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
import numpy.typing as npt

from madeleine.config import LifecycleSettings
from madeleine.store.records import ItemState

Shape = Literal["exponential", "linear", "none"]
DAY = 86_400.0


@dataclass(frozen=True, slots=True)
class Curve:
    shape: Shape
    half_life_days: float = math.inf

    @staticmethod
    def parse(spec: str) -> Curve:
        shape, _, days = spec.partition(":")
        if shape == "none":
            return Curve("none")
        if shape not in ("exponential", "linear"):
            raise ValueError(f"unknown curve shape {shape!r}")
        return Curve(shape, float(days))  # type: ignore[arg-type]

    def retention(
        self, age_days: npt.NDArray[np.float64], stability: npt.NDArray[np.float64]
    ) -> npt.NDArray[np.float64]:
        """Strength in [0, 1] after ``age_days`` for items of that ``stability``."""
        if self.shape == "none":
            return np.ones_like(age_days)
        span = self.half_life_days * np.maximum(stability, 1e-9)
        if self.shape == "exponential":
            return np.asarray(np.power(0.5, age_days / span), dtype=np.float64)
        return np.clip(1.0 - age_days / (2.0 * span), 0.0, 1.0)  # 0.5 at the half-life

    def describe(self) -> str:
        return "none" if self.shape == "none" else f"{self.shape}:{self.half_life_days:g}"


@dataclass(frozen=True, slots=True)
class ItemFacts:
    """What the lifecycle needs to know about one turn or fact."""

    item: str
    kind: str  # 'turn', 'fact' or 'digest'
    timestamp: float  # when it happened (a turn) or started to hold (a fact)
    category: str | None = None
    stability: str | None = None  # a card's 'stable' / 'volatile'
    key: str | None = None
    importance: float = 0.5  # the record's own (a card's; a rule's for a turn)
    pinned: bool = False  # the record's own (card.pinned, metadata "pinned")


@dataclass(frozen=True, slots=True)
class Strength:
    value: float
    curve: str
    age_days: float
    stability: float
    recalls: int
    importance: float
    protected: str | None  # why it never fades ('pinned', 'importance', ...), or None

    def explain(self, floor: float) -> dict[str, object]:
        entry: dict[str, object] = {
            "strength": round(self.value, 6),
            "factor": round(ranking_factor(self.value, floor), 6),
            "curve": self.curve,
            "age_days": round(self.age_days, 3),
            "importance": round(self.importance, 3),
        }
        if self.recalls:
            entry["recalls"] = self.recalls
            entry["stability"] = round(self.stability, 4)
        if self.protected:
            entry["protected"] = self.protected
        return entry


_NO_CURVE = Curve("none")


def ranking_factor(strength: float, floor: float) -> float:
    return floor + (1.0 - floor) * strength


class StrengthModel:
    """The curves, protections and reinforcement rule of one configuration."""

    def __init__(self, settings: LifecycleSettings) -> None:
        self.settings = settings
        self._curves = {name: Curve.parse(spec) for name, spec in settings.curves.items()}
        self._exempt_categories = frozenset(settings.exempt_categories)
        self._exempt_keys = tuple(settings.exempt_keys)

    def curve_name(self, facts: ItemFacts) -> str:
        if facts.kind == "fact":
            for name in (f"fact.{facts.category}", f"fact.{facts.stability}", "fact"):
                if name in self._curves:
                    return name
            return "fact"
        return facts.kind

    def curve(self, facts: ItemFacts) -> Curve:
        return self.curve_named(self.curve_name(facts))

    def curve_named(self, name: str) -> Curve:
        return self._curves.get(name, _NO_CURVE)

    def importance(self, facts: ItemFacts, state: ItemState | None) -> float:
        if state is not None and state.importance is not None:
            return state.importance
        return facts.importance

    def pinned(self, facts: ItemFacts, state: ItemState | None) -> bool:
        if state is not None and state.pinned is not None:
            return state.pinned
        return facts.pinned

    def protection(self, facts: ItemFacts, state: ItemState | None) -> str | None:
        """Why the item never fades nor is archived; None when it can."""
        if self.pinned(facts, state):
            return "pinned"
        if self.importance(facts, state) >= self.settings.protect_importance:
            return "importance"
        if facts.category is not None and facts.category in self._exempt_categories:
            return f"category:{facts.category}"
        if facts.key is not None and self._exempt_keys and facts.key.startswith(self._exempt_keys):
            return f"key:{facts.key}"
        if self.curve(facts).shape == "none":
            return "curve:none"
        return None

    def strength(self, facts: ItemFacts, state: ItemState | None, now: float) -> Strength:
        curve = self.curve(facts)
        stability = 1.0 if state is None else state.stability
        recalls = 0 if state is None else state.recalls
        anchor = facts.timestamp
        if state is not None and state.last_recall is not None:
            anchor = max(anchor, state.last_recall)
        age_days = max(now - anchor, 0.0) / DAY
        protected = self.protection(facts, state)
        importance = self.importance(facts, state)
        value = 1.0
        if protected is None:
            span = np.array([stability * (0.5 + importance)])
            value = float(curve.retention(np.array([age_days]), span)[0])
        return Strength(
            value=value,
            curve=curve.describe(),
            age_days=age_days,
            stability=stability,
            recalls=recalls,
            importance=importance,
            protected=protected,
        )

    def reinforced(self, facts: ItemFacts, state: ItemState | None, at: float) -> ItemState:
        """The state after one recall at ``at`` (spaced: the gain shrinks with how fresh the
        item still was)."""
        current = state or ItemState(item=facts.item)
        held = self.strength(facts, current, at).value
        stability = current.stability * (1.0 + self.settings.reinforce_gain * (1.0 - held))
        last = at if current.last_recall is None else max(current.last_recall, at)
        return replace(current, recalls=current.recalls + 1, stability=stability, last_recall=last)


def strengths(
    model: StrengthModel, items: list[ItemFacts], states: Mapping[str, ItemState], now: float
) -> dict[str, Strength]:
    return {facts.item: model.strength(facts, states.get(facts.item), now) for facts in items}
