"""The search pipeline: analyze → recall per channel → fuse → score stages → select.

``Searcher`` holds the strategies (channels, fusions, stages) and runs one ``Query``
through them in the order its recipe gives (``read/recipe.py``). Every stage can be switched
per query (``stages=``) and leaves its trace in ``hit.explain``. Scores are calibrated
against fixed references, so a hit's score means the same thing in every query.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from typing import Any, Protocol, cast

import numpy as np
import numpy.typing as npt

from madeleine.config import Settings
from madeleine.courtesy import checkpoint
from madeleine.embed.base import Embedder, QueueingEmbedder, Vectors
from madeleine.embed.cut import QueryCut
from madeleine.maintain.strength import StrengthModel
from madeleine.read.blas import BlasThreads
from madeleine.read.channels import (
    BM25Channel,
    Channel,
    DenseChannel,
    GraphChannel,
    MergedChannel,
    Query,
    Recall,
)
from madeleine.read.dense import DenseIndex, UserRows
from madeleine.read.explain import ChannelEntry, Explain, FusionName, HitKind
from madeleine.read.facts import FactIndex, FactsChannel
from madeleine.read.fusion import Fusion, fusions
from madeleine.read.graph import GraphIndex
from madeleine.read.lifecycle import (
    LIFECYCLE_KEY,
    STRENGTHS_KEY,
    LifecycleIndex,
    RowStrengths,
    StrengthStage,
)
from madeleine.read.lru import UserLRU
from madeleine.read.names import UserNames, rewrite
from madeleine.read.query import analyze_query
from madeleine.read.recipe import RECIPES, StageName
from madeleine.read.request import PASSAGE_CHANNELS, SearchRequest, Stages
from madeleine.read.rerank import build_chain
from madeleine.read.stages import (
    DatedStage,
    DecayStage,
    Effect,
    EntityStage,
    PhaticStage,
    RangeStage,
    RerankStage,
    ScoreState,
    SessionStage,
    Stage,
    TimeStage,
    WindowStage,
)
from madeleine.read.topk import top_positive
from madeleine.read.truth import TruthStage
from madeleine.records import Hit
from madeleine.store.ports import (
    EpisodeIndex,
    EventLog,
    FactRepository,
    GraphRepository,
    LifecycleRepository,
    SharedCache,
)
from madeleine.store.records import StoredEpisode
from madeleine.text.analyzer import Analyzer
from madeleine.text.timeparse import from_epoch

_RECENT_QUERIES = 256  # query embeddings kept (by exact text)
ANCHOR_POOL = 2000  # the best rows session anchors are looked for among


class SearchStore(EpisodeIndex, EventLog, Protocol):
    """What search reads: passages and their indexes, and the log for source ids."""


class Searcher:
    def __init__(
        self,
        store: SearchStore,
        dense: DenseIndex,
        embedder: Embedder,
        analyzer: Analyzer,
        settings: Settings,
        facts: FactRepository | None = None,
        graph: GraphRepository | None = None,
        shared: SharedCache | None = None,
        lifecycle: LifecycleRepository | None = None,
    ) -> None:
        self._store = store
        self._dense = dense
        self._embedder = embedder
        self._analyzer = analyzer
        self._settings = settings
        self._embedding_cut = QueryCut(embedder, settings.embed.query_max_tokens)
        self.default_stages = Stages(
            fusion=cast(FusionName, settings.fusion.method),  # checked by Settings
            windows=settings.stages.window_weight > 0,
            sessions=settings.stages.session_weight > 0,
            entities=settings.stages.entity_weight > 0,
            rerank=settings.rerank.enabled,
        )
        # the query is embedded on this thread (the model releases the GIL), and the graph
        # walk runs there once the vector is in, while the calling thread runs the lexical
        # channel and the stages' lookups (SQLite frees the GIL): the dense cost hides theirs
        self._embedding_pool = ThreadPoolExecutor(1, thread_name_prefix="madeleine-query-embed")
        # an agent often asks the same thing again (retries, the same question each turn):
        # the embedding is the costliest step of a search, so recent ones are kept
        self._recent_vectors: UserLRU[Vectors] = UserLRU(_RECENT_QUERIES)
        self._blas = BlasThreads.for_numpy(1)
        self.lifecycle = (
            None
            if lifecycle is None
            else LifecycleIndex(lifecycle, StrengthModel(settings.lifecycle))
        )
        self._graph = (
            None if graph is None else GraphIndex(graph, settings, embedder.similarity_range, facts)
        )
        channels: list[Channel] = [
            BM25Channel(store, settings.fusion.bm25_reference),
            DenseChannel(dense, embedder.similarity_range),
        ]
        if self._graph is not None:
            channels.append(
                GraphChannel(
                    self._graph, self._embedding_pool, embedder.dim, settings.graph.passage_seeds
                )
            )
        self._channels: dict[str, Channel] = {c.name: c for c in channels}
        self._merged: dict[str, MergedChannel] = {}
        fact_index = None
        self._names = None if facts is None else UserNames(facts)
        if facts is not None:
            fact_index = FactIndex(
                facts, settings, embedder.similarity_range, shared, self.lifecycle
            )
            self._merged["facts"] = FactsChannel(fact_index, facts, store)
        self._fusions: dict[FusionName, Fusion] = fusions(settings)
        self.reranker = build_chain(
            embedder,
            settings.rerank.model_path,
            settings.rerank.url,
            settings.rerank.model,
            settings.rerank.api_key,
        )
        stages: list[Stage] = [
            WindowStage(settings.stages.window_weight),
            SessionStage(store, settings.stages.session_weight, settings.stages.session_reference),
            EntityStage(
                store, analyzer, settings.stages.entity_weight, settings.stages.entity_max_share
            ),
            RangeStage(),
            DatedStage(store, settings.stages.dated_weight),
            TimeStage(store, analyzer, settings),
            PhaticStage(store, analyzer, settings.stages.phatic_factor),
            DecayStage(settings.stages.half_life_days),
            StrengthStage(self.lifecycle),
            RerankStage(store, self.reranker, settings.rerank.top_n, settings.rerank.weight),
        ]
        if facts is not None and fact_index is not None:
            stages.append(
                TruthStage(
                    store,
                    fact_index,
                    facts,
                    settings.stages.superseded_factor,
                    embedder.similarity_range,
                    analyzer,
                )
            )
        self._stages: dict[StageName, Stage] = {s.name: s for s in stages}
        for recipe in RECIPES.values():
            missing = [
                name
                for name in recipe.stages
                if name not in self._stages and not (name == "truth" and facts is None)
            ]
            if missing:
                raise ValueError(f"recipe {recipe.name!r} names unregistered stages {missing}")

    def search(self, request: SearchRequest) -> list[Hit]:
        with self._blas.limited():  # the search's vector products on one thread each
            return self._search(request)

    def _search(self, request: SearchRequest) -> list[Hit]:
        started = time.perf_counter()
        passage = tuple(c for c in request.channels if c in PASSAGE_CHANNELS)
        merged = [self._merged[c] for c in request.channels if c in self._merged]
        rows = self._dense.rows(request.user_id)
        names = () if self._names is None else self._names.of(request.user_id)
        if names and self._graph is not None:  # a speaker's name is who, not a topic
            speakers = self._graph.speakers_among(request.user_id, rows, self._embedder.dim, names)
            names = tuple(name for name in names if name not in speakers)
        text = rewrite(request.query, names)
        vector = None
        if any(self._wants_vector(c) for c in passage) or (merged and not passage):
            vector = self.query_vector(text)
        query = Query(
            request=request,
            analysis=analyze_query(text, self._analyzer, request.query, names),
            rows=rows,
            depth=max(self._settings.fusion.channel_depth, request.limit),
            vector=vector,
        )
        if self.lifecycle is not None:
            query.prepared[LIFECYCLE_KEY] = self.lifecycle.view(request.user_id)
        for channel in merged:
            channel.start(query)
        hits: list[Hit] = []
        if query.rows.ids.size and passage:
            hits = self._passage_hits(query, started)
        anchors = [hit for hit in hits if hit.explain.get("session_anchor")]
        if anchors:  # past every hit, out of the merge's cut
            hits = [hit for hit in hits if not hit.explain.get("session_anchor")]
        for channel in merged:
            hits = channel.merge(query, hits)
        if not merged and vector is not None:
            vector.cancel()
        return hits + anchors

    def _turn_strengths(self, query: Query) -> RowStrengths | None:
        """Every row's strength and archive flag, computed once per query (the strength
        stage reads them too)."""
        view = query.prepared.get(LIFECYCLE_KEY)
        if self.lifecycle is None or view is None:
            return None
        rows = query.rows
        strengths = self.lifecycle.turn_strengths(
            view, rows.ids, rows.times, rows.kinds, rows.pinned, query.request.now
        )
        query.prepared[STRENGTHS_KEY] = strengths
        return strengths

    def query_vector(self, text: str) -> Future[Vectors]:
        """The query's embedding: from the cache of recent queries, or computed on the
        embedding thread while this one goes on. The model reads at most
        ``embed.query_max_tokens`` of it (the per-request cost cap)."""
        text, size = self._embedding_cut.measured(text)
        checkpoint(size)  # before this search takes the embedding thread: how big it is
        cached = self._recent_vectors.get(text)
        if cached is not None:
            done: Future[Vectors] = Future()
            done.set_result(cached)
            return done
        if isinstance(self._embedder, QueueingEmbedder):  # concurrent searches queue together
            pending = self._embedder.submit_queries([text])
        else:
            pending = self._embedding_pool.submit(self._embedder.embed_queries, [text])

        def keep(future: Future[Vectors]) -> None:
            if not future.cancelled() and future.exception() is None:
                self._recent_vectors.put(text, future.result())

        pending.add_done_callback(keep)
        return pending

    def forget_queries(self) -> None:
        """Drop the cached query embeddings (benchmarks time the embedding every time)."""
        self._recent_vectors.clear()

    def _wants_vector(self, name: str) -> bool:
        channel = self._channels.get(name)
        return channel is not None and channel.waits_for_vector

    def _passage_hits(self, query: Query, started: float) -> list[Hit]:
        request = query.request
        recipe = RECIPES[request.stages.recipe]
        channels = [self._channels[name] for name in request.channels if name in self._channels]
        timings: dict[str, float] = {}
        for channel in channels:  # a channel's time is its start and its recall
            _timed(timings, channel.name, channel.start, query)
        recalls: dict[str, Recall] = {}
        # channels that need no vector first, then the stages' lookups, then the rest
        for channel in channels:
            if not channel.waits_for_vector:
                recalls[channel.name] = _timed(
                    timings, channel.name, channel.recall, query, recalls
                )
        effects: dict[str, Effect | None] = {}
        stages = [
            self._stages[name]
            for name in recipe.stages
            if name in self._stages and request.stages.allows(name)
        ]
        for stage in stages:
            name = stage.name
            if stage.early:
                checkpoint()
                t0 = time.perf_counter()
                effects[name] = stage.effect(query, None)
                if effects[name] is not None:  # only the stages that did something are timed
                    timings[name] = _ms(t0)
        for channel in channels:
            if channel.waits_for_vector:
                recalls[channel.name] = _timed(
                    timings, channel.name, channel.recall, query, recalls
                )

        t0 = time.perf_counter()
        size = query.rows.ids.size
        base = self._fusions[request.stages.fusion].fuse(_in_recall_order(recalls), size)
        strengths = self._turn_strengths(query)
        if strengths is not None and not request.include_archived:
            base[strengths.archived] = 0.0  # archived: out of search until restored
        scores = ScoreState(base, base.copy())
        applied: list[Effect] = []
        for stage in stages:
            checkpoint()
            effect = effects[stage.name] if stage.early else stage.effect(query, scores)
            if effect is not None:
                effect.apply(scores.total)
                applied.append(effect)
        if strengths is not None and not request.include_archived:
            scores.total[strengths.archived] = 0.0  # no stage lifts an archived turn back
        diversify = (
            query.analysis.broad if request.stages.diversify is None else request.stages.diversify
        )
        settings = self._settings
        chosen, penalties = _select(
            scores.total,
            query.rows,
            request.limit,
            settings.stages.diversity_penalty if diversify else 0.0,
            settings.stages.mmr_lambda if diversify else None,
        )
        anchors = _session_anchors(scores.total, query.rows, chosen, request.session_anchors)
        timings["fusion"] = _ms(t0)
        hits = self._hydrate(
            query, recalls, scores, applied, chosen + anchors, penalties, timings, started
        )
        anchored = {f"ep_{int(query.rows.ids[row])}" for row in anchors}
        for hit in hits:
            if hit.id in anchored:
                hit.explain["session_anchor"] = True
        return hits

    def _hydrate(
        self,
        query: Query,
        recalls: Mapping[str, Recall],
        scores: ScoreState,
        applied: Sequence[Effect],
        chosen: list[int],
        penalties: Mapping[int, float],
        timings: dict[str, float],
        started: float,
    ) -> list[Hit]:
        """The chosen rows as hits, each with every stage's explain entry."""
        rows, graph = query.rows, query.graph
        episodes = query.episodes(self._store, [int(rows.ids[r]) for r in chosen])
        ranks = {name: _rank_map(recall, chosen) for name, recall in recalls.items()}
        analysis = query.analysis.to_dict()
        ms = {**timings, "total": _ms(started)}
        hits: list[Hit] = []
        for row in chosen:
            episode = episodes.get(int(rows.ids[row]))
            if episode is None:
                continue  # deleted between recall and hydration
            score = float(scores.total[row] - penalties[row])
            explain: Explain = {
                "fusion": query.request.stages.fusion,
                "channels": {name: ranks[name][row] for name in recalls if row in ranks[name]},
                "base": round(float(scores.base[row]), 6),
                "fused": round(score, 6),
                "query": analysis,
                "ms": dict(ms),
            }
            path = None if graph is None else graph.path(row)
            if graph is not None and path is not None:
                explain["graph"] = {"seeds": graph.seeds, "path": path}
            extra: dict[str, Any] = {}
            for effect in applied:
                entry = effect.entry(row)
                if entry is not None:
                    extra[effect.key] = entry
            if penalties[row] > 1e-9:
                extra["diversity_penalty"] = round(float(penalties[row]), 6)
            explain.update(extra)  # type: ignore[typeddict-item]
            hits.append(hit_from_episode(episode, score, explain))
        return hits

    def forget(self, user_id: str) -> None:
        self._dense.forget(user_id)

    def follow(self, user_ids: set[str]) -> None:
        """The indexer committed episodes of these users: keep their dense index current."""
        self._dense.follow(user_ids)

    def close(self) -> None:
        self._embedding_pool.shutdown(wait=True, cancel_futures=True)

    def graph_footprint(self, user_id: str) -> dict[str, int]:
        return {} if self._graph is None else self._graph.footprint(user_id)

    def graph_entities(self, user_id: str, limit: int) -> list[dict[str, Any]]:
        if self._graph is None:
            raise RuntimeError("this searcher has no graph store")
        return self._graph.entities(user_id, self._dense.rows(user_id), self._embedder.dim, limit)

    def graph_view(
        self, user_id: str, around: str | None, depth: int, limit: int
    ) -> dict[str, Any]:
        if self._graph is None:
            raise RuntimeError("this searcher has no graph store")
        cache = self._dense.rows(user_id)
        view = self._graph.view(user_id, cache, self._embedder.dim, around, depth, limit)
        wanted = [int(n["id"][3:]) for n in view["nodes"] if n["type"] == "passage"]
        episodes = self._store.episodes(wanted)
        for node in view["nodes"]:
            if node["type"] == "passage":
                episode = episodes.get(int(node["id"][3:]))
                node["label"] = "" if episode is None else episode.body
                node["session_id"] = None if episode is None else episode.session_id
                node["timestamp"] = (
                    None if episode is None else from_epoch(episode.occurred_at).isoformat()
                )
        return view

    def later_turns(
        self, request: SearchRequest, about: str, after: float, limit: int = 3
    ) -> list[Hit]:
        """The turns said after ``after`` (up to the request's moment) that best match
        ``about`` by their words: where a card's topic was spoken of again, whether or not
        any rule learned from it (the context checks them against the card)."""
        end = request.as_of if request.as_of is not None else request.now
        if end <= after or not about.strip():
            return []
        narrow = replace(
            request, query=about, channels=("bm25",), time_range=(after, end), limit=limit
        )
        return [h for h in self.search(narrow) if h.kind == "turn"]

    def neighbour_hits(
        self, user_id: str, hits: Sequence[Hit], radius: int
    ) -> dict[str, list[Hit]]:
        """Up to ``radius`` turns before and after each hit in its session, nearest first,
        walked on the same session links the window stage uses; archived turns left out."""
        cache = self._dense.rows(user_id)
        wanted = [int(h.id.removeprefix("ep_")) for h in hits if h.id.startswith("ep_")]
        rows = cache.rows_of(np.asarray(wanted, dtype=np.int64))
        chains: dict[int, list[int]] = {}
        for origin, row in zip(wanted, rows.tolist(), strict=True):
            chain: list[int] = []
            before = after = row
            for _ in range(radius if row >= 0 else 0):
                before = int(cache.prev[before]) if before >= 0 else -1
                after = int(cache.next[after]) if after >= 0 else -1
                chain += [int(cache.ids[r]) for r in (before, after) if r >= 0]
            chains[origin] = chain
        archived = (
            set() if self.lifecycle is None else self.lifecycle.view(user_id).archived_turns()
        )
        wanted_ids = {i for chain in chains.values() for i in chain} - archived
        episodes = self._store.episodes(sorted(wanted_ids))
        return {
            f"ep_{origin}": [
                hit_from_episode(episodes[i], 0.0, {"window_of": f"ep_{origin}"})
                for i in chain
                if i in episodes
            ]
            for origin, chain in chains.items()
        }


def _in_recall_order(recalls: dict[str, Recall]) -> dict[str, Recall]:
    """Fusion sums channel by channel: keep the order the channels always had (lexical
    first, then dense, then graph), so fused scores are bit-for-bit stable."""
    order = {"bm25": 0, "dense": 1, "graph": 2}
    return dict(sorted(recalls.items(), key=lambda item: order.get(item[0], len(order))))


def _timed(timings: dict[str, float], name: str, work: Any, *args: Any) -> Any:
    """Run ``work`` (after a checkpoint: ``courtesy.py``) and add its milliseconds to
    ``timings[name]``."""
    checkpoint()
    t0 = time.perf_counter()
    result = work(*args)
    timings[name] = round(timings.get(name, 0.0) + _ms(t0), 3)
    return result


def hit_from_episode(episode: StoredEpisode, score: float, explain: Explain) -> Hit:
    return Hit(
        id=f"ep_{episode.id}",
        kind=cast(HitKind, episode.kind),  # episodes are written as "turn" (write/worker.py)
        text=episode.body,
        score=score,
        timestamp=from_epoch(episode.occurred_at),
        source_ids=list(episode.source_ids),
        session_id=episode.session_id,
        speaker=episode.speaker,
        explain=explain,
    )


def _select(
    total: npt.NDArray[np.float64],
    cache: UserRows,
    limit: int,
    penalty: float,
    mmr_lambda: float | None = None,
) -> tuple[list[int], dict[int, float]]:
    """Top rows by score. When diversifying, each further pick from one session costs
    ``penalty * sqrt(picks so far)``; with ``mmr_lambda`` set, MMR also subtracts
    ``(1 - λ) * max cosine`` to what was already picked."""
    diversify = bool(penalty) or mmr_lambda is not None
    penalties: dict[int, float] = defaultdict(float)
    pool = top_positive(total, max(limit * 5, 50) if diversify else limit)
    if pool.size == 0:
        return [], penalties
    if not diversify:
        return [int(r) for r in pool[:limit]], penalties
    vectors = cache.row_vectors(pool) if mmr_lambda is not None else None
    closest = np.zeros(len(pool))
    taken: dict[int, int] = defaultdict(int)
    chosen: list[int] = []
    available = np.ones(len(pool), dtype=bool)
    sessions = cache.session[pool]
    while available.any() and len(chosen) < limit:
        cost = penalty * np.sqrt(np.array([taken[int(s)] for s in sessions]))
        if mmr_lambda is not None:
            cost = cost + (1.0 - mmr_lambda) * closest
        value = np.where(available, total[pool] * (mmr_lambda or 1.0) - cost, -np.inf)
        best = int(np.argmax(value))
        row = int(pool[best])
        penalties[row] = float(cost[best])
        chosen.append(row)
        available[best] = False
        taken[int(sessions[best])] += 1
        if vectors is not None:
            closest = np.maximum(closest, vectors @ vectors[best])
    return chosen, penalties


def _session_anchors(
    total: npt.NDArray[np.float64], cache: UserRows, chosen: list[int], count: int
) -> list[int]:
    """The best row of each of up to ``count`` sessions none of ``chosen`` is from, best
    first, among the ``ANCHOR_POOL`` best rows: where a context looks for evidence the
    question does not name (the other sessions of a user's story)."""
    if count <= 0 or not chosen:
        return []
    pool = top_positive(total, ANCHOR_POOL)
    sessions = cache.session[pool]
    _, first = np.unique(sessions, return_index=True)
    first.sort()
    taken = set(cache.session[np.asarray(chosen, dtype=np.int64)].tolist())
    found = [int(pool[at]) for at in first if int(sessions[at]) not in taken]
    return found[:count]


def _rank_map(recall: Recall, chosen: list[int]) -> dict[int, ChannelEntry]:
    """Rank, raw and calibrated score of the chosen rows in one channel (only those; a
    channel names a row at most once)."""
    found: dict[int, ChannelEntry] = {}
    if not chosen:
        return found
    wanted = np.asarray(chosen, dtype=np.int64)
    for at in np.flatnonzero(np.isin(recall.rows, wanted)).tolist():
        found[int(recall.rows[at])] = {
            "rank": at + 1,
            "score": round(float(recall.raw[at]), 6),
            "calibrated": round(float(recall.calibrated[at]), 6),
        }
    return found


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 3)
