"""Current truth first: a turn whose fact was superseded yields to what superseded it.

"I live in Seattle" and, months later, "we moved to Portland" are both relevant to "where do
I live?", and the older turn often reads closer to the question. The fact cards know which
one holds now; this stage carries that knowledge back to the turns. For each leading
candidate it finds the facts said in that turn and takes the one closest to the query (its
*topic*: a turn about a home and a drink is about the home when the query is). When the topic
fact was superseded by the query's moment (now, or ``as_of``), the turn is *stale*: the turns
that said the current version are lifted just above it, the current fact is handed to the
facts channel with the same floor, and the stale turn is demoted below both. Each change is
explained (``explain["superseded"]``, ``explain["current"]``), and the context marks the stale
turn as outdated instead of presenting it as true.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from madeleine.facts import slots
from madeleine.facts.rules.disclosure import OPEN_PREFIX
from madeleine.facts.topics import own_slot_words, topic_text
from madeleine.read.channels import Query
from madeleine.read.facts import TRUTH_KEY, CurrentFact, FactIndex
from madeleine.read.recipe import StageName
from madeleine.read.stages import Effect, ScoreState
from madeleine.read.topk import top_positive
from madeleine.sorted_ids import positions
from madeleine.store.ports import EpisodeIndex, FactRepository
from madeleine.store.records import FactVectors
from madeleine.text.analyzer import Analyzer
from madeleine.text.timeparse import from_epoch

_POOL = 30  # leading candidates whose facts are looked at
_STEP = 1e-4  # the gap kept between a lifted successor and what it replaces
_LEADERS = 5  # leading turns whose fact about the query's slot ranks beside them
_NEWER_AMONG = 10  # leading turns reordered by time when no fact knows the change
_NEWER_CLOSE = 0.6  # ... if within this share of the best score
_NEWER_GAP = 86_400.0  # ... and said at least a day apart, in different sessions
# a question about the past: "what did I…", "where was…", "before", "지난", "했었"
_PAST = re.compile(
    r"\b(?:did|was|were|had|used\s+to|ago|before|previously|originally|at\s+first|first"
    r"|last\s+(?:year|month|week|time)|back\s+(?:then|in))\b|었|았|였|지난|예전|처음",
    re.IGNORECASE,
)
# "what was it again?": asks for what holds, in the past tense ("뭐였지?", "어디였더라?")
_RECALL = re.compile(
    r"(?:뭐|무엇|어디|누구|언제|몇\s*\S*?)\s*(?:였|이었)(?:지|더라|죠)|\bwhat\s+was\s+(?:it|that)\s+again\b",
    re.IGNORECASE,
)
# words that announce a change: a later turn without them does not overrule an earlier one
_CHANGE = re.compile(
    r"\b(?:now|anymore|any\s+more|no\s+longer|instead|actually|correction|changed?|switched"
    r"|moved|moving|new|updated?|rescheduled|postponed|pushed|cancell?ed|called\s+off|quit"
    r"|dropped|left|joined|replaced|sold|became|turns\s+out|not\s+\w+\s+after\s+all"
    r"|bought|picked\s+up|started|ported|lately|these\s+days|from\s+now\s+on|took\s+a\s+job"
    r"|(?:the|my)\s+new)\b"
    r"|이제|대신|바꿨|바뀌|바꾸|옮겼|옮기|이사|이직|취소|변경|새로|정정|아니라|그만|끊었|갈아탔"
    r"|넘어왔|팔고|팔았|샀어|장만|시작했|당겨|미뤄|앞당|연기|나서는|부터는|요즘은|새\s",
    re.IGNORECASE,
)
# not a slot's value: what maintenance wrote (close to every question, as long texts are),
# and the user's name (phatic when not asked)
_NOT_A_VALUE = ("digest.", "procedure.", "identity.name")
_MARGIN = 0.1  # share of the embedder's similarity range a topic fact may trail by
_TIE = 0.01  # ... and within which two cards are equally close to a query


class TruthStage:
    name: StageName = "truth"
    early = False

    def __init__(
        self,
        store: EpisodeIndex,
        facts: FactIndex,
        cards: FactRepository,
        factor: float,
        similarity_range: tuple[float, float],
        analyzer: Analyzer,
    ) -> None:
        self._low, self._high = similarity_range
        self._analyzer = analyzer
        self._slots: dict[str, frozenset[str]] = {}
        self._own: dict[str, frozenset[str]] = {}
        self._store = store
        self._facts = facts
        self._cards = cards
        self._factor = factor

    def effect(self, query: Query, scores: ScoreState | None) -> Effect | None:
        if scores is None or self._factor >= 1.0:
            return None
        facts = self._facts.rows(query.request.user_id)
        vector = query.query_vector()
        if vector is None:
            return None
        total, rows = scores.total, query.rows
        pool = top_positive(total, _POOL)
        if pool.size == 0:
            return None
        changed: dict[int, float] = {}
        entries: dict[int, Any] = {}
        overrules: Callable[[int, int], bool] = _always
        known = bool(facts.ids.size) and facts.matrix.shape[1] == vector.shape[0]
        if known:
            moment = query.request.as_of
            relevance = facts.matrix @ vector
            named = self._named_slots(query, facts)
            on_topic = self._on_topic(query, facts, pool, relevance, moment, named)
            stale = _stale_rows(facts, rows.ids, pool, relevance, moment, on_topic)
            floors = self._said_by_leaders(
                query, facts, total, pool, relevance, moment, stale, named
            )
            if floors:
                query.prepared[TRUTH_KEY] = floors
            if stale:
                changed, entries = self._effect(query, facts, total, stale, floors)
            overrules = _overrules(facts, query.rows.ids, pool, named, self._words(query))
        self._newer_first(query, total, pool, changed, entries, overrules)
        if known:
            self._slot_card(query, facts, total, pool, changed, relevance, named)
        if not changed:
            return None
        targets = np.fromiter(changed, dtype=np.int64, count=len(changed))
        values = np.fromiter(changed.values(), dtype=np.float64, count=len(changed))

        def entry(row: int) -> Any:
            return entries.get(row)

        return Effect("truth", assign=(targets, values), entry=entry)

    def _words(self, query: Query) -> Callable[[int], frozenset[str]]:
        """A pool row's analyzed words, without the speaker's name."""
        ids = query.rows.ids

        def words(row: int) -> frozenset[str]:
            episode = query.episodes(self._store, [int(ids[row])]).get(int(ids[row]))
            if episode is None:
                return frozenset()
            text = episode.body
            if episode.speaker and text.startswith(f"{episode.speaker}: "):
                text = text[len(episode.speaker) + 2 :]
            return frozenset(self._analyzer.terms(text))

        return words

    def _says_change(self, query: Query, rows: list[int]) -> set[int]:
        """The rows whose text announces a change ("now", "moved", "instead", "actually")."""
        if not rows:
            return set()
        ids = query.rows.ids
        episodes = query.episodes(self._store, [int(ids[r]) for r in rows])
        return {
            r
            for r in rows
            if (found := episodes.get(int(ids[r]))) is not None and _CHANGE.search(found.body)
        }

    def _newer_first(
        self,
        query: Query,
        total: npt.NDArray[np.float64],
        pool: npt.NDArray[np.int64],
        changed: dict[int, float],
        entries: dict[int, Any],
        overrules: Callable[[int, int], bool],
    ) -> None:
        """No fact knows the change ("my dentist appointment is Monday", weeks later "it
        moved to Tuesday"), but two leading turns of different sessions answer a question
        about now about as well: the later one says what holds now, so it goes first. Only
        among the leading few; asked as of a date, what holds then is what was said last
        before it; never for other questions about the past ("did", "was") nor within a
        time range."""
        request = query.request
        if request.time_range is not None:
            return
        if request.as_of is None and _PAST.search(_RECALL.sub(" ", request.query)):
            return
        bounds = query.passage_range
        rows = query.rows
        score = {int(r): changed.get(int(r), float(total[r])) for r in pool.tolist()}
        close = _close_leaders(score)
        if len(close) < 2:
            return
        by_time = sorted(close, key=lambda r: float(rows.times[r]))
        query.episodes(self._store, [int(rows.ids[r]) for r in by_time])  # one read for all
        changing = self._says_change(query, by_time[1:])
        for position, older in enumerate(by_time):
            for newer in by_time[position + 1 :]:
                later = float(rows.times[newer]) - float(rows.times[older]) >= _NEWER_GAP
                other_session = rows.session[newer] != rows.session[older]
                if bounds is not None and not bounds[0] <= float(rows.times[newer]) <= bounds[1]:
                    continue  # said outside the asked range (or after as_of)
                if (
                    later
                    and other_session
                    and newer in changing
                    and score[newer] <= score[older]
                    and overrules(newer, older)
                ):
                    lifted = score[older] + _STEP
                    entries[newer] = {
                        **(entries.get(newer) or {}),
                        "newer_than": f"ep_{int(rows.ids[older])}",
                        "score_before": round(score[newer], 6),
                        "score": round(lifted, 6),
                    }
                    score[newer] = changed[newer] = lifted

    def _slot_card(
        self,
        query: Query,
        facts: FactVectors,
        total: npt.NDArray[np.float64],
        pool: npt.NDArray[np.int64],
        changed: dict[int, float],
        relevance: npt.NDArray[np.float32],
        named: npt.NDArray[np.bool_],
    ) -> None:
        """ "Which sport do I do at the moment?" names a slot of the user's profile; the card
        that holds for it is the answer, whether or not a turn that said it still ranks (after
        maintenance one telling is left, and it may not use the question's words). The
        holding card of a slot the query names by the slot's own words (not "who", which
        every identity slot answers to) ranks just below the leading hit, if it is the card
        closest to the query (the slot only breaks a tie: a card less relevant than another
        is never promoted over it) and does not say a plan was called off. Not for questions
        about the past ("where did I live?") nor within a time range; asked as of a date, the
        card that held then."""
        request = query.request
        if not named.any() or request.time_range is not None:
            return
        moment = request.as_of
        if moment is None and _PAST.search(_RECALL.sub(" ", request.query)):
            return
        terms = set(query.analysis.terms)
        holding = [
            r
            for r in range(facts.ids.size)
            if not _replaced(facts, r, moment)
            and not facts.keys[r].startswith((*_NOT_A_VALUE, OPEN_PREFIX))  # open: no slot
        ]
        if not holding:
            return
        closest = max(float(relevance[r]) for r in holding)
        tie = _TIE * (self._high - self._low)
        told = {
            row: _told(facts, query, row)
            for row in holding
            if named[row]
            and terms & self._own_terms(facts.keys[row])
            and float(relevance[row]) >= closest - tie
        }
        candidates = sorted(
            (row for row, (first, _) in told.items() if moment is None or first <= moment),
            key=lambda r: -float(relevance[r]),
        )[:_LEADERS]
        cards = self._cards.get_many([int(facts.ids[r]) for r in candidates])
        card = next(
            (
                r
                for r in candidates
                if (found := cards.get(int(facts.ids[r]))) is not None
                and not slots.closing(found.card)
            ),
            None,
        )
        if card is None:
            return
        score = {int(r): changed.get(int(r), float(total[r])) for r in pool.tolist()}
        if self._told_since(query, facts, card, score, told[card][1]):
            return
        top = max(score.values())
        number = int(facts.ids[card])
        floors: dict[int, CurrentFact] = query.prepared.setdefault(TRUTH_KEY, {})
        _vouch(floors, CurrentFact(number, top - 2 * _STEP, None, None, slot=facts.keys[card]))

    def _told_since(
        self,
        query: Query,
        facts: FactVectors,
        card: int,
        score: dict[int, float],
        since: float,
    ) -> bool:
        """Whether a leading turn said a day or more after the card may have changed its
        slot where no fact knows it ("I took a job in Minneapolis, so I just moved there"
        when the card still says Chicago): it announces a change in the slot's words and
        said no fact of another slot."""
        rows = query.rows
        later = [r for r in _close_leaders(score) if float(rows.times[r]) - since >= _NEWER_GAP]
        if not later:
            return False
        by_row = _facts_of(facts, rows.ids, later)
        topic = self._slot_terms(facts.keys[card])
        words = self._words(query)
        return any(
            all(
                facts.keys[f] == facts.keys[card] or facts.keys[f].startswith(OPEN_PREFIX)
                for f in by_row.get(r, [])
            )  # an open card names no slot: it is the turn's own words
            and bool(words(r) & topic)
            for r in self._says_change(query, later)
        )

    def _said_by_leaders(
        self,
        query: Query,
        facts: FactVectors,
        total: npt.NDArray[np.float64],
        pool: npt.NDArray[np.int64],
        relevance: npt.NDArray[np.float32],
        moment: float | None,
        stale: dict[int, tuple[int, int]],
        named: npt.NDArray[np.bool_],
    ) -> dict[int, CurrentFact]:
        """ "Where do I work?": the fact the leading turn "I'm a backend engineer at Stripe"
        gave about the slot the query names ranks just below that turn, so the answer's
        distilled form sits beside its evidence instead of under unrelated turns. Only for
        queries that name a slot, and only for the few leading turns."""
        if not named.any():
            return {}
        floors: dict[int, CurrentFact] = {}
        leaders = [int(r) for r in pool[:_LEADERS].tolist() if int(r) not in stale]
        for row, fact in _facts_of(facts, query.rows.ids, leaders).items():
            best = [f for f in fact if named[f] and not _replaced(facts, f, moment)]
            if not best:
                continue
            topic = max(best, key=lambda r: float(relevance[r]))
            number = int(facts.ids[topic])
            floor = float(total[row]) - _STEP
            _vouch(floors, CurrentFact(number, floor, None, f"ep_{int(query.rows.ids[row])}"))
        return floors

    def _on_topic(
        self,
        query: Query,
        facts: FactVectors,
        pool: npt.NDArray[np.int64],
        relevance: npt.NDArray[np.float32],
        moment: float | None,
        named: npt.NDArray[np.bool_],
    ) -> Callable[[int, int], bool]:
        """Whether a fact is what the query asks about, for a turn that said it. A fact
        decides a turn's fate only then: "where do I live?" demotes the turn of an old home,
        not "what do I drink?" asked of a turn that named both. When the query names slots
        ("live", "job", "이사"), only facts of those slots qualify; otherwise the fact must be
        about as close to the query as the turn itself and as the user's closest facts (the
        margin is a share of the embedder's similarity range: the same for every embedder)."""
        if named.any():
            return lambda row, fact: bool(named[fact])
        margin = _MARGIN * (self._high - self._low)
        holding = ~np.asarray([_replaced(facts, r, moment) for r in range(facts.ids.size)])
        best_fact = float(relevance[holding].max()) if holding.any() else -np.inf
        vector = query.query_vector()
        assert vector is not None
        turn_relevance = query.rows.row_vectors(pool) @ vector
        floor = {
            int(row): max(float(near), best_fact) - margin
            for row, near in zip(pool.tolist(), turn_relevance.tolist(), strict=True)
        }
        return lambda row, fact: float(relevance[fact]) >= floor[row]

    def _named_slots(self, query: Query, facts: FactVectors) -> npt.NDArray[np.bool_]:
        """Per fact: whether the query names its slot ("live", "job", "이사")."""
        terms = set(query.analysis.terms)
        return np.fromiter(
            (
                not key.startswith(OPEN_PREFIX) and bool(terms & self._slot_terms(key))
                for key in facts.keys
            ),  # an open card's key names its verb, not a slot
            dtype=bool,
            count=len(facts.keys),
        )

    def _own_terms(self, key: str) -> frozenset[str]:
        known = self._own.get(key)
        if known is None:
            known = frozenset(self._analyzer.terms(" ".join(own_slot_words(key))))
            self._own[key] = known
        return known

    def _slot_terms(self, key: str) -> frozenset[str]:
        known = self._slots.get(key)
        if known is None:
            known = frozenset(self._analyzer.terms(topic_text(key)))
            self._slots[key] = known
        return known

    def _effect(
        self,
        query: Query,
        facts: FactVectors,
        total: npt.NDArray[np.float64],
        stale: dict[int, tuple[int, int]],
        floors: dict[int, CurrentFact],
    ) -> tuple[dict[int, float], dict[int, Any]]:
        rows = query.rows
        bounds = query.passage_range
        lifted: dict[int, float] = {}  # row -> new score
        lifted_for: dict[int, int] = {}  # lifted row -> the stale row it outranks
        cards = self._cards.get_many(sorted({int(facts.ids[h]) for _, h in stale.values()}))
        for row, (topic, head) in stale.items():
            score = float(total[row])
            head_id = int(facts.ids[head])
            turns = facts.link_episodes[facts.link_facts == head_id]
            at = rows.rows_of(turns)
            for successor in at[at >= 0].tolist():
                moment = float(rows.times[successor])
                if bounds is not None and not bounds[0] <= moment <= bounds[1]:
                    continue  # said outside the asked range (or after as_of): not a candidate
                target = max(score + _STEP, float(total[successor]))
                if target > lifted.get(successor, -np.inf):
                    lifted[successor] = target
                    lifted_for[successor] = row
            # a closing card ("we cancelled the Italy trip") says what no longer holds: the
            # turn that said it (and what comes instead) goes first, the card just below it
            head_card = cards.get(head_id)
            ends = head_card is not None and slots.closing(head_card.card)
            floor = score if ends else score + 2 * _STEP
            _vouch(
                floors,
                CurrentFact(
                    head_id, floor, f"fact_{int(facts.ids[topic])}", f"ep_{int(rows.ids[row])}"
                ),
            )
        query.prepared[TRUTH_KEY] = floors
        demoted: dict[int, float] = {}
        for row in stale:
            if row in lifted:
                continue  # both stale and the successor of another: leave it be
            demoted[row] = float(total[row]) * self._factor
        entries: dict[int, Any] = {}
        for row, value in demoted.items():
            topic, head = stale[row]
            head_id = int(facts.ids[head])
            stored = cards.get(head_id)
            since = float(facts.valid_to[topic])
            entries[row] = {
                "fact": f"fact_{int(facts.ids[topic])}",
                "by": f"fact_{head_id}",
                "since": None if np.isnan(since) else _day(from_epoch(since)),
                "current": None if stored is None else stored.card.statement,
                "factor": self._factor,
                "score_before": round(float(total[row]), 6),
                "score": round(value, 6),
            }
        for row, value in lifted.items():
            stale_row = lifted_for[row]
            entries[row] = {
                "replaces": f"ep_{int(rows.ids[stale_row])}",
                "fact": f"fact_{int(facts.ids[stale[stale_row][1]])}",
                "score_before": round(float(total[row]), 6),
                "score": round(value, 6),
            }
        return {**demoted, **lifted}, entries


def _stale_rows(
    facts: FactVectors,
    episode_ids: npt.NDArray[np.int64],
    pool: npt.NDArray[np.int64],
    relevance: npt.NDArray[np.float32],
    moment: float | None,
    on_topic: Callable[[int, int], bool],
) -> dict[int, tuple[int, int]]:
    """Pool rows whose topic fact (or, when none is on topic, every fact) no longer held at
    ``moment`` (None: now), each with the row of that fact and of the version that holds at
    the moment."""
    by_row = _facts_of(facts, episode_ids, pool.tolist())
    stale: dict[int, tuple[int, int]] = {}
    for row in pool.tolist():
        said = by_row.get(row, [])
        candidates = [fact for fact in said if on_topic(row, fact)]
        if not candidates and said and all(_replaced(facts, f, moment) for f in said):
            candidates = said  # nothing the turn said holds any more: stale whatever is asked
        if not candidates:
            continue
        topic = max(candidates, key=lambda r: float(relevance[r]))
        if not _replaced(facts, topic, moment):
            continue
        head = _holding(facts, topic, moment)
        if head is not None:
            stale[row] = (topic, head)
    return stale


def _overrules(
    facts: FactVectors,
    episode_ids: npt.NDArray[np.int64],
    pool: npt.NDArray[np.int64],
    named: npt.NDArray[np.bool_],
    words: Callable[[int], frozenset[str]],
) -> Callable[[int, int], bool]:
    """Whether a later turn may go before an earlier one when the query names a slot: when
    it said a fact of that slot; never when its facts are all of other slots ("I drink
    matcha these days" does not answer "which sport?"); when it said no fact, only if it
    shares a word with the earlier turn, speakers aside ("I tried a new bakery" does not
    overrule "I still work at Initech"; "the dentist called, it moved to Tuesday" may
    overrule "my dentist appointment is on Monday", whose fact never learned of the move)."""
    if not named.any():
        return _always
    by_row = _facts_of(facts, episode_ids, pool.tolist())

    def overrules(newer: int, older: int) -> bool:
        said = by_row.get(newer, [])
        if any(named[f] for f in said):
            return True
        if said:
            return False
        return bool(words(newer) & words(older))

    return overrules


def _close_leaders(score: dict[int, float]) -> list[int]:
    """The leading few rows whose score is within ``_NEWER_CLOSE`` of the best."""
    leaders = sorted(score, key=lambda r: -score[r])[:_NEWER_AMONG]
    if not leaders:
        return []
    best = score[leaders[0]]
    return [r for r in leaders if score[r] >= best * _NEWER_CLOSE]


def _vouch(floors: dict[int, CurrentFact], lift: CurrentFact) -> None:
    """Keep the higher of two floors for one fact."""
    known = floors.get(lift.number)
    if known is None or known.floor < lift.floor:
        floors[lift.number] = lift


def _always(newer: int, older: int) -> bool:
    return True


def _told(facts: FactVectors, query: Query, row: int) -> tuple[float, float]:
    """When a card was first and last told: its turns' times (its validity's start, or
    when it was recorded, for a card no turn of the user's said)."""
    turns = query.rows.rows_of(facts.link_episodes[facts.link_facts == facts.ids[row]])
    times = query.rows.times[turns[turns >= 0]]
    start = float(facts.valid_from[row])
    if np.isnan(start):
        start = float(facts.recorded_at[row]) if times.size == 0 else float(times.min())
    return start, max(start, float(times.max())) if times.size else start


def _facts_of(
    facts: FactVectors, episode_ids: npt.NDArray[np.int64], turn_rows: list[int]
) -> dict[int, list[int]]:
    """The rows of the facts each turn row said (turns in the pool were said by the moment,
    so their facts were too)."""
    if not turn_rows:
        return {}
    wanted = episode_ids[np.asarray(turn_rows, dtype=np.int64)]
    said = np.isin(facts.link_episodes, wanted)
    if not said.any():
        return {}
    fact_rows = positions(facts.ids, facts.link_facts[said])
    by_turn: dict[int, list[int]] = {}
    for turn, fact_row in zip(facts.link_episodes[said].tolist(), fact_rows.tolist(), strict=True):
        if fact_row >= 0:
            by_turn.setdefault(int(turn), []).append(fact_row)
    return {
        row: by_turn[int(episode_ids[row])] for row in turn_rows if int(episode_ids[row]) in by_turn
    }


def _replaced(facts: FactVectors, row: int, moment: float | None) -> bool:
    if facts.successor[row] < 0:
        return False
    if moment is None:
        return True
    ends = float(facts.valid_to[row])
    return not np.isnan(ends) and ends <= moment


def _holding(facts: FactVectors, row: int, moment: float | None) -> int | None:
    """Follow the successors of a replaced fact to the version that holds at ``moment``."""
    seen = {row}
    while _replaced(facts, row, moment):
        found = positions(facts.ids, facts.successor[row : row + 1])
        following = int(found[0])
        if following < 0 or following in seen:
            return None  # the successor was deleted (or a cycle): nothing to point at
        seen.add(following)
        row = following
    return row


def _day(moment: datetime) -> str:
    return f"{moment:%Y-%m-%d}"
