"""From logged messages to resolved cards: extract and embed outside the write lock, then
resolve, check and log inside the transaction that also commits the batch's episodes.

A crash before that commit leaves the jobs claimed; they are retried and the facts drawn
again, so every acknowledged message is turned into facts exactly once.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
import numpy.typing as npt

from madeleine.embed.base import Embedder
from madeleine.facts.cards import CardDraft
from madeleine.facts.checks import Check
from madeleine.facts.contradiction import ContradictionJudge, JudgeError, Pair, Verdict
from madeleine.facts.corrections import (
    Correction,
    as_said_in,
    card_mentions,
    corrections_in,
    mentions,
    restated,
    rewritten,
    said_versions,
)
from madeleine.facts.extract import ExtractInput, Extractor
from madeleine.facts.rules.extractor import split_sentences
from madeleine.facts.slot_classifier import SlotClassifier
from madeleine.facts.topics import topic_text
from madeleine.store.ports import EventLog, FactRepository
from madeleine.store.records import StoredEvent, StoredFact, Transaction
from madeleine.text.analyzer import Analyzer
from madeleine.text.timeparse import from_epoch
from madeleine.write.resolve import Decision, Resolver

log = logging.getLogger(__name__)

_NO_VECTORS = np.zeros((0, 0), dtype=np.float32)  # a window's until its statements are embedded
_MAX_JUDGED_PAIRS = 48  # pairs in one contradiction-check call (one call per window)


@dataclass(frozen=True, slots=True)
class _Target:
    """The fact a correction replaces: a stored one, or a draft prepared earlier in this
    batch (its window and position), whose id is known once that window is committed."""

    fact_id: int | None = None
    window: int = -1
    draft: int = -1


@dataclass(slots=True)
class _Window:
    user_id: str
    drafts: list[CardDraft]
    vectors: npt.NDArray[np.float32]
    terms: list[str]
    extractor: str
    fallback_error: str | None = None
    verdicts: list[dict[int, Verdict]] | None = None  # per draft, by stored fact id
    judge_error: str | None = None
    corrects: list[_Target | None] = field(default_factory=list)  # per draft


@dataclass(slots=True)
class PreparedFacts:
    windows: list[_Window] = field(default_factory=list)


class FactPipeline:
    def __init__(
        self,
        log: EventLog,
        facts: FactRepository,
        extractor: Extractor,
        embedder: Embedder,
        analyzer: Analyzer,
        resolver: Resolver,
        checks: Sequence[Check],
        window_messages: int,
        judge: ContradictionJudge | None = None,
        slot_classifier: SlotClassifier | None = None,
    ) -> None:
        self._log = log
        self._slot_classifier = slot_classifier  # slots for open cards, by their vectors
        self.facts = facts
        self.extractor = extractor
        self._embedder = embedder
        self._analyzer = analyzer
        self._resolver = resolver
        self.checks = list(checks)
        self._window_messages = window_messages
        self.judge = judge

    def prepare(self, events: Sequence[StoredEvent]) -> PreparedFacts:
        """Extract per session window, then embed every window's statements in one call (the
        embedder's workers share one long batch better than many short ones); no lock held."""
        by_session: dict[tuple[str, str], list[StoredEvent]] = defaultdict(list)
        for event in events:
            by_session[(event.user_id, event.session_id)].append(event)
        prepared = PreparedFacts()
        stored: dict[str, list[StoredFact]] = {}
        for (user_id, _), session_events in by_session.items():
            session_events.sort(key=lambda e: (e.occurred_at, e.id))
            for start in range(0, len(session_events), self._window_messages):
                chunk = session_events[start : start + self._window_messages]
                window = [_input(e) for e in chunk]
                drafts, used, error = self._extract(window)
                drafts = [_with_defaults(d, chunk) for d in drafts]
                fixes = self._corrections(user_id, window, drafts, prepared, stored)
                corrects: list[_Target | None] = [None] * len(drafts)
                for fix, target in fixes:
                    said_earlier = fix.key.startswith("said.") and target is None
                    drafts.append(fix if said_earlier else _with_defaults(fix, chunk))
                    corrects.append(target)
                if not drafts and error is None:
                    continue
                prepared.windows.append(
                    _Window(user_id, drafts, _NO_VECTORS, [], used, error, corrects=corrects)
                )
        statements = [d.statement for w in prepared.windows for d in w.drafts]
        vectors = (
            self._embedder.embed_passages(statements)
            if statements
            else np.zeros((0, self._embedder.dim), dtype=np.float32)
        )
        start = 0
        for window_facts in prepared.windows:
            end = start + len(window_facts.drafts)
            window_facts.vectors = vectors[start:end]
            start = end
            if self._slot_classifier is not None and window_facts.drafts:
                window_facts.drafts = self._slot_classifier.assign(
                    window_facts.drafts, window_facts.vectors
                )
            window_facts.terms = [
                " ".join(self._analyzer.terms(_lexical_text(d))) for d in window_facts.drafts
            ]
            if self.judge is not None and window_facts.drafts:
                self._judge(window_facts)
        return prepared

    def _corrections(
        self,
        user_id: str,
        window: Sequence[ExtractInput],
        drafts: Sequence[CardDraft],
        prepared: PreparedFacts,
        stored: dict[str, list[StoredFact]],
    ) -> list[tuple[CardDraft, _Target | None]]:
        """The new versions that the window's corrections ("it's Tuesday, not Monday") make
        of what they correct, each with the fact it replaces."""
        fixes: list[tuple[CardDraft, _Target | None]] = []
        here = len(prepared.windows)
        for message in window:
            for correction in corrections_in(message):
                found = self._corrected(user_id, correction, drafts, prepared, stored)
                if found is not None:
                    card, target = found
                    fixes.extend((draft, target) for draft in self._restate(card, correction))
                    continue
                sentence = self._said_before(user_id, correction, window)
                if sentence is None:
                    continue
                old, new = said_versions(*sentence, correction)
                fixes.append((old, None))
                fixes.append((new, _Target(window=here, draft=len(drafts) + len(fixes) - 1)))
        return fixes

    def _said_before(
        self, user_id: str, correction: Correction, window: Sequence[ExtractInput]
    ) -> tuple[str, datetime, int] | None:
        """The latest sentence the user said before the correction that holds the wrong value
        (and not the right one), with its time and message: this window first, then the log."""
        said = correction.said.event_id

        def holding(text: str) -> str | None:
            for sentence in reversed(split_sentences(text)):
                if mentions(sentence, correction.old) and not mentions(sentence, correction.new):
                    return sentence
            return None

        for message in reversed(window):
            if message.role != "user" or message.event_id >= said:
                continue
            if (found := holding(message.text)) is not None:
                return found, message.occurred_at, message.event_id
        earlier = [
            e
            for e in self._log.events_for_user(user_id)
            if e.role == "user" and e.id < said and e.id < window[0].event_id
        ]
        for event in sorted(earlier, key=lambda e: (e.occurred_at, e.id), reverse=True):
            if (found := holding(event.content)) is not None:
                return found, from_epoch(event.occurred_at), event.id
        return None

    def _corrected(
        self,
        user_id: str,
        correction: Correction,
        drafts: Sequence[CardDraft],
        prepared: PreparedFacts,
        stored: dict[str, list[StoredFact]],
    ) -> tuple[CardDraft, _Target] | None:
        """The latest card said before the correction that holds the wrong value (and not
        already the right one): this window's drafts, then this batch's, then the store's."""
        said = correction.said.event_id

        def wrong(card: CardDraft) -> bool:
            return (
                all(source < said for source in card.sources)
                and card_mentions(card, correction.old)
                and not card_mentions(card, correction.new)
            )

        here = len(prepared.windows)
        for position in range(len(drafts) - 1, -1, -1):
            if wrong(drafts[position]):
                return drafts[position], _Target(window=here, draft=position)
        for index in range(len(prepared.windows) - 1, -1, -1):
            earlier = prepared.windows[index]
            if earlier.user_id != user_id:
                continue
            for position in range(len(earlier.drafts) - 1, -1, -1):
                if wrong(earlier.drafts[position]):
                    return earlier.drafts[position], _Target(window=index, draft=position)
        if user_id not in stored:
            stored[user_id] = sorted(self.facts.read_current(user_id), key=lambda f: -f.number)
        for fact in stored[user_id]:
            if wrong(fact.card):
                return fact.card, _Target(fact_id=fact.number)
        return None

    def _restate(self, card: CardDraft, correction: Correction) -> list[CardDraft]:
        """Read the corrected statement again; keep what it says about the card's slot (or,
        failing that, its category), else swap the value in the card itself."""
        drafts, _, _ = self._extract([restated(card, correction)])
        same = [d for d in drafts if d.subject == card.subject and d.key == card.key]
        if not same:
            same = [d for d in drafts if d.subject == card.subject and d.category == card.category]
        if not same:
            return [rewritten(card, correction)]
        return [as_said_in(d, correction) for d in same[:1]]

    def _judge(self, window: _Window) -> None:
        """Ask the judge about the window's cards that fall in the contradiction band, in one
        call, before the write lock; the answers are applied at commit if those facts are
        still current then."""
        assert self.judge is not None
        current = self.facts.read_current(window.user_id)
        pairs: list[Pair] = []
        owners: list[int] = []
        for index, (draft, vector) in enumerate(zip(window.drafts, window.vectors, strict=True)):
            for fact in self._resolver.needs_judgment(draft, vector, current):
                pairs.append(
                    Pair(
                        draft.statement,
                        fact.card.statement,
                        draft.category.value,
                        draft.subject,
                        fact.number,
                    )
                )
                owners.append(index)
        window.verdicts = [{} for _ in window.drafts]
        if not pairs:
            return
        pairs, owners = pairs[:_MAX_JUDGED_PAIRS], owners[:_MAX_JUDGED_PAIRS]
        try:
            answers = self.judge.judge(pairs)
        except JudgeError as exc:
            log.warning("contradiction check (%s) failed; rules decide: %s", self.judge.name, exc)
            window.judge_error = str(exc)
            return
        for owner, pair, verdict in zip(owners, pairs, answers, strict=True):
            if verdict is not None:
                window.verdicts[owner][pair.old_fact_id] = verdict

    def commit(self, tx: Transaction, prepared: PreparedFacts, now: float) -> None:
        users: set[str] = set()
        made: dict[tuple[int, int], int] = {}  # (window, draft) -> the fact it became
        for window_index, window in enumerate(prepared.windows):
            live = [
                index
                for index, draft in enumerate(window.drafts)
                if self._log.events_exist(tx, draft.sources)
            ]
            if window.judge_error is not None and self.judge is not None:
                self.facts.log(
                    tx,
                    window.user_id,
                    "contradiction_check_fallback",
                    None,
                    None,
                    {"judge": self.judge.name, "error": window.judge_error, "used": "rules"},
                    now,
                )
            if window.fallback_error is not None:
                self.facts.log(
                    tx,
                    window.user_id,
                    "extractor_fallback",
                    None,
                    None,
                    {"extractor": window.extractor, "error": window.fallback_error},
                    now,
                )
            if not live:
                continue
            decisions: list[Decision] = self._resolver.resolve(
                tx,
                window.user_id,
                [window.drafts[i] for i in live],
                window.vectors[live],
                [window.terms[i] for i in live],
                window.extractor,
                now,
                None if window.verdicts is None else [window.verdicts[i] for i in live],
                None if self.judge is None else self.judge.name,
                [_corrected_id(window.corrects, i, made) for i in live],
            )
            for draft_index, decision in zip(live, decisions, strict=True):
                made[(window_index, draft_index)] = decision.fact_id
            if decisions:
                users.add(window.user_id)
        for user_id in users:
            self.run_checks(tx, user_id, now)

    def run_checks(self, tx: Transaction, user_id: str, now: float) -> None:
        self.facts.clear_alerts_without(tx, user_id)
        cards = [f.card for f in self.facts.current(tx, user_id)]
        for check in self.checks:
            try:
                alerts = check(cards)
            except Exception:
                log.exception("memory check %s failed; skipped", getattr(check, "__name__", check))
                continue
            for alert in alerts:
                if self.facts.upsert_alert(
                    tx,
                    user_id,
                    alert.rule,
                    alert.fingerprint,
                    alert.severity,
                    alert.message,
                    alert.fact_ids,
                    now,
                ):
                    self.facts.log(
                        tx,
                        user_id,
                        "alert",
                        None,
                        None,
                        {"rule": alert.rule, "facts": list(alert.fact_ids)},
                        now,
                    )

    def _extract(self, window: list[ExtractInput]) -> tuple[list[CardDraft], str, str | None]:
        with_outcome = getattr(self.extractor, "extract_with_outcome", None)
        if with_outcome is None:
            return list(self.extractor.extract(window)), self.extractor.name, None
        drafts, outcome = with_outcome(window)
        used = getattr(outcome, "producer", self.extractor.name)
        error = getattr(outcome, "error", None)
        return list(drafts), str(used), None if error is None else str(error)


def _corrected_id(
    corrects: Sequence[_Target | None], index: int, made: dict[tuple[int, int], int]
) -> int | None:
    target = corrects[index] if index < len(corrects) else None
    if target is None:
        return None
    if target.fact_id is not None:
        return target.fact_id
    return made.get((target.window, target.draft))


def _input(event: StoredEvent) -> ExtractInput:
    return ExtractInput(
        event_id=event.id,
        session_id=event.session_id,
        role=event.role,
        speaker=event.name,
        text=event.content,
        occurred_at=from_epoch(event.occurred_at),
        project=_project(event.metadata),
    )


def _project(metadata: object) -> str | None:
    """The code project a message belongs to: ``metadata['project']`` (the Claude Code
    importer records it; a caller may set it)."""
    if not isinstance(metadata, dict):
        return None
    project = metadata.get("project")
    return str(project).strip() or None if project else None


def _with_defaults(draft: CardDraft, window: Sequence[StoredEvent]) -> CardDraft:
    """Facts hold from when they were said unless the extractor knows better."""
    ids = {e.id for e in window}
    sources = [s for s in draft.sources if s in ids] or [window[-1].id]
    said = max(e.occurred_at for e in window if e.id in sources)
    update: dict[str, object] = {"sources": sources}
    if draft.valid_from is None:
        update["valid_from"] = from_epoch(said)
    return draft.model_copy(update=update)


def _lexical_text(draft: CardDraft) -> str:
    """Statement, subject, values and the words of the card's slot: "where do I live?" finds
    "The user moved to Portland." by "live" (``facts/topics.py``)."""
    values = " ".join(a.value for a in draft.attributes)
    subject = draft.subject if draft.subject != "user" else ""
    return f"{draft.statement} {subject} {values} {topic_text(draft.key)}"
