"""Editing one item's lifecycle (archive, restore, pin, importance), writing recalls off the
request path, and undoing what a maintenance run did, all through the store's lifecycle log.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from madeleine.errors import ItemNotFoundError
from madeleine.maintain.items import ITEM_ID, fact_facts, turn_facts
from madeleine.maintain.strength import ItemFacts, StrengthModel
from madeleine.store.ports import Store
from madeleine.store.records import MAX_ID, ItemState, LifecycleEntry, StateChange

_MAX_PENDING_RECALLS = 100_000


def new_run(kind: str) -> str:
    return f"{kind}-{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{uuid.uuid4().hex[:8]}"


def parse_item(item_id: object) -> tuple[str, int]:
    """('ep' | 'fact', number) of an item id; a clear error otherwise."""
    if not isinstance(item_id, str):
        raise TypeError(f"the item id must be a str, got {type(item_id).__name__}")
    match = ITEM_ID.fullmatch(item_id)
    if match is None or int(match.group(2)) > MAX_ID:
        raise ValueError(f"an item id looks like 'ep_123' (a turn) or 'fact_12', got {item_id!r}")
    return match.group(1), int(match.group(2))


@dataclass(frozen=True, slots=True)
class ItemLifecycle:
    """Where an item stands: its state, strength and why it is protected, if it is."""

    id: str
    user_id: str
    kind: str
    archived: bool
    archive_reason: str | None
    pinned: bool
    importance: float
    importance_by: str | None
    strength: float
    curve: str
    recalls: int
    protected: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "user_id": self.user_id,
            "kind": self.kind,
            "archived": self.archived,
            "archive_reason": self.archive_reason,
            "pinned": self.pinned,
            "importance": self.importance,
            "importance_by": self.importance_by,
            "strength": round(self.strength, 6),
            "curve": self.curve,
            "recalls": self.recalls,
            "protected": self.protected,
        }


class RecallQueue:
    """Items recalled into contexts, waiting to be written as reinforcements by the
    background worker (never on the request path). Bounded: under a flood the oldest
    recalls are dropped, which only costs a little reinforcement."""

    def __init__(self, limit: int = _MAX_PENDING_RECALLS) -> None:
        self._pending: list[tuple[str, str, float]] = []
        self._lock = threading.Lock()
        self._limit = limit

    def add(self, user_id: str, items: Sequence[str], at: float) -> None:
        with self._lock:
            self._pending.extend((user_id, item, at) for item in items)
            if len(self._pending) > self._limit:
                del self._pending[: len(self._pending) - self._limit]

    def drain(self) -> dict[str, list[tuple[str, float]]]:
        with self._lock:
            pending, self._pending = self._pending, []
        grouped: dict[str, list[tuple[str, float]]] = defaultdict(list)
        for user_id, item, at in pending:
            grouped[user_id].append((item, at))
        return grouped

    def __len__(self) -> int:
        with self._lock:
            return len(self._pending)


class Lifecycle:
    def __init__(
        self, store: Store, model: StrengthModel, clock: Callable[[], float] = time.time
    ) -> None:
        self._store = store
        self.model = model
        self._clock = clock
        self.recalls = RecallQueue()

    # -- one item ----------------------------------------------------------------------------

    def facts_of(self, user_id: str, item_id: str) -> ItemFacts:
        """The item's record as the strength model sees it; ItemNotFoundError when the user
        has no such item (another user's id is "not found" too)."""
        kind, number = parse_item(item_id)
        if kind == "fact":
            fact = self._store.facts.get(number)
            if fact is None or fact.card.user_id != user_id:
                raise ItemNotFoundError(f"user {user_id!r} has no fact {item_id!r}")
            return fact_facts(fact)
        episode = self._store.episodes([number]).get(number)
        if episode is None or episode.user_id != user_id:
            raise ItemNotFoundError(f"user {user_id!r} has no turn {item_id!r}")
        return turn_facts(episode, self._turn_pinned(user_id, number))

    def _turn_pinned(self, user_id: str, number: int) -> bool:
        rows = self._store.user_vectors(user_id, after_id=number - 1, with_vectors=False)
        return bool(rows.ids.size and rows.ids[0] == number and rows.pinned[0])

    def describe(self, user_id: str, item_id: str, now: float | None = None) -> ItemLifecycle:
        facts = self.facts_of(user_id, item_id)
        state = self._store.lifecycle.states(user_id).get(item_id)
        strength = self.model.strength(facts, state, self._clock() if now is None else now)
        return ItemLifecycle(
            id=item_id,
            user_id=user_id,
            kind=facts.kind,
            archived=state is not None and state.archived_at is not None,
            archive_reason=None if state is None else state.archive_reason,
            pinned=self.model.pinned(facts, state),
            importance=self.model.importance(facts, state),
            importance_by=None if state is None else state.importance_by,
            strength=strength.value,
            curve=strength.curve,
            recalls=strength.recalls,
            protected=strength.protected,
        )

    def edit(
        self,
        user_id: str,
        item_id: str,
        action: str,
        update: Callable[[ItemState], ItemState],
        detail: dict[str, Any] | None = None,
    ) -> bool:
        """Apply one change to one item, logged under its own run; False when it changed
        nothing (archiving an archived item, pinning a pinned one)."""
        self.facts_of(user_id, item_id)  # exists, and is the user's

        def decide(current: dict[str, ItemState]) -> list[StateChange]:
            before = current.get(item_id)
            after = update(before or ItemState(item=item_id))
            if after == (before or ItemState(item=item_id)):
                return []
            return [StateChange(action, item_id, before, after, detail or {})]

        changed = self._store.lifecycle.change(
            user_id, [item_id], decide, new_run(action), self._clock()
        )
        return bool(changed)

    def archive(self, user_id: str, item_id: str, reason: str = "by request") -> bool:
        now = self._clock()
        return self.edit(
            user_id,
            item_id,
            "archive",
            lambda s: (
                s
                if s.archived_at is not None
                else replace(s, archived_at=now, archive_reason=reason)
            ),
            {"reason": reason},
        )

    def restore(self, user_id: str, item_id: str) -> bool:
        """False, changing nothing, when the item is not archived."""
        return self.edit(
            user_id,
            item_id,
            "restore",
            lambda s: (
                s
                if s.archived_at is None
                else replace(s, archived_at=None, archive_reason=None, last_recall=self._clock())
            ),
        )

    def pin(self, user_id: str, item_id: str, pinned: bool) -> bool:
        kind, number = parse_item(item_id)
        changed = self.edit(user_id, item_id, "pin" if pinned else "unpin", _pinned(pinned))
        if kind == "fact":  # the card says it too: listings put pinned cards first
            self._store.facts.set_pinned(number, pinned)
        return changed

    def set_importance(self, user_id: str, item_id: str, importance: float) -> bool:
        if isinstance(importance, bool) or not isinstance(importance, int | float):
            raise TypeError(f"importance must be a number, got {type(importance).__name__}")
        if not 0.0 <= importance <= 1.0:  # not float() first: 10**400 would overflow
            raise ValueError(f"importance must be between 0 and 1, got {importance}")
        value = float(importance)
        return self.edit(
            user_id,
            item_id,
            "importance",
            lambda s: replace(s, importance=value, importance_by="caller"),
            {"importance": value, "by": "caller"},
        )

    # -- reinforcement -----------------------------------------------------------------------

    def recalled(self, user_id: str, item_ids: Sequence[str], at: float) -> None:
        """Items handed to an agent in a context: queued, written by ``write_recalls``."""
        wanted = [i for i in dict.fromkeys(item_ids) if ITEM_ID.fullmatch(i)]
        if wanted:
            self.recalls.add(user_id, wanted, at)

    def write_recalls(self) -> int:
        """Write the queued recalls (the background worker calls this between batches);
        how many items were reinforced."""
        written = 0
        for user_id, recalls in self.recalls.drain().items():
            facts: dict[str, ItemFacts] = {}
            for item, _ in recalls:
                if item not in facts:
                    try:
                        facts[item] = self.facts_of(user_id, item)
                    except ItemNotFoundError:
                        continue  # deleted since: nothing to reinforce

            def decide(
                current: dict[str, ItemState],
                recalls: list[tuple[str, float]] = recalls,
                facts: dict[str, ItemFacts] = facts,
            ) -> list[StateChange]:
                states = dict(current)
                for item, at in sorted(recalls, key=lambda pair: pair[1]):
                    if item in facts:
                        states[item] = self.model.reinforced(facts[item], states.get(item), at)
                return [
                    StateChange("recall", item, current.get(item), state, logged=False)
                    for item, state in states.items()
                    if state != current.get(item)
                ]

            written += len(
                self._store.lifecycle.change(user_id, list(facts), decide, "recall", self._clock())
            )
        return written

    # -- undo --------------------------------------------------------------------------------

    def undo(self, user_id: str, run: str) -> list[LifecycleEntry]:
        """Put back what ``run`` changed, newest change first; the entries undone. An item
        changed again since keeps its newer state (its entry is left as it is)."""
        logged = self._store.lifecycle.entries(user_id, run)
        if not logged:
            raise ItemNotFoundError(f"user {user_id!r} has no lifecycle run {run!r}")
        entries = [e for e in logged if e.undone_at is None]
        if not entries:
            return []  # undone already
        undone: list[LifecycleEntry] = []
        facts = self._store.facts
        for entry in entries:  # newest first
            before = None if entry.before is None else ItemState.from_dict(entry.item, entry.before)
            after = None if entry.after is None else ItemState.from_dict(entry.item, entry.after)

            def decide(
                current: dict[str, ItemState],
                entry: LifecycleEntry = entry,
                before: ItemState | None = before,
                after: ItemState | None = after,
            ) -> list[StateChange]:
                now = current.get(entry.item)
                if not _same_lifecycle(now, after):
                    return []
                restored = before
                if entry.action == "create":  # a card maintenance wrote: archived again
                    restored = replace(
                        now or ItemState(item=entry.item),
                        archived_at=self._clock(),
                        archive_reason=f"undone ({run})",
                    )
                return [StateChange("undo", entry.item, now, restored, {"run": run})]

            if self._store.lifecycle.change(
                user_id, [entry.item], decide, f"undo-{run}", self._clock()
            ):
                undone.append(entry)
                support = entry.detail.get("support_before")
                if entry.action == "merge" and isinstance(support, dict):  # a merged card's
                    with self._store.transaction() as tx:  # confidence and sources, as before
                        facts.set_support(
                            tx,
                            parse_item(entry.item)[1],
                            float(support["confidence"]),
                            list(support["sources"]),
                        )
        self._store.lifecycle.mark_undone(user_id, [e.id for e in undone], self._clock())
        return undone


def _pinned(pinned: bool) -> Callable[[ItemState], ItemState]:
    return lambda s: replace(s, pinned=pinned)


def _same_lifecycle(a: ItemState | None, b: ItemState | None) -> bool:
    """Equal but for recalls (a recall since the run does not block its undo)."""
    if a is None or b is None:
        return (a is None and b is None) or _plain(a or b)
    keep = ("recalls", "stability", "last_recall")
    da, db = a.to_dict(), b.to_dict()
    return all(da[k] == db[k] for k in da if k not in keep)


def _plain(state: ItemState | None) -> bool:
    return state is None or (
        state.archived_at is None and state.pinned is None and state.importance is None
    )
