"""Knowledge-base search: the memory pipeline's parts over the tenant's chunks.

decompose the question → route to collections → per part: BM25 (the same analyzer as
memories: MeCab-ko morphology, English stems) and dense (the same embedder and query-vector
cache), both restricted to the readable rows → calibrated weighted fusion → source-type
weight, FAQ boost, route factor → parts merged → hits labelled with injection flags.

Calibration follows the memory channels: BM25 against the query's own ceiling, cosine
against the embedder's fixed similarity range, never against the batch's min and max.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from madeleine.config import KBSettings
from madeleine.courtesy import checkpoint
from madeleine.embed.base import Vectors
from madeleine.kb.decompose import decompose
from madeleine.kb.index import KnowledgeIndex
from madeleine.kb.injection import injection_flags
from madeleine.kb.records import KBHit, Principal, epoch_to_datetime
from madeleine.read.explain import ChannelEntry, Explain
from madeleine.store.ports import KnowledgeRepository
from madeleine.text.analyzer import Analyzer

KB_CHANNELS = ("bm25", "dense")
_QUESTION = re.compile(
    r"[?？]\s*$|^\s*(how|what|when|where|who|why|which|can|do|does|is|are|may)\b"
    r"|(나요|까요|니까|인가요|있나요|되나요|뭐|무엇|어떻게|언제|어디)",
    re.IGNORECASE,
)
_OTHER_SOURCE = 0.9


@dataclass(frozen=True, slots=True)
class KBRequest:
    query: str
    principal: Principal | None
    collections: tuple[str, ...] | None
    limit: int
    moment: float  # as_of, else now
    channels: tuple[str, ...] = KB_CHANNELS
    decompose: bool = True


@dataclass(slots=True)
class _Part:
    text: str
    rows: npt.NDArray[np.int64]
    score: npt.NDArray[np.float64]
    bm25: npt.NDArray[np.float32] | None
    dense: npt.NDArray[np.float32] | None
    bm25_raw: npt.NDArray[np.float32] | None
    dense_raw: npt.NDArray[np.float32] | None
    lead: float | None = None  # set when the dense channel was skipped: BM25's decisive lead


class KnowledgeSearcher:
    def __init__(
        self,
        repository: KnowledgeRepository,
        analyzer: Analyzer,
        query_vector: Callable[[str], Future[Vectors]],
        dim: int,
        similarity_range: tuple[float, float],
        settings: KBSettings,
    ) -> None:
        self._repo = repository
        self._analyzer = analyzer
        self._query_vector = query_vector
        self._dim = dim
        self._low, self._high = similarity_range
        self._settings = settings
        self._index: KnowledgeIndex | None = None
        self._lock = threading.Lock()

    def index(self) -> KnowledgeIndex:
        """The in-memory index, rebuilt when the store's KB generation moved."""
        generation = self._repo.generation()
        with self._lock:
            if self._index is None or self._index.generation != generation:
                self._index = KnowledgeIndex(
                    self._repo.snapshot(self._dim), self._settings.bm25_k1, self._settings.bm25_b
                )
            return self._index

    def search(self, request: KBRequest) -> list[KBHit]:
        index = self.index()
        if index.size == 0:
            return []
        parts = decompose(request.query) if request.decompose else [request.query]
        texts = list(dict.fromkeys([request.query, *parts]))
        mask = index.readable(request.principal, request.moment, request.collections)
        if not mask.any():
            return []
        version_factor = self._version_factors(index, request.query)
        checkpoint()
        lexical = (
            [index.lexical.scores(self._analyzer.terms(t)) for t in texts]
            if "bm25" in request.channels
            else []
        )
        # lexical first: a part whose BM25 leader is beyond doubt skips the query embedding
        # (unless collections are to be routed, which needs the query's vector anyway)
        leads: list[float | None] = [None] * len(texts)
        if (
            "dense" in request.channels
            and lexical
            and self._settings.dense_margin > 0
            and not self._routes(index, mask)
        ):
            leads = [self._decisive_lead(index, mask, version_factor, *lex) for lex in lexical]
        vectors = [
            self._query_vector(t) if "dense" in request.channels and lead is None else None
            for t, lead in zip(texts, leads, strict=True)
        ]
        depth = max(100, request.limit * 5)
        found: list[_Part] = []
        route: dict[int, tuple[float, float]] = {}
        for position, text in enumerate(texts):
            checkpoint()
            pending = vectors[position]
            vector = None if pending is None else pending.result()[0]
            if position == 0 and vector is not None:
                route = self._route(index, mask, vector)
            part = self._recall(
                index,
                mask,
                text,
                lexical[position] if lexical else None,
                vector,
                depth,
                version_factor,
                route,
            )
            part.lead = leads[position]
            found.append(part)
        return self._hits(index, request, found, route, version_factor)

    # -- channels and fusion --------------------------------------------------------------------

    def _recall(
        self,
        index: KnowledgeIndex,
        mask: npt.NDArray[np.bool_],
        text: str,
        lexical: tuple[npt.NDArray[np.float32], float] | None,
        vector: npt.NDArray[np.float32] | None,
        depth: int,
        version_factor: npt.NDArray[np.float64],
        route: dict[int, tuple[float, float]],
    ) -> _Part:
        candidates: list[npt.NDArray[np.int64]] = []
        bm25_raw = dense_raw = None
        if lexical is not None:
            raw, _ = lexical
            bm25_raw = np.where(mask, raw, 0.0).astype(np.float32)
            candidates.append(_top(bm25_raw, depth, positive=True))
        if vector is not None:
            sims = index.snapshot.matrix @ vector
            usable = mask & index.snapshot.has_vector
            dense_raw = np.where(usable, sims, -np.inf).astype(np.float32)
            candidates.append(_top(dense_raw, depth, positive=False))
        rows = np.unique(np.concatenate(candidates)) if candidates else np.zeros(0, np.int64)
        weight = self._settings.dense_weight if lexical is not None and vector is not None else 1.0
        score = np.zeros(rows.size, dtype=np.float64)
        bm25 = dense_cal = None
        if lexical is not None and bm25_raw is not None:
            ceiling = lexical[1]
            bm25 = (bm25_raw[rows] / ceiling if ceiling > 0 else bm25_raw[rows] * 0).astype(
                np.float32
            )
            score += (1.0 - weight if vector is not None else 1.0) * bm25
        if vector is not None and dense_raw is not None:
            dense_cal = np.clip(
                (dense_raw[rows] - self._low) / (self._high - self._low), 0.0, 1.0
            ).astype(np.float32)
            score += weight * dense_cal
        factors = version_factor[index.snapshot.chunk_version[rows]]
        if route:
            collection = index.chunk_collection[rows]
            factors = factors * np.array([route.get(int(c), (0.0, 1.0))[1] for c in collection])
        return _Part(
            text,
            rows,
            score * factors,
            bm25,
            dense_cal,
            None if bm25_raw is None else bm25_raw,
            None if dense_raw is None else dense_raw,
        )

    def _decisive_lead(
        self,
        index: KnowledgeIndex,
        mask: npt.NDArray[np.bool_],
        version_factor: npt.NDArray[np.float64],
        raw: npt.NDArray[np.float32],
        ceiling: float,
    ) -> float | None:
        """BM25's lead of its best readable document over the next one, as a share of the
        query's ceiling, when it reaches ``dense_margin`` (else None: dense must weigh in).
        On KorQuAD a lead of 0.1 already left recall@1 unchanged without the embedding."""
        margin = self._settings.dense_margin
        if margin <= 0 or ceiling <= 0:
            return None
        snap = index.snapshot
        scores = np.where(mask, raw, 0.0) / ceiling * version_factor[snap.chunk_version]
        top = _top(scores.astype(np.float32), 16, positive=True)
        if top.size == 0:
            return None
        top = top[np.argsort(-scores[top], kind="stable")]
        documents = snap.version_doc[snap.chunk_version[top]]
        first = float(scores[top[0]])
        others = scores[top][documents != documents[0]]
        lead = first - (float(others[0]) if others.size else 0.0)
        return lead if lead >= margin else None

    def _version_factors(self, index: KnowledgeIndex, query: str) -> npt.NDArray[np.float64]:
        """Per version: its source type's weight, with the FAQ boost when the query asks."""
        weights = self._settings.source_weights
        other = weights.get("other", _OTHER_SOURCE)
        asks = _QUESTION.search(query) is not None
        boost = self._settings.faq_boost if asks else 1.0
        return np.array(
            [
                weights.get(s, other) * (boost if s == "faq" else 1.0)
                for s in index.snapshot.version_source
            ],
            dtype=np.float64,
        )

    def _routes(self, index: KnowledgeIndex, mask: npt.NDArray[np.bool_]) -> bool:
        """Whether collections are routed: more than one is readable and routing weighs."""
        return self._settings.route_weight > 0 and len(index.readable_collections(mask)) > 1

    def _route(
        self, index: KnowledgeIndex, mask: npt.NDArray[np.bool_], vector: npt.NDArray[np.float32]
    ) -> dict[int, tuple[float, float]]:
        """Collection → (affinity, factor): how well its profile (name, description, titles)
        fits the query. Only when the principal can read more than one collection; the best
        fitting keeps its scores, the others lose up to ``route_weight`` of theirs."""
        weight = self._settings.route_weight
        if not self._routes(index, mask):
            return {}
        readable = index.readable_collections(mask)
        affinity: dict[int, float] = {}
        for name in readable:
            profile = index.snapshot.collections.get(name, ("", None))[1]
            if profile is None:
                return {}  # profiles are still being embedded: no routing yet
            cosine = float(profile @ vector)
            affinity[index.collection_names.index(name)] = float(
                np.clip((cosine - self._low) / (self._high - self._low), 0.0, 1.0)
            )
        best = max(affinity.values())
        if best <= 0:
            return {}
        return {c: (a, 1.0 - weight + weight * a / best) for c, a in affinity.items()}

    # -- hits -----------------------------------------------------------------------------------

    def _hits(
        self,
        index: KnowledgeIndex,
        request: KBRequest,
        parts: list[_Part],
        route: dict[int, tuple[float, float]],
        version_factor: npt.NDArray[np.float64],
    ) -> list[KBHit]:
        best: dict[int, tuple[float, int, int]] = {}  # row -> (score, part, position in part)
        for p, part in enumerate(parts):
            for position, (row, score) in enumerate(zip(part.rows, part.score, strict=True)):
                if score > 0 and score > best.get(int(row), (0.0, 0, 0))[0]:
                    best[int(row)] = (float(score), p, position)
        ranked = sorted(best, key=lambda r: (-best[r][0], r))
        if len(parts) > 2:  # each part of a multi-part question gets its best chunk in front
            leaders = []
            for part in parts[1:]:
                if part.rows.size and part.score.max() > 0:
                    leaders.append(int(part.rows[int(np.argmax(part.score))]))
            leaders = list(dict.fromkeys(leaders))
            ranked = leaders + [r for r in ranked if r not in leaders]
        chosen = ranked[: request.limit]
        snap = index.snapshot
        texts = self._repo.chunks([int(snap.chunk_ids[r]) for r in chosen])
        hits: list[KBHit] = []
        for row in chosen:
            chunk_id = int(snap.chunk_ids[row])
            if chunk_id not in texts:
                continue  # deleted since the index was built
            text, prefix, section = texts[chunk_id]
            score, p, position = best[row]
            part = parts[p]
            version = int(snap.chunk_version[row])
            title = snap.version_title[version]
            explain = Explain(fused=round(score, 6), channels=_channels(part, position))
            if part.text != request.query:
                explain["subquery"] = part.text
            if part.lead is not None:
                explain["cascade"] = {"dense": "skipped", "bm25_lead": round(part.lead, 4)}
            source = snap.version_source[version]
            explain["source"] = {"type": source, "factor": round(float(version_factor[version]), 4)}
            collection = int(index.chunk_collection[row])
            if collection in route:
                affinity, factor = route[collection]
                explain["route"] = {
                    "collection": index.collection_names[collection],
                    "affinity": round(affinity, 4),
                    "factor": round(factor, 4),
                }
            explain["validity"] = {
                "version": int(snap.version_number[version]),
                "effective_from": _iso(snap.version_effective[version]),
                "expires_at": _iso(snap.version_expires[version]),
            }
            flags = injection_flags(text)
            if flags:
                explain["injection"] = flags
            hits.append(
                KBHit(
                    chunk_id=f"kb_{chunk_id}",
                    doc_id=snap.version_doc_id[version],
                    collection=snap.version_collection[version],
                    title=title,
                    section=_section_path(section, title),
                    text=text,
                    score=round(score, 6),
                    version=int(snap.version_number[version]),
                    source_type=source,
                    explain=explain,
                    prefix=prefix,
                )
            )
        return hits


def _top(scores: npt.NDArray[np.float32], depth: int, *, positive: bool) -> npt.NDArray[np.int64]:
    usable = scores > 0 if positive else np.isfinite(scores)
    count = min(depth, int(usable.sum()))
    if count <= 0:
        return np.zeros(0, dtype=np.int64)
    masked = np.where(usable, scores, -np.inf)
    if count >= masked.size:
        return np.flatnonzero(usable).astype(np.int64)
    return np.argpartition(-masked, count - 1)[:count].astype(np.int64)


def _channels(part: _Part, position: int) -> dict[str, ChannelEntry]:
    out: dict[str, ChannelEntry] = {}
    row = int(part.rows[position])
    for name, raw, calibrated in (
        ("bm25", part.bm25_raw, part.bm25),
        ("dense", part.dense_raw, part.dense),
    ):
        if raw is None or calibrated is None:
            continue
        value = float(raw[row])
        if not np.isfinite(value) or (name == "bm25" and value <= 0):
            continue
        out[name] = ChannelEntry(
            rank=int((raw > value).sum()) + 1,
            score=round(value, 6),
            calibrated=round(float(calibrated[position]), 6),
        )
    return out


def _section_path(section: Sequence[str], title: str) -> str:
    """The heading path below the document's title (a Markdown H1 usually repeats it)."""
    parts = list(section)
    while parts and parts[0].strip() == title.strip():
        parts.pop(0)
    return " > ".join(parts)


def _iso(epoch: float) -> str | None:
    moment = epoch_to_datetime(float(epoch))
    return None if moment is None else moment.isoformat()


def now() -> float:
    return time.time()


def validate_channels(channels: Sequence[str] | None) -> tuple[str, ...]:
    if channels is None:
        return KB_CHANNELS
    if isinstance(channels, str) or not isinstance(channels, Sequence):
        raise TypeError("channels must be a list of channel names, e.g. ['bm25']")
    chosen = tuple(dict.fromkeys(channels))
    unknown = [c for c in chosen if c not in KB_CHANNELS]
    if not chosen or unknown:
        raise ValueError(f"channels must name some of {list(KB_CHANNELS)}, got {list(channels)}")
    return chosen
