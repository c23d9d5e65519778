"""The search pipeline: analyze → recall per channel → fuse → windows → sessions → diversify.

Every stage can be switched per query (``stages=``) and leaves its trace in ``hit.explain``.
Scores are calibrated against fixed references, so a hit's score means the same thing in
every query (no batch min-max).
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from madeleine.config import Settings
from madeleine.embed.base import Embedder, Vectors
from madeleine.read.dense import DenseIndex, UserRows
from madeleine.read.facts import FactIndex, FactLexical, FactQuery
from madeleine.read.graph import GraphIndex, GraphRecall
from madeleine.read.query import QueryAnalysis, analyze_query, mentions_time
from madeleine.read.rerank import build_chain
from madeleine.records import Hit
from madeleine.store.base import StoredEpisode
from madeleine.store.facts import FactStore
from madeleine.store.graph import GraphStore
from madeleine.store.sqlite import SQLiteStore
from madeleine.text.analyzer import Analyzer
from madeleine.text.temporal import TimeHint, parse_time_hint
from madeleine.text.timeparse import from_epoch

CHANNELS = ("dense", "bm25", "graph", "facts")
_PASSAGE_CHANNELS = ("dense", "bm25", "graph")
_DATED_POOL = 50
FUSIONS = ("weighted", "rrf")
STAGE_NAMES = (
    "fusion",
    "windows",
    "sessions",
    "entities",
    "dated",
    "time",
    "decay",
    "rerank",
    "diversify",
)
_BOOL_STAGES = ("windows", "sessions", "entities", "dated", "time", "decay", "rerank")
_MAX_ENTITIES = 8


@dataclass(frozen=True, slots=True)
class Stages:
    """Per-query switches; the defaults come from ``Settings``."""

    fusion: str = "weighted"
    windows: bool = True
    sessions: bool = True
    entities: bool = True
    dated: bool = True
    time: bool = True
    decay: bool = True
    rerank: bool = False
    diversify: bool | None = None  # None: decided by query analysis (broad questions)

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
        return replace(
            defaults,
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


@dataclass(slots=True)
class _Recall:
    """One channel's candidates: rows best first and raw scores."""

    rows: npt.NDArray[np.int64]
    raw: npt.NDArray[np.float32]
    calibrated: npt.NDArray[np.float32]


class Searcher:
    def __init__(
        self,
        store: SQLiteStore,
        dense: DenseIndex,
        embedder: Embedder,
        analyzer: Analyzer,
        settings: Settings,
        facts: FactStore | None = None,
        graph: GraphStore | None = None,
    ) -> None:
        self._store = store
        self._graph = (
            None if graph is None else GraphIndex(graph, settings, embedder.similarity_range, facts)
        )
        self._fact_store = facts
        self._facts = (
            None if facts is None else FactIndex(facts, settings, embedder.similarity_range)
        )
        self._dense = dense
        self._embedder = embedder
        self._analyzer = analyzer
        self._settings = settings
        self.default_stages = Stages(
            fusion=settings.fusion.method,
            windows=settings.stages.window_weight > 0,
            sessions=settings.stages.session_weight > 0,
            entities=settings.stages.entity_weight > 0,
            rerank=settings.rerank.enabled,
        )
        self._embedding_pool = ThreadPoolExecutor(1, thread_name_prefix="madeleine-query-embed")
        self.reranker = build_chain(
            embedder,
            settings.rerank.model_path,
            settings.rerank.url,
            settings.rerank.model,
            settings.rerank.api_key,
        )

    def search(self, request: SearchRequest) -> list[Hit]:
        started = time.perf_counter()
        # The query is embedded on a worker thread (the model releases the GIL) while the
        # lexical channels, session digests and entity lookups run here: the dense channel's
        # cost hides the others'.
        passage_channels = tuple(c for c in request.channels if c in _PASSAGE_CHANNELS)
        wants_facts = "facts" in request.channels and self._facts is not None
        vector: Future[Vectors] | None = None
        if (
            "dense" in request.channels
            or "graph" in request.channels
            or (wants_facts and not passage_channels)
        ):
            vector = self._embedding_pool.submit(self._embedder.embed_queries, [request.query])
        analysis = analyze_query(request.query, self._analyzer)
        cache = self._dense.rows(request.user_id)
        fact_lexical = None
        if wants_facts:
            assert self._facts is not None
            both = not passage_channels  # "facts" alone: scored by meaning and by words
            fact_lexical = self._facts.lexical(
                request.user_id, analysis.terms, both or "bm25" in passage_channels
            )
        hits: list[Hit] = []
        graph: GraphRecall | None = None
        if cache.ids.size and passage_channels:
            hits, graph = self._passage_hits(request, analysis, cache, vector, started)
        if fact_lexical is not None:
            query_vector = None if vector is None else vector.result()[0]
            hits = self._with_facts(
                hits, request, analysis, query_vector, passage_channels, fact_lexical, graph
            )
        elif vector is not None:
            vector.cancel()
        return hits

    def _passage_hits(
        self,
        request: SearchRequest,
        analysis: QueryAnalysis,
        cache: UserRows,
        vector: Future[Vectors] | None,
        started: float,
    ) -> tuple[list[Hit], GraphRecall | None]:
        """The ranked passages, and the graph walk (its fact scores join the facts')."""
        settings = self._settings
        stages = request.stages
        time_range = _episode_range(request)
        early_graph: Future[GraphRecall] | None = None
        if (
            self._graph is not None
            and "graph" in request.channels
            and not (settings.graph.passage_seeds and "dense" in request.channels)
        ):
            # the walk runs on the embedding thread once the query vector is there, while
            # this thread runs BM25, the digests and the entity lookups (SQLite frees the GIL)
            early_graph = self._embedding_pool.submit(
                self._graph_recall, request, analysis, cache, vector
            )
        size = cache.ids.size
        depth = max(settings.fusion.channel_depth, request.limit)
        timings: dict[str, float] = {}
        recalls: dict[str, _Recall] = {}
        for channel in request.channels:
            if channel in ("dense", "graph", "facts"):
                continue  # dense and graph use the vector being computed; they join below
            t0 = time.perf_counter()
            recalls[channel] = self._lexical_recall(channel, cache, request, analysis, depth)
            timings[channel] = _ms(t0)
        t0 = time.perf_counter()
        session_gain = np.zeros(size, dtype=np.float64)
        session_info: dict[int, tuple[float, str]] = {}
        if stages.sessions and settings.stages.session_weight > 0 and analysis.terms:
            session_gain, session_info = self._session_gain(request.user_id, analysis, cache)
        entity_gain = np.zeros(size, dtype=np.float64)
        entity_info: dict[str, dict[str, float]] = {}
        if stages.entities and settings.stages.entity_weight > 0 and analysis.entities:
            entity_gain, entity_info = self._entity_gain(request.user_id, analysis, cache)
        timings["sessions+entities"] = _ms(t0)
        if vector is not None and "dense" in request.channels:
            t0 = time.perf_counter()
            recalls["dense"] = self._dense_recall(cache, request, depth, vector.result()[0])
            timings["dense"] = _ms(t0)  # what remained of embedding + the vector search
        graph: GraphRecall | None = None
        if self._graph is not None and "graph" in request.channels:
            t0 = time.perf_counter()
            seeded = settings.graph.passage_seeds
            dense = recalls.get("dense")
            if early_graph is not None:
                graph = early_graph.result()
            else:  # seeded by the dense hits: it has to wait for them
                graph = self._graph_recall(
                    request,
                    analysis,
                    cache,
                    vector,
                    None
                    if dense is None or not seeded
                    else (dense.rows[:seeded], dense.calibrated[:seeded]),
                )
            recalls["graph"] = _Recall(graph.rows, graph.raw, graph.calibrated)
            timings["graph"] = _ms(t0)  # what remained of the walk when the text channels ended

        t0 = time.perf_counter()
        base = self._fuse(recalls, size, stages.fusion)
        total = base.copy()
        window_gain = np.zeros_like(base)
        if stages.windows and settings.stages.window_weight > 0:
            window_gain = settings.stages.window_weight * _neighbour_best(base, cache)
            total += window_gain
        total += session_gain
        total += entity_gain
        if time_range is not None:
            outside = (cache.times < time_range[0]) | (cache.times > time_range[1])
            total[outside] = 0.0
        dated_gain: dict[int, float] = {}
        if analysis.asks_when and stages.dated and settings.stages.dated_weight > 0:
            dated_gain = self._dated_gain(total, cache)
            for row, gain in dated_gain.items():
                total[row] += gain
        time_gain = np.zeros_like(base)
        hint = parse_time_hint(request.query, from_epoch(request.now)) if stages.time else None
        if hint is not None:
            time_gain = self._time_gain(hint, request, cache, total)
            total += time_gain
        decay_factor: npt.NDArray[np.float64] | None = None
        if stages.decay and settings.stages.half_life_days:
            decay_factor = _decay(cache, request.now, settings.stages.half_life_days)
            total *= decay_factor
        reranked: dict[int, tuple[str, float]] = {}
        if stages.rerank:
            reranked = self._rerank(request.query, total, cache)
        diversify = analysis.broad if stages.diversify is None else stages.diversify
        chosen, penalties = _select(
            total,
            cache,
            request.limit,
            settings.stages.diversity_penalty if diversify else 0.0,
            settings.stages.mmr_lambda if diversify else None,
        )
        timings["fusion"] = _ms(t0)

        episodes = self._store.episodes([int(cache.ids[r]) for r in chosen])
        ranks = {
            name: _rank_map(recall, chosen, cache.ids.size) for name, recall in recalls.items()
        }
        hits: list[Hit] = []
        for row in chosen:
            episode = episodes.get(int(cache.ids[row]))
            if episode is None:
                continue  # deleted between recall and hydration
            score = float(total[row] - penalties[row])
            explain: dict[str, Any] = {
                "fusion": stages.fusion,
                "channels": {name: ranks[name][row] for name in recalls if row in ranks[name]},
                "base": round(float(base[row]), 6),
                "fused": round(score, 6),
                "query": analysis.to_dict(),
                "ms": {**timings, "total": _ms(started)},
            }
            path = None if graph is None else graph.path(row)
            if graph is not None and path is not None:
                explain["graph"] = {"seeds": graph.seeds, "path": path}
            if window_gain[row] > 1e-9:
                explain["window"] = {"contribution": round(float(window_gain[row]), 6)}
            if session_gain[row] > 1e-9:
                raw, keywords = session_info[int(cache.session[row])]
                explain["session"] = {
                    "bm25": round(raw, 4),
                    "contribution": round(float(session_gain[row]), 6),
                    "digest": keywords,
                }
            if entity_gain[row] > 1e-9:
                explain["entities"] = {
                    "contribution": round(float(entity_gain[row]), 6),
                    "matched": entity_info,
                }
            if hint is not None:
                explain["time"] = {
                    **hint.to_dict(),
                    "contribution": round(float(time_gain[row]), 6),
                }
            if decay_factor is not None:
                explain["decay"] = {"factor": round(float(decay_factor[row]), 6)}
            if row in reranked:
                by, value = reranked[row]
                explain["rerank"] = {"by": by, "score": round(value, 6)}
            if row in dated_gain:
                explain["dated"] = {"contribution": round(dated_gain[row], 6)}
            if penalties[row] > 1e-9:
                explain["diversity_penalty"] = round(float(penalties[row]), 6)
            hits.append(hit_from_episode(episode, score, explain))
        return hits, graph

    def close(self) -> None:
        self._embedding_pool.shutdown(wait=True, cancel_futures=True)

    def _graph_recall(
        self,
        request: SearchRequest,
        analysis: QueryAnalysis,
        cache: UserRows,
        vector: Future[Vectors] | None,
        passage_seeds: tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]] | None = None,
    ) -> GraphRecall:
        assert self._graph is not None
        return self._graph.recall(
            request.user_id,
            cache,
            request.query,
            analysis.entities,
            None if vector is None else vector.result()[0],
            self._embedder.dim,
            passage_seeds,
        )

    def graph_footprint(self, user_id: str) -> dict[str, int]:
        return {} if self._graph is None else self._graph.footprint(user_id)

    def graph_view(self, user_id: str, around: str, depth: int, limit: int) -> dict[str, Any]:
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

    def _with_facts(
        self,
        hits: list[Hit],
        request: SearchRequest,
        analysis: QueryAnalysis,
        vector: npt.NDArray[np.float32] | None,
        passage_channels: tuple[str, ...],
        lexical: FactLexical,
        graph: GraphRecall | None = None,
    ) -> list[Hit]:
        """Merge the facts that bear on the query into the passage hits, by score; only the
        facts that make the cut are read from the store."""
        assert self._facts is not None and self._fact_store is not None
        t0 = time.perf_counter()
        both = not passage_channels
        scored = self._facts.search(
            FactQuery(
                user_id=request.user_id,
                terms=analysis.terms,
                vector=vector if (both or "dense" in passage_channels) else None,
                lexical=both or "bm25" in passage_channels,
                fusion=request.stages.fusion,
                as_of=request.as_of,
                include_history=request.include_history,
                time_range=request.time_range,
                now=request.now,
                decay=request.stages.decay,
                limit=request.limit,
                graph=None if graph is None else graph.facts,
            ),
            lexical,
        )
        cut = min(h.score for h in hits) if len(hits) >= request.limit else float("-inf")
        scored = [found for found in scored if found.score > cut]
        if not scored:
            return hits
        stored = self._fact_store.get_many([f.number for f in scored])
        refs = self._store.event_refs(sorted({e for f in stored.values() for e in f.card.sources}))
        elapsed = _ms(t0)
        fact_hits: list[Hit] = []
        for found in scored:
            fact = stored.get(found.number)
            if fact is None:
                continue  # deleted between scoring and hydration
            card = fact.card
            sources = [refs[e] for e in card.sources if e in refs]
            explain = {
                **found.explain,
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
                    kind="fact",
                    text=card.statement,
                    score=found.score,
                    timestamp=card.valid_from or card.recorded_at,
                    source_ids=[source for source, _ in sources],
                    session_id=sources[0][1] if sources else "",
                    speaker=None,
                    explain=explain,
                )
            )
        merged = sorted([*hits, *fact_hits], key=lambda h: -h.score)
        return merged[: request.limit]

    def neighbour_hits(
        self, user_id: str, hits: Sequence[Hit], radius: int
    ) -> dict[str, list[Hit]]:
        """Up to ``radius`` turns before and after each hit in its session, nearest first,
        walked on the same session links the window stage uses."""
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
        episodes = self._store.episodes(sorted({i for chain in chains.values() for i in chain}))
        return {
            f"ep_{origin}": [
                hit_from_episode(episodes[i], 0.0, {"window_of": f"ep_{origin}"})
                for i in chain
                if i in episodes
            ]
            for origin, chain in chains.items()
        }

    def _dense_recall(
        self,
        cache: UserRows,
        request: SearchRequest,
        depth: int,
        vector: npt.NDArray[np.float32],
    ) -> _Recall:
        low, high = self._embedder.similarity_range
        rows, sims = self._dense.scores(
            cache, request.user_id, vector, depth, _episode_range(request), floor=low
        )
        calibrated = np.clip((sims - low) / (high - low), 0.0, 1.0).astype(np.float32)
        return _Recall(rows, sims, calibrated)

    def _lexical_recall(
        self,
        channel: str,
        cache: UserRows,
        request: SearchRequest,
        analysis: QueryAnalysis,
        depth: int,
    ) -> _Recall:
        if channel == "bm25":
            found = self._store.lexical_search(
                request.user_id, analysis.terms, depth, _episode_range(request)
            )
            ids = np.fromiter((i for i, _ in found), dtype=np.int64, count=len(found))
            raw = np.fromiter((s for _, s in found), dtype=np.float32, count=len(found))
            rows = cache.rows_of(ids)
            keep = rows >= 0  # indexed after the cache was read: picked up next query
            reference = self._settings.fusion.bm25_reference
            calibrated = (raw / (raw + reference)).astype(np.float32)
            return _Recall(rows[keep], raw[keep], calibrated[keep])
        raise ValueError(f"unknown channel {channel!r}; choose from {list(CHANNELS)}")

    def _fuse(self, recalls: dict[str, _Recall], size: int, fusion: str) -> npt.NDArray[np.float64]:
        scores = np.zeros(size, dtype=np.float64)
        if not recalls:
            return scores
        if fusion == "rrf":
            k = self._settings.fusion.rrf_k
            text = {name: r for name, r in recalls.items() if name != "graph"}
            for recall in text.values():
                ranks = np.arange(1, recall.rows.size + 1, dtype=np.float64)
                np.add.at(scores, recall.rows, 1.0 / (k + ranks))
            # divide by the best possible score so that stage weights mean the same in both modes
            if text:
                scores /= len(text) / (k + 1)
            if "graph" in recalls:  # as in weighted mode: added, not ranked with the others
                graph = recalls["graph"]
                np.add.at(scores, graph.rows, self._settings.graph.weight * graph.calibrated)
            return scores
        settings = self._settings
        weights = {
            "dense": settings.fusion.dense_weight,
            "bm25": 1.0 - settings.fusion.dense_weight,
        }
        # the graph channel adds to the text channels' mix rather than diluting it; with
        # graph_beta set it is blended into the dense channel instead: β·ppr + (1−β)·knn
        norm = sum(weights[name] for name in recalls if name in weights) or 1.0
        blend = settings.graph.beta is not None and "dense" in recalls and "graph" in recalls
        for name, recall in recalls.items():
            if name == "graph":
                if not blend:
                    np.add.at(scores, recall.rows, settings.graph.weight * recall.calibrated)
                continue
            if name == "dense" and blend:
                assert settings.graph.beta is not None
                beta = settings.graph.beta
                mixed = np.zeros(size, dtype=np.float64)
                np.add.at(mixed, recall.rows, (1.0 - beta) * recall.calibrated)
                graph = recalls["graph"]
                np.add.at(mixed, graph.rows, beta * graph.calibrated)
                scores += weights["dense"] / norm * mixed
                continue
            np.add.at(scores, recall.rows, weights[name] / norm * recall.calibrated)
        return scores

    def _rerank(
        self, query: str, total: npt.NDArray[np.float64], cache: UserRows
    ) -> dict[int, tuple[str, float]]:
        """Blend the reranker's score into the top candidates' scores (in place)."""
        pool_size = min(int((total > 0).sum()), self._settings.rerank.top_n)
        if pool_size <= 0:
            return {}
        pool = np.argpartition(-total, pool_size - 1)[:pool_size]
        pool = pool[np.argsort(-total[pool], kind="stable")]
        episodes = self._store.episodes([int(cache.ids[r]) for r in pool])
        rows = [int(r) for r in pool if int(cache.ids[r]) in episodes]
        texts = [episodes[int(cache.ids[r])].body for r in rows]
        by, scores = self.reranker.score(query, texts)
        weight = self._settings.rerank.weight
        floor = float(total[pool].min())
        for row, value in zip(rows, scores, strict=True):
            # stays above everything outside the pool, reordered inside it
            total[row] = floor + (1 - weight) * (total[row] - floor) + weight * float(value)
        return {row: (by, float(value)) for row, value in zip(rows, scores, strict=True)}

    def _time_gain(
        self,
        hint: TimeHint,
        request: SearchRequest,
        cache: UserRows,
        total: npt.NDArray[np.float64],
    ) -> npt.NDArray[np.float64]:
        """A soft preference, never a filter: a wrong reading of the query costs little."""
        candidates = total > 0
        if hint.recency:
            age_days = np.maximum(request.now - cache.times, 0.0) / 86_400.0
            half_life = self._settings.stages.recency_half_life_days
            return np.where(
                candidates,
                self._settings.stages.recency_weight * np.power(0.5, age_days / half_life),
                0.0,
            )
        start, end = hint.start, hint.end
        if hint.anchor is not None:
            anchor_time = self._anchor_time(request.user_id, hint.anchor)
            if anchor_time is None:
                return np.zeros_like(total)
            start, end = (
                (None, anchor_time) if hint.anchor_direction == "before" else (anchor_time, None)
            )
        low = -np.inf if start is None else start.timestamp()
        high = np.inf if end is None else end.timestamp()
        inside = (cache.times >= low) & (cache.times <= high)
        return np.where(candidates & inside, self._settings.stages.time_weight, 0.0)

    def _entity_gain(
        self, user_id: str, analysis: QueryAnalysis, cache: UserRows
    ) -> tuple[npt.NDArray[np.float64], dict[str, dict[str, float]]]:
        """Lift passages that mention the query's names and identifiers verbatim.

        An entity counts by how specific it is to this user (an IDF over the user's passages):
        the user's own name, present everywhere, lifts nothing; an order id lifts its one turn.
        """
        gain = np.zeros(cache.ids.size, dtype=np.float64)
        size = cache.ids.size
        cap = max(3, int(size * self._settings.stages.entity_max_share))
        entities = analysis.entities[:_MAX_ENTITIES]
        share = self._settings.stages.entity_weight / len(entities)
        info: dict[str, dict[str, float]] = {}
        for entity in entities:
            terms = self._analyzer.terms(entity)
            if not terms:
                continue
            ids = self._store.phrase_matches(user_id, terms, cap + 1)
            if not ids or len(ids) > cap:
                continue
            specificity = float(np.log((size + 1) / len(ids)) / np.log(size + 1))
            rows = cache.rows_of(np.asarray(ids, dtype=np.int64))
            gain[rows[rows >= 0]] += share * specificity
            info[entity] = {"passages": len(ids), "specificity": round(specificity, 4)}
        return gain, info

    def _anchor_time(self, user_id: str, phrase: str) -> datetime | None:
        """When the event a phrase names ("the wedding") happened, by the user's own memories."""
        found = self._store.lexical_search(user_id, self._analyzer.terms(phrase), 1, None)
        if not found:
            return None
        episode = self._store.episodes([found[0][0]]).get(found[0][0])
        return None if episode is None else from_epoch(episode.occurred_at)

    def _dated_gain(self, total: npt.NDArray[np.float64], cache: UserRows) -> dict[int, float]:
        """For "when" questions: lift the leading candidates whose text carries a date."""
        pool_size = min(int((total > 0).sum()), _DATED_POOL)
        if pool_size <= 0:
            return {}
        pool = np.argpartition(-total, pool_size - 1)[:pool_size]
        episodes = self._store.episodes([int(cache.ids[r]) for r in pool])
        weight = self._settings.stages.dated_weight
        return {
            int(row): weight
            for row in pool
            if (episode := episodes.get(int(cache.ids[row]))) is not None
            and mentions_time(episode.body)
        }

    def _session_gain(
        self, user_id: str, analysis: QueryAnalysis, cache: UserRows
    ) -> tuple[npt.NDArray[np.float64], dict[int, tuple[float, str]]]:
        found = self._store.session_search(user_id, analysis.terms, 100)
        index = cache.session_index
        per_session = np.zeros(len(cache.session_names), dtype=np.float64)
        info: dict[int, tuple[float, str]] = {}
        reference = self._settings.stages.session_reference
        for session_id, raw, keywords in found:
            position = index.get(session_id)
            if position is None:
                continue
            per_session[position] = raw / (raw + reference)
            info[position] = (raw, keywords)
        return self._settings.stages.session_weight * per_session[cache.session], info


def hit_from_episode(episode: StoredEpisode, score: float, explain: dict[str, Any]) -> Hit:
    return Hit(
        id=f"ep_{episode.id}",
        kind=episode.kind,
        text=episode.body,
        score=score,
        timestamp=from_epoch(episode.occurred_at),
        source_ids=list(episode.source_ids),
        session_id=episode.session_id,
        speaker=episode.speaker,
        explain=explain,
    )


def _episode_range(request: SearchRequest) -> tuple[float, float] | None:
    """The time range passages must fall in: the query's, ended at ``as_of`` when given
    (what had been said by then)."""
    if request.as_of is None:
        return request.time_range
    start, end = request.time_range or (float("-inf"), float("inf"))
    return start, min(end, request.as_of)


def _decay(cache: UserRows, now: float, half_lives: dict[str, float]) -> npt.NDArray[np.float64]:
    """Exponential decay by age, per memory kind; pinned memories and kinds without a
    half-life keep their full score."""
    factor = np.ones(cache.ids.size, dtype=np.float64)
    age_days = np.maximum(now - cache.times, 0.0) / 86_400.0
    for kind, half_life in half_lives.items():
        affected = (cache.kinds == kind) & ~cache.pinned
        factor[affected] = np.power(0.5, age_days[affected] / half_life)
    return factor


def _neighbour_best(base: npt.NDArray[np.float64], cache: UserRows) -> npt.NDArray[np.float64]:
    """The better of the previous and next turn's score: a 3-turn window around each turn."""
    previous = np.where(cache.prev >= 0, base[np.maximum(cache.prev, 0)], 0.0)
    following = np.where(cache.next >= 0, base[np.maximum(cache.next, 0)], 0.0)
    return np.maximum(previous, following)


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
    positive = int((total > 0).sum())
    diversify = bool(penalty) or mmr_lambda is not None
    pool_size = min(positive, max(limit * 5, 50) if diversify else limit)
    penalties: dict[int, float] = defaultdict(float)
    if pool_size <= 0:
        return [], penalties
    pool = np.argpartition(-total, pool_size - 1)[:pool_size]
    pool = pool[np.argsort(-total[pool], kind="stable")]
    if not diversify:
        return [int(r) for r in pool[:limit]], penalties
    vectors = cache.matrix[pool] if mmr_lambda is not None else None
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


def _rank_map(recall: _Recall, chosen: list[int], size: int) -> dict[int, dict[str, float]]:
    """Rank, raw and calibrated score of the chosen rows in one channel (only those)."""
    position = np.full(size, -1, dtype=np.int64)
    position[recall.rows] = np.arange(recall.rows.size)
    found: dict[int, dict[str, float]] = {}
    for row in chosen:
        at = int(position[row])
        if at >= 0:
            found[row] = {
                "rank": at + 1,
                "score": round(float(recall.raw[at]), 6),
                "calibrated": round(float(recall.calibrated[at]), 6),
            }
    return found


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 3)
