"""Facts as search hits: the supersession and validity filter, calibrated scores, decay.

A fact competes with turns on the same calibrated scale (cosine mapped from the embedder's
fixed range, BM25 as s / (s + ref)), times ``fact_weight``. Current truth by default;
``as_of`` keeps the versions that held at that time; ``include_history`` keeps every version.
Volatile facts decay with the ``fact`` half-life; stable and pinned ones are exempt.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from madeleine.config import Settings
from madeleine.facts.rules.disclosure import OPEN_PREFIX
from madeleine.read.channels import Query
from madeleine.read.explain import Explain
from madeleine.read.lifecycle import LIFECYCLE_KEY, LifecycleIndex, LifecycleView
from madeleine.read.lru import UserLRU
from madeleine.read.names import about_names
from madeleine.read.request import PASSAGE_CHANNELS, SearchRequest
from madeleine.read.shared import decode_facts, encode_facts, through
from madeleine.records import Hit
from madeleine.sorted_ids import positions
from madeleine.store.ports import EventLog, FactRepository, SharedCache
from madeleine.store.records import FactVectors

_CACHED_USERS = 256

TRUTH_KEY = "truth"  # where the stage leaves the current facts for the facts channel


@dataclass(frozen=True, slots=True)
class CurrentFact:
    """A current fact the truth stage vouches for: the facts channel ranks it at least at
    ``floor``. Either it replaced a stale candidate (just above the stale turn's score before
    demotion), or it is what a leading turn said about the slot the query names (just below
    that turn: the fact ranks among the turns by the merit of the turn it came from), or it
    is the card that holds for the slot the query names (``slot``: just below the leading
    hit)."""

    number: int
    floor: float
    replaces: str | None  # the superseded fact's id; None: the fact of a leading turn
    stale_turn: str | None  # the demoted turn's id, or the leading turn that said the fact
    slot: str | None = None  # set when the card holds for a slot the query names


@dataclass(frozen=True, slots=True)
class FactQuery:
    user_id: str
    terms: Sequence[str]
    vector: npt.NDArray[np.float32] | None  # None: no dense scoring
    lexical: bool
    fusion: str
    as_of: float | None
    include_history: bool
    time_range: tuple[float, float] | None
    now: float
    decay: bool
    limit: int
    graph: dict[int, float] | None = None  # fact id -> the graph channel's calibrated score
    names_factor: float = 1.0  # kept by the user's name card when the query is not about names
    strength: bool = True  # relevance x strength (the lifecycle)
    include_archived: bool = False
    lifecycle: LifecycleView | None = None  # the user's states; None: read them


@dataclass(frozen=True, slots=True)
class FactLexical:
    rows: FactVectors
    bm25: npt.NDArray[np.float64] | None  # raw BM25 per row; None: not asked or no terms


@dataclass(frozen=True, slots=True)
class ScoredFact:
    number: int
    score: float
    explain: dict[str, Any]


class FactIndex:
    """Scores one user's facts per query; their vectors are cached until the user's fact stamp
    moves (every change to the user's facts moves it, whichever process made it)."""

    def __init__(
        self,
        facts: FactRepository,
        settings: Settings,
        similarity_range: tuple[float, float],
        shared: SharedCache | None = None,
        lifecycle: LifecycleIndex | None = None,
    ) -> None:
        self._facts = facts
        self._shared = shared
        self._lifecycle = lifecycle
        self._settings = settings
        self.settings = settings
        self._low, self._high = similarity_range
        self._cache: UserLRU[tuple[int, FactVectors]] = UserLRU(_CACHED_USERS)

    def rows(self, user_id: str) -> FactVectors:
        generation = self._facts.generation(user_id)
        cached = self._cache.get(user_id)
        if cached is not None and cached[0] == generation:
            return cached[1]
        loaded = through(
            self._shared,
            "facts",
            user_id,
            str(generation),
            lambda: self._facts.search_rows(user_id),
            encode_facts,
            decode_facts,
        )
        self._cache.put(user_id, (generation, loaded))
        return loaded

    def lexical(self, user_id: str, terms: Sequence[str], enabled: bool) -> FactLexical:
        """The SQL half of a fact search (the rows, BM25): run while the query is embedded."""
        rows = self.rows(user_id)
        size = rows.ids.size
        if not enabled or not terms or size == 0:
            return FactLexical(rows, None)
        raw = np.zeros(size, dtype=np.float64)
        found = self._facts.lexical(user_id, terms, size)
        if found:
            ids = np.fromiter((i for i, _ in found), dtype=np.int64, count=len(found))
            scores = np.fromiter((s for _, s in found), dtype=np.float64, count=len(found))
            at = positions(rows.ids, ids)
            known = at >= 0  # written after the rows were read: skipped
            raw[at[known]] = scores[known]
        return FactLexical(rows, raw)

    def search(self, query: FactQuery, lexical: FactLexical | None = None) -> list[ScoredFact]:
        prepared = lexical or self.lexical(query.user_id, query.terms, query.lexical)
        rows = prepared.rows
        size = rows.ids.size
        if size == 0 or query.limit <= 0:
            return []
        allowed = _valid(rows, query)
        strengths = None
        view = query.lifecycle
        if self._lifecycle is not None:
            view = view or self._lifecycle.view(query.user_id)
            strengths = self._lifecycle.fact_strengths(view, rows, query.now)
            if not query.include_archived:
                allowed &= ~strengths.archived
        channels: dict[str, tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]] = {}
        if query.vector is not None and rows.matrix.shape[1] == query.vector.shape[0]:
            raw = (rows.matrix @ query.vector).astype(np.float64)
            calibrated = np.clip((raw - self._low) / (self._high - self._low), 0.0, 1.0)
            channels["dense"] = (raw, calibrated)
        if query.lexical and prepared.bm25 is not None:
            raw = prepared.bm25
            channels["bm25"] = (raw, raw / (raw + self._settings.fusion.bm25_reference))
        if not channels:
            return []
        fused = self._fuse(channels, allowed, query.fusion)
        graph = np.zeros(size, dtype=np.float64)
        if query.graph:
            reached = np.fromiter(query.graph, dtype=np.int64, count=len(query.graph))
            at = positions(rows.ids, reached)
            present = at >= 0
            scores = np.fromiter(query.graph.values(), dtype=np.float64, count=reached.size)
            graph[at[present]] = scores[present]
            fused += self._settings.graph.weight * graph  # added, as for passages
        fused *= self._settings.facts.weight
        digests = np.fromiter((key.startswith("digest.") for key in rows.keys), bool, size)
        fused[digests] *= self._settings.lifecycle.digest_weight
        names = None
        if query.names_factor < 1.0:
            names = np.fromiter((key == "identity.name" for key in rows.keys), bool, size)
            fused[names] *= query.names_factor
        factor = None
        half_life = self._settings.stages.half_life_days.get("fact")
        if query.decay and half_life:
            moment = np.where(np.isnan(rows.valid_from), rows.recorded_at, rows.valid_from)
            age_days = np.maximum(query.now - moment, 0.0) / 86_400.0
            factor = np.where(rows.exempt, 1.0, np.power(0.5, age_days / half_life))
            fused *= factor
        lifecycle = self._lifecycle
        strong = query.strength and lifecycle is not None and strengths is not None
        if strong and strengths is not None:
            fused *= strengths.factor
        fused[~allowed] = 0.0
        positive = int((fused > 0).sum())
        take = min(positive, query.limit)
        if take <= 0:
            return []
        best = np.argpartition(-fused, take - 1)[:take]
        best = best[np.argsort(-fused[best], kind="stable")]
        results: list[ScoredFact] = []
        for row in best.tolist():
            explain: dict[str, Any] = {
                "fusion": query.fusion,
                "channels": {
                    name: {
                        "rank": int((raw[allowed] > raw[row]).sum()) + 1,
                        "score": round(float(raw[row]), 6),
                        "calibrated": round(float(cal[row]), 6),
                    }
                    for name, (raw, cal) in channels.items()
                    if raw[row] > 0
                },
                "fact_weight": self._settings.facts.weight,
            }
            if names is not None and names[row]:
                explain["phatic"] = {"factor": query.names_factor}
            if digests[row]:
                explain["digest_weight"] = self._settings.lifecycle.digest_weight
            if graph[row] > 0:
                explain["channels"]["graph"] = {"calibrated": round(float(graph[row]), 6)}
            if factor is not None:
                explain["decay"] = {
                    "factor": round(float(factor[row]), 6),
                    "exempt": bool(rows.exempt[row]),
                }
            if strong and lifecycle is not None and view is not None:
                explain["strength"] = lifecycle.explain(
                    lifecycle.fact_item(rows, row), view, query.now
                )
            results.append(ScoredFact(int(rows.ids[row]), float(fused[row]), explain))
        return results

    def _fuse(
        self,
        channels: dict[str, tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]],
        allowed: npt.NDArray[np.bool_],
        fusion: str,
    ) -> npt.NDArray[np.float64]:
        scores = np.zeros(allowed.size, dtype=np.float64)
        if fusion == "rrf":
            k = self._settings.fusion.rrf_k
            for raw, _ in channels.values():
                present = np.flatnonzero(allowed & (raw > 0))
                order = present[np.argsort(-raw[present], kind="stable")]
                scores[order] += 1.0 / (k + np.arange(1, order.size + 1))
            return scores / (len(channels) / (k + 1))
        weights = {
            "dense": self._settings.fusion.dense_weight,
            "bm25": 1.0 - self._settings.fusion.dense_weight,
        }
        norm = sum(weights[name] for name in channels) or 1.0
        for name, (_, calibrated) in channels.items():
            scores += weights[name] / norm * calibrated
        return scores


def _valid(rows: FactVectors, query: FactQuery) -> npt.NDArray[np.bool_]:
    """The supersession and validity filter, the same rule as ``Memory.facts``."""
    opens_before = np.isnan(rows.valid_from)
    ends_never = np.isnan(rows.valid_to)
    if query.as_of is not None:
        allowed = (opens_before | (rows.valid_from <= query.as_of)) & (
            ends_never | (rows.valid_to > query.as_of)
        )
    elif query.include_history:
        allowed = np.ones(rows.ids.size, dtype=bool)
    else:
        allowed = ~rows.superseded
    if query.time_range is not None:
        start, end = query.time_range
        overlaps = (opens_before | (rows.valid_from <= end)) & (
            ends_never | (rows.valid_to >= start)
        )
        # an open card is a statement of a moment (when it happened, else when it was said):
        # it belongs to the ranges that moment falls in, not to every range after it
        said = np.fromiter((k.startswith(OPEN_PREFIX) for k in rows.keys), bool, rows.ids.size)
        inside = ~opens_before & (rows.valid_from >= start) & (rows.valid_from <= end)
        allowed &= np.where(said, inside, overlaps)
    return allowed


class FactsChannel:
    """The user's cards as hits: scored like turns (shared query vector, same weights), then
    merged with the passage hits by score. The SQL half (rows, BM25) runs in ``start``, while
    the query is embedded; only the facts that make the cut are read from the store."""

    name = "facts"

    def __init__(self, index: FactIndex, facts: FactRepository, log: EventLog) -> None:
        self._index = index
        self._facts = facts
        self._log = log

    def start(self, query: Query) -> None:
        passage = _passage_channels(query)
        query.prepared[self.name] = self._index.lexical(
            query.request.user_id, query.analysis.terms, not passage or "bm25" in passage
        )

    def merge(self, query: Query, hits: list[Hit]) -> list[Hit]:
        request = query.request
        lexical: FactLexical = query.prepared.pop(self.name)
        t0 = time.perf_counter()
        passage = _passage_channels(query)
        both = not passage  # "facts" alone: scored by meaning and by words
        graph = query.graph
        scored = self._index.search(
            FactQuery(
                user_id=request.user_id,
                terms=query.analysis.terms,
                vector=query.query_vector() if (both or "dense" in passage) else None,
                lexical=both or "bm25" in passage,
                fusion=request.stages.fusion,
                as_of=request.as_of,
                include_history=request.include_history,
                time_range=request.time_range,
                now=request.now,
                decay=request.stages.decay,
                limit=request.limit,
                graph=None if graph is None else graph.facts,
                names_factor=1.0
                if about_names(request.query)
                else self._index.settings.stages.phatic_factor,
                strength=request.stages.strength,
                include_archived=request.include_archived,
                lifecycle=query.prepared.get(LIFECYCLE_KEY),
            ),
            lexical,
        )
        view: LifecycleView | None = query.prepared.get(LIFECYCLE_KEY)
        archived = set() if view is None or request.include_archived else view.archived_facts()
        scored = _with_current(
            scored, query.prepared.get(TRUTH_KEY, {}), lexical.rows, request, archived
        )
        cut = min(h.score for h in hits) if len(hits) >= request.limit else float("-inf")
        scored = [found for found in scored if found.score > cut]
        if not scored:
            return hits
        stored = self._facts.get_many([f.number for f in scored])
        refs = self._log.event_refs(sorted({e for f in stored.values() for e in f.card.sources}))
        elapsed = round((time.perf_counter() - t0) * 1000, 3)
        fact_hits: list[Hit] = []
        for found in scored:
            fact = stored.get(found.number)
            if fact is None:
                continue  # deleted between scoring and hydration
            card = fact.card
            sources = [refs[e] for e in card.sources if e in refs]
            explain: Explain = {
                **found.explain,  # type: ignore[typeddict-item]
                "fused": round(found.score, 6),
                "fact": {
                    "status": card.status,
                    "category": card.category.value,
                    "key": card.key,
                    "subject": card.subject,
                    "valid_from": None if card.valid_from is None else card.valid_from.isoformat(),
                    "valid_to": None if card.valid_to is None else card.valid_to.isoformat(),
                    "superseded_by": card.superseded_by,
                    "confidence": card.confidence,
                },
                "ms": {"facts": elapsed},
            }
            path = None if graph is None else graph.fact_path(found.number)
            if graph is not None and path is not None:
                explain["graph"] = {"seeds": graph.seeds, "path": path}
            fact_hits.append(
                Hit(
                    id=card.id,
                    kind="digest" if card.key.startswith("digest.") else "fact",
                    text=card.statement,
                    score=found.score,
                    timestamp=card.valid_from or card.recorded_at,
                    source_ids=[source for source, _ in sources],
                    session_id=sources[0][1] if sources else "",
                    speaker=None,
                    explain=explain,
                )
            )
        merged = sorted([*hits, *_fold_open_cards(hits, fact_hits)], key=lambda h: -h.score)
        return merged[: request.limit]


def _fold_open_cards(turns: list[Hit], facts: list[Hit]) -> list[Hit]:
    """The fact hits, but open cards whose turns are all among the hits: an open card is its
    turn's own words about the user, so beside that turn it would only take a place from
    another memory. Its id and statement go to the (first) turn's explain instead; a card
    whose turn did not make the list stays, and may bring the turn's words back."""
    by_source: dict[str, Hit] = {}
    for hit in turns:
        if hit.kind == "turn":
            for source in hit.source_ids:
                by_source.setdefault(source, hit)
    kept: list[Hit] = []
    for hit in facts:
        fact = hit.explain.get("fact")
        is_open = fact is not None and str(fact.get("key", "")).startswith(OPEN_PREFIX)
        turns_of = [by_source.get(source) for source in hit.source_ids]
        if not is_open or "current" in hit.explain or not turns_of or None in turns_of:
            kept.append(hit)
            continue
        first = turns_of[0]
        assert first is not None
        first.explain.setdefault("open_card", {"id": hit.id, "statement": hit.text})
    return kept


def _with_current(
    scored: list[ScoredFact],
    current: dict[int, CurrentFact],
    rows: FactVectors,
    request: SearchRequest,
    archived: set[int],
) -> list[ScoredFact]:
    """The current facts that replaced stale turns (``read/truth.py``) rank at least just
    above those turns, found by the facts' own scoring or not."""
    if not current:
        return scored
    allowed = _valid(
        rows,
        FactQuery(
            user_id=request.user_id,
            terms=(),
            vector=None,
            lexical=False,
            fusion=request.stages.fusion,
            as_of=request.as_of,
            include_history=request.include_history,
            time_range=request.time_range,
            now=request.now,
            decay=False,
            limit=0,
        ),
    )
    at = positions(rows.ids, np.fromiter(current, dtype=np.int64, count=len(current)))
    holding = {
        number
        for number, row in zip(current, at.tolist(), strict=True)
        if row >= 0 and allowed[row] and number not in archived
    }
    lifted: list[ScoredFact] = []
    found = set()
    for item in scored:
        lift = current.get(item.number)
        if lift is not None and item.number in holding:
            found.add(item.number)
            if lift.floor > item.score:
                item = ScoredFact(item.number, lift.floor, {**item.explain, **_current(lift, item)})
        lifted.append(item)
    for number in holding - found:
        lift = current[number]
        lifted.append(ScoredFact(number, lift.floor, _current(lift, None)))
    return sorted(lifted, key=lambda item: -item.score)


def _current(lift: CurrentFact, item: ScoredFact | None) -> dict[str, Any]:
    before = None if item is None else round(item.score, 6)
    if lift.slot is not None:
        return {
            "current": {"slot": lift.slot, "score_before": before, "score": round(lift.floor, 6)}
        }
    if lift.replaces is None:
        return {
            "current": {
                "said_in": lift.stale_turn,
                "score_before": before,
                "score": round(lift.floor, 6),
            }
        }
    return {
        "current": {
            "replaces": lift.replaces,
            "stale_turn": lift.stale_turn,
            "score_before": before,
            "score": round(lift.floor, 6),
        }
    }


def _passage_channels(query: Query) -> tuple[str, ...]:
    return tuple(c for c in query.request.channels if c in PASSAGE_CHANNELS)
