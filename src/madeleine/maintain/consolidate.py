"""Consolidation and compaction of one user's memory (``Memory.consolidate``,
``madeleine maintain``, and the worker's schedule).

One run, in order: recompute importance by rules; merge duplicate cards into the oldest
(sources kept, confidence raised, each restatement counted as a recall); archive turns that
restate an earlier one; summarize old sessions into digest cards linked to their turns;
abstract procedures repeated across sessions into procedural cards; then archive what has
faded below the threshold (sooner when the user nears ``max_items``).

Every step writes through the lifecycle log, so a run can be explained and undone
(``Memory.undo``). Each step commits on its own and recomputes from the store, so a run that
crashed is finished by the next one, and a run with nothing left to do changes nothing.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from madeleine.config import Settings
from madeleine.embed.base import Embedder
from madeleine.facts.cards import CardDraft, Category, MemoryType, Stability
from madeleine.maintain.importance import rule_importance
from madeleine.maintain.items import DIGEST_KEY, PROCEDURE_KEY, UserItems
from madeleine.maintain.lifecycle import new_run
from madeleine.maintain.strength import ItemFacts, StrengthModel
from madeleine.store.ports import Store
from madeleine.store.records import ItemState, StateChange, StoredEpisode, StoredFact
from madeleine.text.analyzer import Analyzer

log = logging.getLogger(__name__)

_BLOCK = 512  # rows per block of the pairwise similarity pass
MAX_PAIRWISE_TURNS = 50_000  # beyond this many active turns, turn duplicates are not sought
_DIGEST_MIN_TURNS = 3
_DIGEST_TURNS = 3  # turns quoted in a digest
_DIGEST_SOURCES = 50
_PROCEDURE_MIN_SESSIONS = 3
_PROCEDURE_SIMILARITY = 0.75
_PROCEDURE_CUES = re.compile(
    r"(?i)\b(?:first|then|after\s+that|next|finally|step|steps|procedure|process|checklist"
    r"|as\s+usual|same\s+as\s+last\s+time)\b|먼저|그\s*다음|마지막으로|절차|순서"
)


@dataclass(frozen=True, slots=True)
class Change:
    """One thing a run changed: ``action`` is importance / merge / archive / duplicate /
    digest / procedure / forget; ``item`` the turn or fact; ``detail`` why."""

    action: str
    item: str
    detail: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"action": self.action, "item": self.item, "detail": self.detail}


@dataclass(slots=True)
class MaintenanceReport:
    run: str
    user_id: str
    changes: list[Change]
    before: dict[str, int]  # active turns, facts, digests before the run
    after: dict[str, int]
    seconds: float
    llm_calls: int = 0
    notes: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return dict(Counter(change.action for change in self.changes))

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "user_id": self.user_id,
            "changes": [c.to_dict() for c in self.changes],
            "counts": self.counts(),
            "before": self.before,
            "after": self.after,
            "seconds": round(self.seconds, 3),
            "llm_calls": self.llm_calls,
            "notes": self.notes,
        }


class Consolidator:
    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        analyzer: Analyzer,
        settings: Settings,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._analyzer = analyzer
        self._settings = settings
        self._lifecycle = settings.lifecycle
        self.model = StrengthModel(settings.lifecycle)
        self._clock = clock

    def run(self, user_id: str, now: float | None = None) -> MaintenanceReport:
        started = time.perf_counter()
        moment = self._clock() if now is None else now
        run = new_run("maintain")
        changes: list[Change] = []
        notes: list[str] = []
        items = UserItems.load(self._store, user_id)
        before = _sizes(items)
        steps: list[Callable[[UserItems, str, float, list[str]], list[Change]]] = [
            self._importance,
            self._merge_cards,
            self._duplicate_turns,
            self._digests,
            self._procedures,
            self._forget,
        ]
        for step in steps:
            found = step(items, run, moment, notes)
            changes += found
            if found:  # the next step weighs the store as this one left it
                items = UserItems.load(self._store, user_id)
        return MaintenanceReport(
            run=run,
            user_id=user_id,
            changes=changes,
            before=before,
            after=_sizes(items),
            seconds=time.perf_counter() - started,
            notes=notes,
        )

    # -- steps -------------------------------------------------------------------------------

    def _apply(
        self, items: UserItems, run: str, planned: dict[str, StateChange], at: float
    ) -> list[Change]:
        """Write planned changes in one transaction, each checked against the state it was
        planned from (a concurrent edit wins: its item is skipped)."""
        if not planned:
            return []

        def decide(current: dict[str, ItemState]) -> list[StateChange]:
            return [c for c in planned.values() if current.get(c.item) == c.before]

        done = self._store.lifecycle.change(items.user_id, list(planned), decide, run, at)
        return [Change(c.action, c.item, c.detail) for c in done]

    def _importance(self, items: UserItems, run: str, now: float, notes: list[str]) -> list[Change]:
        planned: dict[str, StateChange] = {}
        texts = [(f.card.id, f.card.statement) for f in items.current_facts()]
        texts += [
            (f"ep_{items.episodes[n].id}", items.episodes[n].body) for n in items.active_turns()
        ]
        for item, text in texts:
            value = rule_importance(text)
            state = items.states.get(item)
            if value is None or (state is not None and state.importance_by not in (None, "rules")):
                continue  # the caller's or the LLM's judgement stands
            if state is not None and state.importance == value:
                continue
            current = state or ItemState(item=item)
            planned[item] = StateChange(
                "importance",
                item,
                state,
                replace(current, importance=value, importance_by="rules"),
                {"importance": value, "by": "rules"},
            )
        return self._apply(items, run, planned, now)

    def _merge_cards(
        self, items: UserItems, run: str, now: float, notes: list[str]
    ) -> list[Change]:
        facts = [
            f
            for f in items.current_facts()
            if not f.card.key.startswith((DIGEST_KEY, PROCEDURE_KEY))
        ]
        if len(facts) < 2:
            return []
        by_subject: dict[str, list[StoredFact]] = defaultdict(list)
        for fact in facts:
            by_subject[fact.card.subject.casefold()].append(fact)
        clusters: list[list[StoredFact]] = []
        for group in by_subject.values():
            clusters += _clusters(group, self._lifecycle.duplicate_similarity)
        changes: list[Change] = []
        every = items.item_facts()
        for cluster in clusters:
            cluster.sort(key=lambda f: (_fact_time(f), f.number))
            survivor, duplicates = cluster[0], cluster[1:]
            support_before = {
                "confidence": survivor.card.confidence,
                "sources": list(survivor.card.sources),
            }
            confidence = 1.0 - float(np.prod([1.0 - f.card.confidence for f in cluster]))
            confidence = round(min(0.99, max(confidence, survivor.card.confidence)), 4)
            sources = list(dict.fromkeys(e for f in cluster for e in f.card.sources))
            with self._store.transaction() as tx:
                self._store.facts.set_support(tx, survivor.number, confidence, sources)
            planned: dict[str, StateChange] = {}
            survivor_state = items.states.get(survivor.card.id)
            reinforced = survivor_state
            for duplicate in duplicates:  # each restatement was a recall of the same memory
                reinforced = self.model.reinforced(
                    every[survivor.card.id], reinforced, _fact_time(duplicate)
                )
            assert reinforced is not None
            planned[survivor.card.id] = StateChange(
                "merge",
                survivor.card.id,
                survivor_state,
                reinforced,
                {
                    "merged": [f.card.id for f in duplicates],
                    "confidence": confidence,
                    "support_before": support_before,
                },
            )
            for duplicate in duplicates:
                state = items.states.get(duplicate.card.id)
                planned[duplicate.card.id] = StateChange(
                    "archive",
                    duplicate.card.id,
                    state,
                    replace(
                        state or ItemState(item=duplicate.card.id),
                        archived_at=now,
                        archive_reason=f"merged into {survivor.card.id}",
                    ),
                    {"reason": "duplicate card", "into": survivor.card.id},
                )
            changes += self._apply(items, run, planned, now)
        return changes

    def _duplicate_turns(
        self, items: UserItems, run: str, now: float, notes: list[str]
    ) -> list[Change]:
        active = items.active_turns()
        if len(active) < 2:
            return []
        if len(active) > MAX_PAIRWISE_TURNS:
            notes.append(
                f"{len(active)} active turns: more than {MAX_PAIRWISE_TURNS}, so restated "
                "turns were not sought this run"
            )
            return []
        every = items.item_facts()
        order = sorted(active, key=lambda n: (items.episodes[n].occurred_at, items.episodes[n].id))
        matrix = _normalized(items.episode_vectors[order])
        threshold = self._lifecycle.duplicate_similarity
        root: dict[int, int] = {}  # position in ``order`` -> earlier position it restates
        for start in range(0, len(order), _BLOCK):
            block = matrix[start : start + _BLOCK] @ matrix[: start + _BLOCK].T
            for offset in range(block.shape[0]):
                row = start + offset
                earlier = np.flatnonzero(block[offset, :row] >= threshold)
                if earlier.size:
                    first = int(earlier[0])
                    root[row] = root.get(first, first)
        planned: dict[str, StateChange] = {}
        restated: dict[int, list[float]] = defaultdict(list)
        for row, kept in root.items():
            episode = items.episodes[order[row]]
            item = f"ep_{episode.id}"
            state = items.states.get(item)
            if self.model.protection(every[item], state) is not None:
                continue
            original = f"ep_{items.episodes[order[kept]].id}"
            planned[item] = StateChange(
                "archive",
                item,
                state,
                replace(
                    state or ItemState(item=item),
                    archived_at=now,
                    archive_reason=f"restates {original}",
                ),
                {"reason": "duplicate turn", "of": original},
            )
            restated[kept].append(episode.occurred_at)
        for kept, times in restated.items():
            item = f"ep_{items.episodes[order[kept]].id}"
            state = items.states.get(item)
            reinforced = state
            for at in sorted(times):
                reinforced = self.model.reinforced(every[item], reinforced, at)
            assert reinforced is not None
            planned[item] = StateChange(
                "merge", item, state, reinforced, {"restated_by": len(times)}
            )
        return self._apply(items, run, planned, now)

    def _digests(self, items: UserItems, run: str, now: float, notes: list[str]) -> list[Change]:
        existing = {f.card.key for f in items.facts if f.card.key.startswith(DIGEST_KEY)}
        sessions: dict[str, list[StoredEpisode]] = defaultdict(list)
        for episode in items.episodes:
            sessions[episode.session_id].append(episode)
        cutoff = now - self._lifecycle.digest_after_days * 86_400.0
        changes: list[Change] = []
        for session_id, turns in sessions.items():
            key = _digest_key(session_id)
            if key in existing or len(turns) < _DIGEST_MIN_TURNS:
                continue
            turns.sort(key=lambda e: (e.occurred_at, e.id))
            if turns[-1].occurred_at > cutoff:
                continue  # a recent session stays as it is
            statement = self._summary(session_id, turns)
            draft = CardDraft(
                subject="user",
                relationship=None,
                backstory=None,
                multi_valued=True,
                valid_to=None,
                statement=statement,
                category=Category.OTHER,
                key=key,
                memory_type=MemoryType.EPISODIC,
                stability=Stability.STABLE,
                importance=0.4,
                confidence=0.9,
                valid_from=datetime.fromtimestamp(turns[0].occurred_at, UTC),
                sources=[e.focus_event_id for e in turns][:_DIGEST_SOURCES],
            )
            created = self._create(items, run, now, draft, {"session_id": session_id})
            changes.append(
                Change(
                    "digest",
                    created,
                    {"session_id": session_id, "turns": [f"ep_{e.id}" for e in turns]},
                )
            )
        return changes

    def _summary(self, session_id: str, turns: Sequence[StoredEpisode]) -> str:
        """A heuristic digest: the session's dates and its most informative turns."""
        day = datetime.fromtimestamp(turns[0].occurred_at, UTC).date().isoformat()
        last = datetime.fromtimestamp(turns[-1].occurred_at, UTC).date().isoformat()
        span = day if day == last else f"{day} to {last}"
        scored = sorted(
            turns, key=lambda e: (-len(set(self._analyzer.terms(e.body))), e.occurred_at)
        )[:_DIGEST_TURNS]
        quoted = [_clip(e.body, 160) for e in sorted(scored, key=lambda e: e.occurred_at)]
        return _clip(
            f"Session {session_id} ({span}, {len(turns)} turns): " + " | ".join(quoted), 990
        )

    def _procedures(self, items: UserItems, run: str, now: float, notes: list[str]) -> list[Change]:
        existing = {f.card.key for f in items.facts if f.card.key.startswith(PROCEDURE_KEY)}
        # every telling counts, the restatements archived as duplicates too
        cued = [n for n, e in enumerate(items.episodes) if _PROCEDURE_CUES.search(e.body)]
        if len(cued) < _PROCEDURE_MIN_SESSIONS:
            return []
        matrix = _normalized(items.episode_vectors[cued])
        similar = matrix @ matrix.T >= _PROCEDURE_SIMILARITY
        groups = _components(similar)
        changes: list[Change] = []
        for group in groups:
            turns = sorted((items.episodes[cued[i]] for i in group), key=lambda e: e.occurred_at)
            if len({e.session_id for e in turns}) < _PROCEDURE_MIN_SESSIONS:
                continue
            words = Counter(t for e in turns for t in set(self._analyzer.terms(e.body)))
            common = [w for w, c in words.most_common(6) if c >= _PROCEDURE_MIN_SESSIONS][:3]
            key = PROCEDURE_KEY + (".".join(common) or _digest_key(turns[0].session_id)[7:])
            key = key[:200]
            if key in existing:
                continue
            first = datetime.fromtimestamp(turns[0].occurred_at, UTC).date().isoformat()
            latest = turns[-1]
            statement = _clip(
                f"Usual procedure (done {len(turns)} times since {first}): {latest.body}", 990
            )
            draft = CardDraft(
                subject="user",
                relationship=None,
                backstory=None,
                multi_valued=True,
                valid_to=None,
                statement=statement,
                category=Category.HABIT,
                key=key,
                memory_type=MemoryType.PROCEDURAL,
                stability=Stability.STABLE,
                importance=0.6,
                confidence=min(0.95, 0.5 + 0.1 * len(turns)),
                valid_from=datetime.fromtimestamp(turns[0].occurred_at, UTC),
                sources=[e.focus_event_id for e in turns][:_DIGEST_SOURCES],
            )
            existing.add(key)
            created = self._create(items, run, now, draft, {"from": [f"ep_{e.id}" for e in turns]})
            changes.append(
                Change("procedure", created, {"key": key, "from": [f"ep_{e.id}" for e in turns]})
            )
        return changes

    def _forget(self, items: UserItems, run: str, now: float, notes: list[str]) -> list[Change]:
        every = items.item_facts()
        active = [f"ep_{items.episodes[n].id}" for n in items.active_turns()]
        active += [f.card.id for f in items.current_facts()]
        weak: list[tuple[float, str]] = []
        for item in active:
            facts = every[item]
            strength = self.model.strength(facts, items.states.get(item), now)
            if strength.protected is None:
                weak.append((strength.value, item))
        weak.sort()
        threshold = self._lifecycle.archive_below
        budget = self._lifecycle.max_items
        chosen = [item for value, item in weak if value < threshold]
        reason = {item: f"strength below {threshold:g}" for item in chosen}
        if budget is not None and len(active) > 0.9 * budget:
            # near the budget: the weakest unprotected items go until 90 % of it is left
            excess = len(active) - int(0.9 * budget)
            for value, item in weak[:excess]:
                if item not in reason:
                    chosen.append(item)
                    reason[item] = f"over the storage budget of {budget} (strength {value:.3f})"
            if len(active) - len(chosen) > budget:
                notes.append(
                    f"{len(active) - len(chosen)} active items remain above max_items={budget}: "
                    "the rest are protected (pinned, important or exempt)"
                )
        planned: dict[str, StateChange] = {}
        for item in chosen:
            state = items.states.get(item)
            planned[item] = StateChange(
                "forget",
                item,
                state,
                replace(
                    state or ItemState(item=item), archived_at=now, archive_reason=reason[item]
                ),
                {"reason": reason[item]},
            )
        return self._apply(items, run, planned, now)

    # -- writing new cards -------------------------------------------------------------------

    def _create(
        self, items: UserItems, run: str, now: float, draft: CardDraft, detail: dict[str, Any]
    ) -> str:
        vector = self._embedder.embed_passages([draft.statement])[0]
        terms = " ".join(self._analyzer.terms(draft.statement))
        with self._store.transaction() as tx:
            number = self._store.facts.insert(
                tx,
                items.user_id,
                draft,
                np.asarray(vector, dtype=np.float32),
                terms,
                status="current",
                extractor="maintain",
                now=now,
            )
        item = f"fact_{number}"
        self._store.lifecycle.change(
            items.user_id,
            [item],
            lambda current: [StateChange("create", item, None, ItemState(item=item), detail)],
            run,
            now,
        )
        return item


def _sizes(items: UserItems) -> dict[str, int]:
    current = items.current_facts()
    digests = sum(1 for f in current if f.card.key.startswith(DIGEST_KEY))
    return {
        "turns": len(items.active_turns()),
        "facts": len(current) - digests,
        "digests": digests,
        "archived": sum(1 for s in items.states.values() if s.archived_at is not None),
    }


def _fact_time(fact: StoredFact) -> float:
    return (fact.card.valid_from or fact.card.recorded_at).timestamp()


def _normalized(matrix: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    normalized: npt.NDArray[np.float32] = (matrix / np.maximum(norms, 1e-12)).astype(np.float32)
    return normalized


def _clusters(facts: list[StoredFact], threshold: float) -> list[list[StoredFact]]:
    """Groups of two or more cards saying the same thing (cosine, or the same words)."""
    matrix = _normalized(np.stack([f.vector for f in facts]))
    similar = matrix @ matrix.T >= threshold
    words = [" ".join(re.findall(r"\w+", f.card.statement.casefold())) for f in facts]
    for i in range(len(facts)):
        for j in range(i + 1, len(facts)):
            if words[i] == words[j]:
                similar[i, j] = similar[j, i] = True
    return [[facts[i] for i in group] for group in _components(similar) if len(group) > 1]


def _components(similar: npt.NDArray[np.bool_]) -> list[list[int]]:
    """Connected components of a symmetric boolean adjacency matrix."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    count, labels = connected_components(csr_matrix(similar), directed=False)
    groups: list[list[int]] = [[] for _ in range(count)]
    for index, label in enumerate(labels.tolist()):
        groups[label].append(index)
    return groups


def _digest_key(session_id: str) -> str:
    if len(session_id) <= 120 and re.fullmatch(r"[\w.:-]+", session_id):
        return DIGEST_KEY + session_id
    return DIGEST_KEY + hashlib.sha256(session_id.encode()).hexdigest()[:16]


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


__all__ = ["Change", "Consolidator", "ItemFacts", "MaintenanceReport"]
