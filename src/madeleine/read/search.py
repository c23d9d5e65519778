"""The search pipeline: analyze the query, recall from each channel, fuse, hydrate hits."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from madeleine.embed.base import Embedder
from madeleine.read.dense import DenseIndex
from madeleine.read.fusion import ChannelHit, rrf
from madeleine.records import Hit
from madeleine.store.sqlite import SQLiteStore
from madeleine.text.analyzer import Analyzer
from madeleine.text.timeparse import from_epoch

CHANNELS = ("dense", "bm25")


@dataclass(frozen=True, slots=True)
class SearchRequest:
    query: str
    user_id: str
    limit: int
    channels: tuple[str, ...]
    time_range: tuple[float, float] | None


class Searcher:
    def __init__(
        self,
        store: SQLiteStore,
        dense: DenseIndex,
        embedder: Embedder,
        analyzer: Analyzer,
        *,
        rrf_k: int,
        channel_depth: int,
    ) -> None:
        self._store = store
        self._dense = dense
        self._embedder = embedder
        self._analyzer = analyzer
        self._rrf_k = rrf_k
        self._channel_depth = channel_depth

    def search(self, request: SearchRequest) -> list[Hit]:
        started = time.perf_counter()
        depth = max(self._channel_depth, request.limit)
        recalled: dict[str, Sequence[ChannelHit]] = {}
        timings: dict[str, float] = {}
        for channel in request.channels:
            t0 = time.perf_counter()
            recalled[channel] = self._recall(channel, request, depth)
            timings[channel] = round((time.perf_counter() - t0) * 1000, 3)
        fused = rrf(recalled, k=self._rrf_k)[: request.limit]
        episodes = self._store.episodes([f.item_id for f in fused])
        hits: list[Hit] = []
        for entry in fused:
            episode = episodes.get(entry.item_id)
            if episode is None:
                continue  # deleted between recall and hydration
            hits.append(
                Hit(
                    id=f"ep_{episode.id}",
                    kind=episode.kind,
                    text=episode.body,
                    score=entry.score,
                    timestamp=from_epoch(episode.occurred_at),
                    source_ids=list(episode.source_ids),
                    session_id=episode.session_id,
                    speaker=episode.speaker,
                    explain={
                        "fusion": "rrf",
                        "rrf_k": self._rrf_k,
                        "fused": round(entry.score, 6),
                        "channels": entry.channels,
                        "channel_ms": timings,
                        "total_ms": round((time.perf_counter() - started) * 1000, 3),
                    },
                )
            )
        return hits

    def _recall(self, channel: str, request: SearchRequest, depth: int) -> list[ChannelHit]:
        if channel == "bm25":
            terms = self._analyzer.terms(request.query)
            rows = self._store.lexical_search(request.user_id, terms, depth, request.time_range)
            return [ChannelHit(item_id, score) for item_id, score in rows]
        if channel == "dense":
            vector = self._embedder.embed_queries([request.query])[0]
            return self._dense.search(request.user_id, vector, depth, request.time_range)
        raise ValueError(f"unknown channel {channel!r}; choose from {list(CHANNELS)}")
