"""The lifecycle on the read path: archived items leave search and context, and every turn
and fact is weighted by its strength (``maintain/strength.py``).

A user's stored states are cached as arrays until the user's lifecycle generation moves, so
a search adds one small lookup; the strengths of all rows are computed vectorized, and the
explain entry only for the hits returned.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from madeleine.maintain.strength import DAY, ItemFacts, StrengthModel
from madeleine.read.channels import Query
from madeleine.read.lru import UserLRU
from madeleine.read.recipe import StageName
from madeleine.read.stages import Effect, ScoreState
from madeleine.sorted_ids import positions
from madeleine.store.ports import LifecycleRepository
from madeleine.store.records import FactVectors, ItemState

_CACHED_USERS = 1024
LIFECYCLE_KEY = "lifecycle"  # query.prepared: the user's LifecycleView
STRENGTHS_KEY = "strengths"  # query.prepared: the rows' RowStrengths


@dataclass(frozen=True, slots=True)
class StoredStates:
    """One kind's stored states as arrays, ascending id (NaN / -1: not set)."""

    ids: npt.NDArray[np.int64]
    importance: npt.NDArray[np.float64]
    pinned: npt.NDArray[np.int8]
    archived: npt.NDArray[np.bool_]
    stability: npt.NDArray[np.float64]
    last_recall: npt.NDArray[np.float64]

    @staticmethod
    def of(states: Sequence[tuple[int, ItemState]]) -> StoredStates:
        ordered = sorted(states, key=lambda pair: pair[0])
        nan = float("nan")
        size = len(ordered)
        return StoredStates(
            ids=np.fromiter((i for i, _ in ordered), np.int64, size),
            importance=np.fromiter(
                (nan if s.importance is None else s.importance for _, s in ordered),
                np.float64,
                size,
            ),
            pinned=np.fromiter(
                (-1 if s.pinned is None else int(s.pinned) for _, s in ordered), np.int8, size
            ),
            archived=np.fromiter((s.archived_at is not None for _, s in ordered), bool, size),
            stability=np.fromiter((s.stability for _, s in ordered), np.float64, size),
            last_recall=np.fromiter(
                (nan if s.last_recall is None else s.last_recall for _, s in ordered),
                np.float64,
                size,
            ),
        )


@dataclass(frozen=True, slots=True)
class LifecycleView:
    generation: int
    states: dict[str, ItemState]
    turns: StoredStates
    facts: StoredStates

    def archived_facts(self) -> set[int]:
        return {int(i) for i in self.facts.ids[self.facts.archived].tolist()}

    def archived_turns(self) -> set[int]:
        return {int(i) for i in self.turns.ids[self.turns.archived].tolist()}


@dataclass(frozen=True, slots=True)
class RowStrengths:
    strength: npt.NDArray[np.float64]
    factor: npt.NDArray[np.float64]  # floor + (1 - floor) x strength
    archived: npt.NDArray[np.bool_]


def numbered(states: dict[str, ItemState], prefix: str) -> list[tuple[int, ItemState]]:
    found = []
    for item, state in states.items():
        number = item.removeprefix(prefix)
        if item.startswith(prefix) and number.isdigit():
            found.append((int(number), state))
    return found


class LifecycleIndex:
    def __init__(self, repository: LifecycleRepository, model: StrengthModel) -> None:
        self._repository = repository
        self.model = model
        self._cache: UserLRU[LifecycleView] = UserLRU(_CACHED_USERS)

    def view(self, user_id: str) -> LifecycleView:
        generation = self._repository.generation(user_id)
        cached = self._cache.get(user_id)
        if cached is not None and cached.generation == generation:
            return cached
        states = self._repository.states(user_id) if generation else {}
        view = LifecycleView(
            generation,
            states,
            StoredStates.of(numbered(states, "ep_")),
            StoredStates.of(numbered(states, "fact_")),
        )
        self._cache.put(user_id, view)
        return view

    def turn_strengths(
        self,
        view: LifecycleView,
        ids: npt.NDArray[np.int64],
        times: npt.NDArray[np.float64],
        kinds: npt.NDArray[np.str_],
        pinned: npt.NDArray[np.bool_],
        now: float,
    ) -> RowStrengths:
        importance = np.full(ids.size, 0.5)
        exempt = np.zeros(ids.size, dtype=bool)
        return self._strengths(view.turns, ids, times, kinds, pinned, importance, exempt, now)

    def fact_strengths(self, view: LifecycleView, rows: FactVectors, now: float) -> RowStrengths:
        size = rows.ids.size
        names = np.empty(size, dtype=object)
        exempt = np.zeros(size, dtype=bool)
        for row in range(size):
            facts = self.fact_item(rows, row)
            names[row] = self.model.curve_name(facts)
            reason = self.model.protection(facts, None)
            exempt[row] = reason is not None and reason.startswith(("category:", "key:"))
        times = np.where(np.isnan(rows.valid_from), rows.recorded_at, rows.valid_from)
        return self._strengths(
            view.facts, rows.ids, times, names, rows.pinned, rows.importance, exempt, now
        )

    @staticmethod
    def fact_item(rows: FactVectors, row: int) -> ItemFacts:
        stable = bool(rows.exempt[row]) and not bool(rows.pinned[row])
        moment = rows.valid_from[row]
        return ItemFacts(
            item=f"fact_{int(rows.ids[row])}",
            kind="fact",
            timestamp=float(rows.recorded_at[row] if np.isnan(moment) else moment),
            category=rows.categories[row],
            stability="stable" if stable else "volatile",
            key=rows.keys[row],
            importance=float(rows.importance[row]),
            pinned=bool(rows.pinned[row]),
        )

    def _strengths(
        self,
        stored: StoredStates,
        ids: npt.NDArray[np.int64],
        times: npt.NDArray[np.float64],
        curve_names: npt.NDArray[np.object_] | npt.NDArray[np.str_],
        pinned: npt.NDArray[np.bool_],
        importance: npt.NDArray[np.float64],
        exempt: npt.NDArray[np.bool_],
        now: float,
    ) -> RowStrengths:
        size = ids.size
        stability = np.ones(size)
        last = np.full(size, np.nan)
        pin = pinned.astype(bool, copy=True)
        weight = importance.astype(np.float64, copy=True)
        archived = np.zeros(size, dtype=bool)
        if stored.ids.size:
            at = positions(ids, stored.ids)
            present = at >= 0
            rows = at[present]
            stability[rows] = stored.stability[present]
            last[rows] = stored.last_recall[present]
            archived[rows] = stored.archived[present]
            chosen = stored.pinned[present]
            pin[rows] = np.where(chosen >= 0, chosen == 1, pin[rows])
            set_importance = stored.importance[present]
            weight[rows] = np.where(np.isnan(set_importance), weight[rows], set_importance)
        settings = self.model.settings
        protected = pin | (weight >= settings.protect_importance) | exempt
        age = np.maximum(now - np.fmax(times, last), 0.0) / DAY
        strength = np.ones(size)
        for name in set(curve_names.tolist()):
            curve = self.model.curve_named(str(name))
            mask = (curve_names == name) & ~protected
            if curve.shape != "none" and mask.any():
                span = stability[mask] * (0.5 + weight[mask])
                strength[mask] = curve.retention(age[mask], span)
        floor = settings.strength_floor
        return RowStrengths(strength, floor + (1.0 - floor) * strength, archived)

    def explain(self, facts: ItemFacts, view: LifecycleView, now: float) -> dict[str, object]:
        state = view.states.get(facts.item)
        entry = self.model.strength(facts, state, now).explain(self.model.settings.strength_floor)
        if state is not None and state.archived_at is not None:
            entry["archived"] = state.archive_reason or True
        return entry


class StrengthStage:
    """Relevance x strength: a faded turn keeps ``floor`` of its score, a fresh, recalled,
    pinned or important one all of it."""

    name: StageName = "strength"
    early = False

    def __init__(self, index: LifecycleIndex | None) -> None:
        self._index = index

    def effect(self, query: Query, scores: ScoreState | None) -> Effect | None:
        index = self._index
        strengths: RowStrengths | None = query.prepared.get(STRENGTHS_KEY)
        view: LifecycleView | None = query.prepared.get(LIFECYCLE_KEY)
        if index is None or strengths is None or view is None:
            return None
        if index.model.settings.strength_floor >= 1.0:
            return None
        rows, now = query.rows, query.request.now

        def entry(row: int) -> dict[str, object]:
            facts = ItemFacts(
                item=f"ep_{int(rows.ids[row])}",
                kind=str(rows.kinds[row]),
                timestamp=float(rows.times[row]),
                pinned=bool(rows.pinned[row]),
            )
            return index.explain(facts, view, now)

        return Effect("strength", scale=strengths.factor, entry=entry)
