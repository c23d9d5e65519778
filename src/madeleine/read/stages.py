"""Score stages: each adjusts the fused scores for one reason and says so in ``explain``.

A stage returns an ``Effect`` (what it adds, multiplies or sets, and its explain entry per
hit) instead of editing scores itself, so the recipe alone decides the order and every
change is visible. The searcher runs a stage only when the query's switches allow it
(``Stages.allows``). A stage never lifts a passage whose score is 0: 0 means "not a
candidate" (no channel recalled it, or the time range filtered it out). ``early`` stages do
not read scores: they are computed while the query is embedded (their lookups overlap the
dense channel) and applied at their place in the recipe.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from madeleine.config import Settings
from madeleine.read.channels import Query
from madeleine.read.dense import UserRows
from madeleine.read.names import about_names
from madeleine.read.query import mentions_time
from madeleine.read.recipe import StageName
from madeleine.read.rerank import RerankChain
from madeleine.read.topk import top_positive
from madeleine.store.ports import EpisodeIndex
from madeleine.text.analyzer import Analyzer
from madeleine.text.temporal import TimeHint, parse_time_hint
from madeleine.text.timeparse import from_epoch

Scores = npt.NDArray[np.float64]
_DATED_POOL = 50  # leading candidates the dated stage looks at
_MAX_ENTITIES = 8  # query entities the entity stage looks up
_SIGNIFICANT = 1e-9
_PHATIC_POOL = 30  # leading candidates the phatic stage looks at


def _no_entry(row: int) -> Any:
    return None


@dataclass(slots=True)
class Effect:
    """What one stage does to the scores: ``add`` then ``scale`` arrays (one value per
    passage row), or ``assign`` values to some rows; ``entry(row)`` is its explain entry
    under ``key`` (None: nothing to say about that row)."""

    key: str
    add: Scores | None = None
    scale: Scores | None = None
    assign: tuple[npt.NDArray[np.int64], Scores] | None = None
    entry: Callable[[int], Any] = field(default=_no_entry)

    def apply(self, total: Scores) -> None:
        if self.add is not None:
            total += self.add
        if self.scale is not None:
            total *= self.scale
        if self.assign is not None:
            rows, values = self.assign
            total[rows] = values


@dataclass(slots=True)
class ScoreState:
    base: Scores  # the fused score
    total: Scores  # the running score, stages applied so far


class Stage(Protocol):
    name: StageName
    early: bool

    def effect(self, query: Query, scores: ScoreState | None) -> Effect | None: ...


def _gain_entry(gain: Scores) -> Callable[[int], Any]:
    def entry(row: int) -> Any:
        value = float(gain[row])
        return {"contribution": round(value, 6)} if value > _SIGNIFICANT else None

    return entry


class WindowStage:
    """A turn gains a share of its best neighbour's fused score, so an answer is found
    through the question it answered (a 3-turn window)."""

    name: StageName = "windows"
    early = False

    def __init__(self, weight: float) -> None:
        self._weight = weight

    def effect(self, query: Query, scores: ScoreState | None) -> Effect | None:
        if self._weight <= 0 or scores is None:
            return None
        gain = window_gain(query.rows, scores.base, self._weight)
        return Effect("window", add=gain, entry=_gain_entry(gain))


def window_gain(rows: UserRows, base: Scores, weight: float) -> Scores:
    """``weight`` × the larger fused score of a row's two session neighbours (0 for a
    missing neighbour). Only the neighbours of rows with a fused score can gain, so only
    they are computed: a few hundred rows instead of every row of a large user."""
    gain = np.zeros(base.size, dtype=np.float64)
    scored = np.flatnonzero(base)
    if scored.size == 0:
        return gain
    near = np.concatenate([rows.prev[scored], rows.next[scored]])
    near = np.unique(near[near >= 0])
    before, after = rows.prev[near], rows.next[near]
    previous = np.where(before >= 0, base[np.maximum(before, 0)], 0.0)
    following = np.where(after >= 0, base[np.maximum(after, 0)], 0.0)
    gain[near] = weight * np.maximum(previous, following)
    return gain


class SessionStage:
    """Turns of sessions whose digest (all analyzed terms of a session) matches the query
    gain the digest's calibrated BM25 score."""

    name: StageName = "sessions"
    early = True

    def __init__(self, store: EpisodeIndex, weight: float, reference: float) -> None:
        self._store = store
        self._weight = weight
        self._reference = reference

    def effect(self, query: Query, scores: ScoreState | None) -> Effect | None:
        analysis, rows = query.analysis, query.rows
        if self._weight <= 0 or not analysis.terms:
            return None
        found = self._store.session_search(query.request.user_id, analysis.terms, 100)
        per_session = np.zeros(len(rows.session_names), dtype=np.float64)
        info: dict[int, tuple[float, str]] = {}
        for session_id, raw, keywords in found:
            position = rows.session_index.get(session_id)
            if position is None:
                continue
            per_session[position] = raw / (raw + self._reference)
            info[position] = (raw, keywords)
        gain = self._weight * per_session[rows.session]

        def entry(row: int) -> Any:
            if gain[row] <= _SIGNIFICANT:
                return None
            raw, keywords = info[int(rows.session[row])]
            return {
                "bm25": round(raw, 4),
                "contribution": round(float(gain[row]), 6),
                "digest": keywords,
            }

        return Effect("session", add=gain, entry=entry)


class EntityStage:
    """Passages that mention the query's names and identifiers verbatim gain, by how
    specific the entity is to this user (an IDF over the user's passages): the user's own
    name, present everywhere, lifts nothing; an order id lifts its one turn."""

    name: StageName = "entities"
    early = True

    def __init__(
        self, store: EpisodeIndex, analyzer: Analyzer, weight: float, max_share: float
    ) -> None:
        self._store = store
        self._analyzer = analyzer
        self._weight = weight
        self._max_share = max_share

    def effect(self, query: Query, scores: ScoreState | None) -> Effect | None:
        analysis, rows = query.analysis, query.rows
        if self._weight <= 0 or not analysis.entities:
            return None
        size = rows.ids.size
        gain = np.zeros(size, dtype=np.float64)
        cap = max(3, int(size * self._max_share))
        entities = analysis.entities[:_MAX_ENTITIES]
        share = self._weight / len(entities)
        matched: dict[str, dict[str, float]] = {}
        for entity in entities:
            terms = self._analyzer.terms(entity)
            if not terms:
                continue
            ids = self._store.phrase_matches(query.request.user_id, terms, cap + 1)
            if not ids or len(ids) > cap:
                continue
            specificity = float(np.log((size + 1) / len(ids)) / np.log(size + 1))
            found = rows.rows_of(np.asarray(ids, dtype=np.int64))
            gain[found[found >= 0]] += share * specificity
            matched[entity] = {"passages": len(ids), "specificity": round(specificity, 4)}

        def entry(row: int) -> Any:
            if gain[row] <= _SIGNIFICANT:
                return None
            return {"contribution": round(float(gain[row]), 6), "matched": matched}

        return Effect("entities", add=gain, entry=entry)


class RangeStage:
    """A hard filter, not a preference: outside the asked time range (or after ``as_of``)
    a passage scores 0."""

    name: StageName = "range"
    early = True

    def effect(self, query: Query, scores: ScoreState | None) -> Effect | None:
        bounds = query.passage_range
        if bounds is None:
            return None
        times = query.rows.times
        inside = (times >= bounds[0]) & (times <= bounds[1])
        return Effect("range", scale=inside.astype(np.float64))


class DatedStage:
    """For "when" questions, the leading candidates whose text carries a date gain."""

    name: StageName = "dated"
    early = False

    def __init__(self, store: EpisodeIndex, weight: float) -> None:
        self._store = store
        self._weight = weight

    def effect(self, query: Query, scores: ScoreState | None) -> Effect | None:
        if scores is None or not query.analysis.asks_when or self._weight <= 0:
            return None
        total, rows = scores.total, query.rows
        gain = np.zeros_like(total)
        pool = top_positive(total, _DATED_POOL, ordered=False)
        if pool.size:
            episodes = query.episodes(self._store, [int(rows.ids[r]) for r in pool])
            for row in pool:
                episode = episodes.get(int(rows.ids[row]))
                if episode is not None and mentions_time(episode.body):
                    gain[row] = self._weight
        return Effect("dated", add=gain, entry=_gain_entry(gain))


class TimeStage:
    """Time expressions of the query ("last Tuesday", "3일 전", "before the wedding")
    resolved against ``now``: a soft preference, never a filter, so a wrong reading of the
    query costs little."""

    name: StageName = "time"
    early = False

    def __init__(self, store: EpisodeIndex, analyzer: Analyzer, settings: Settings) -> None:
        self._store = store
        self._analyzer = analyzer
        self._settings = settings

    def effect(self, query: Query, scores: ScoreState | None) -> Effect | None:
        request = query.request
        if scores is None:
            return None
        hint = parse_time_hint(request.query, from_epoch(request.now))
        if hint is None:
            return None
        gain = self._gain(hint, query, scores.total)
        details = hint.to_dict()
        return Effect(
            "time",
            add=gain,
            entry=lambda row: {**details, "contribution": round(float(gain[row]), 6)},
        )

    def _gain(self, hint: TimeHint, query: Query, total: Scores) -> Scores:
        settings, times = self._settings, query.rows.times
        candidates = total > 0
        if hint.recency:
            age_days = np.maximum(query.request.now - times, 0.0) / 86_400.0
            half_life = settings.stages.recency_half_life_days
            return np.where(
                candidates,
                settings.stages.recency_weight * np.power(0.5, age_days / half_life),
                0.0,
            )
        start, end = hint.start, hint.end
        if hint.anchor is not None:
            anchor_time = self._anchor_time(query.request.user_id, hint.anchor)
            if anchor_time is None:
                return np.zeros_like(total)
            start, end = (
                (None, anchor_time) if hint.anchor_direction == "before" else (anchor_time, None)
            )
        low = -np.inf if start is None else start.timestamp()
        high = np.inf if end is None else end.timestamp()
        inside = (times >= low) & (times <= high)
        return np.where(candidates & inside, settings.stages.time_weight, 0.0)

    def _anchor_time(self, user_id: str, phrase: str) -> datetime | None:
        """When the event a phrase names ("the wedding") happened, by the user's memories."""
        found = self._store.lexical_search(user_id, self._analyzer.terms(phrase), 1, None)
        if not found:
            return None
        episode = self._store.episodes([found[0][0]]).get(found[0][0])
        return None if episode is None else from_epoch(episode.occurred_at)


class DecayStage:
    """Exponential decay by age, per memory kind; pinned memories and kinds without a
    half-life keep their full score."""

    name: StageName = "decay"
    early = True

    def __init__(self, half_lives: dict[str, float]) -> None:
        self._half_lives = half_lives

    def effect(self, query: Query, scores: ScoreState | None) -> Effect | None:
        if not self._half_lives:
            return None
        rows = query.rows
        factor = np.ones(rows.ids.size, dtype=np.float64)
        age_days = np.maximum(query.request.now - rows.times, 0.0) / 86_400.0
        for kind, half_life in self._half_lives.items():
            affected = (rows.kinds == kind) & ~rows.pinned
            factor[affected] = np.power(0.5, age_days[affected] / half_life)
        return Effect(
            "decay", scale=factor, entry=lambda row: {"factor": round(float(factor[row]), 6)}
        )


# Words that carry no topic in a turn: greetings, thanks, assent, pleasantries (EN, KO).
_PHATIC_WORDS = (
    "hi hello hey hiya howdy yo greetings nice meet meeting met good great glad happy see seeing "
    "thanks thank thx welcome bye goodbye cheers morning afternoon evening night pleasure lot "
    "means mean much so very really too yes yeah yep ok okay sure cool awesome wow haha lol "
    "talk soon later take care same agree totally absolutely definitely indeed likewise "
    "name names called call go by im i'm "
    "안녕 안녕하세요 반갑 반가워요 반갑습니다 만나 만나서 감사 감사합니다 고마워 고마워요 "
    "네 예 응 좋아요 저 저는 나 제 이에요 예요 입니다 이름 이름은 라고 해요 합니다"
)


_PHATIC_KNOWN = 50_000  # episodes whose verdict is remembered, per process


class PhaticStage:
    """Names are not topics: a turn that only greets, thanks or names someone ("Nice to meet
    you, Alex!") reads close to any short question about Alex, and carries no answer. Among
    the leading candidates, such turns keep ``factor`` of their score, unless the query asks
    about names or greetings."""

    name: StageName = "phatic"
    early = False

    def __init__(self, store: EpisodeIndex, analyzer: Analyzer, factor: float) -> None:
        self._store = store
        self._analyzer = analyzer
        self._factor = factor
        self._phatic = frozenset(analyzer.terms(_PHATIC_WORDS)) | frozenset(_PHATIC_WORDS.split())
        # episode id -> phatic? (an episode's text never changes; ids are never reused)
        self._known: dict[int, bool] = {}

    def effect(self, query: Query, scores: ScoreState | None) -> Effect | None:
        if scores is None or self._factor >= 1.0:
            return None
        if about_names(query.request.query):
            return None
        total, rows = scores.total, query.rows
        pool = top_positive(total, _PHATIC_POOL, ordered=False)
        if pool.size == 0:
            return None
        known = self._known
        if len(known) > _PHATIC_KNOWN:
            known.clear()
        unknown = [i for i in (int(rows.ids[r]) for r in pool) if i not in known]
        episodes = query.episodes(self._store, unknown) if unknown else {}
        scale = np.ones_like(total)
        for row in pool.tolist():
            episode_id = int(rows.ids[row])
            phatic = known.get(episode_id)
            if phatic is None:
                episode = episodes.get(episode_id)
                if episode is None:
                    continue
                phatic = self.is_phatic(spoken_words(episode.body, episode.speaker))
                known[episode_id] = phatic
            if phatic:
                scale[row] = self._factor
        if (scale == 1.0).all():
            return None

        def entry(row: int) -> Any:
            return {"factor": self._factor} if scale[row] < 1.0 else None

        return Effect("phatic", scale=scale, entry=entry)

    def is_phatic(self, text: str) -> bool:
        """Nothing left once greetings, pleasantries and names are taken out."""
        names = {
            t for noun in self._analyzer.proper_nouns(text) for t in self._analyzer.terms(noun)
        }
        return not any(
            term not in self._phatic and term not in names for term in self._analyzer.terms(text)
        )


def spoken_words(body: str, speaker: str | None) -> str:
    """A turn's words without its "speaker: " label."""
    label = f"{speaker}: " if speaker else ""
    if label and body.startswith(label):
        return body[len(label) :]
    head, colon, rest = body.partition(": ")
    return rest if colon and len(head) <= 40 and "\n" not in head else body


class RerankStage:
    """The reranker's score is blended into the top candidates': they stay above everything
    outside the pool and are reordered inside it."""

    name: StageName = "rerank"
    early = False

    def __init__(
        self, store: EpisodeIndex, reranker: RerankChain, top_n: int, weight: float
    ) -> None:
        self._store = store
        self.reranker = reranker
        self._top_n = top_n
        self._weight = weight

    def effect(self, query: Query, scores: ScoreState | None) -> Effect | None:
        if scores is None:
            return None
        total, rows = scores.total, query.rows
        pool = top_positive(total, self._top_n)
        if pool.size == 0:
            return None
        episodes = query.episodes(self._store, [int(rows.ids[r]) for r in pool])
        kept = np.asarray([r for r in pool if int(rows.ids[r]) in episodes], dtype=np.int64)
        texts = [episodes[int(rows.ids[r])].body for r in kept]
        by, values = self.reranker.score(query.request.query, texts)
        reranked = np.asarray(values, dtype=np.float64)
        floor = float(total[pool].min())
        weight = self._weight
        blended = floor + (1 - weight) * (total[kept] - floor) + weight * reranked
        found = {int(row): float(value) for row, value in zip(kept, reranked, strict=True)}

        def entry(row: int) -> Any:
            value = found.get(row)
            return None if value is None else {"by": by, "score": round(value, 6)}

        return Effect("rerank", assign=(kept, blended), entry=entry)
