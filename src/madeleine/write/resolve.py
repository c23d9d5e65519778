"""Resolution: a new card against what is known — duplicate, conflict, or new.

Cards of one subject that fill the same slot (``key``) conflict unless the key is
multi-valued; a card whose statement is nearly the same (cosine above the duplicate
threshold) or whose typed values match is a duplicate. In between (the contradiction band),
a judge's verdict decides when the write path has one (an LLM, asked before the write lock);
otherwise cards of the same category and subject that give a different value to the same
attribute conflict. Keys that ``madeleine.facts.slots`` calls independent (a role and an
employer, a city and its neighbourhood, two plans) never conflict; a closing card ("we
cancelled the trip") that names another value than the current card is history; a new card
also ends the cards of other keys that it makes stale (a move ends the old neighbourhood).
A conflict
is settled by the configured strategy and nothing is overwritten: the loser is superseded
(or flagged), keeps its card and times, and every decision goes to the routing log.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np
import numpy.typing as npt

from madeleine.facts import slots
from madeleine.facts.cards import CardDraft
from madeleine.facts.contradiction import Verdict
from madeleine.facts.slot_classifier import classified
from madeleine.store.ports import FactRepository
from madeleine.store.records import StoredFact, Transaction
from madeleine.text.timeparse import to_epoch

_JUDGED_PER_CARD = 3  # stored facts per new card that the judge sees, most similar first


@dataclass(frozen=True, slots=True)
class Decision:
    decision: str  # added / duplicate / superseded / superseded_by_existing / flagged
    fact_id: int
    other_id: int | None


class Resolver:
    def __init__(
        self,
        facts: FactRepository,
        *,
        duplicate_threshold: float,
        conflict_threshold: float,
        strategy: str,
        similarity_range: tuple[float, float] = (0.0, 1.0),
    ) -> None:
        """Thresholds apply to cosine calibrated to the embedder's ``similarity_range`` (as
        search scores are), so that they mean the same with every embedder."""
        self._facts = facts
        self._duplicate = duplicate_threshold
        self._conflict = conflict_threshold
        self._low, self._high = similarity_range
        self._strategy = strategy

    def resolve(
        self,
        tx: Transaction,
        user_id: str,
        drafts: Sequence[CardDraft],
        vectors: npt.NDArray[np.float32],
        terms: Sequence[str],
        extractor: str,
        now: float,
        verdicts: Sequence[dict[int, Verdict]] | None = None,
        judge: str | None = None,
        corrects: Sequence[int | None] | None = None,
    ) -> list[Decision]:
        """``verdicts[i]``: the judge's answers for draft i, by stored fact id;
        ``corrects[i]``: the fact draft i corrects ("Tuesday, not Monday"), ended by it."""
        decisions: list[Decision] = []
        current = {f.number: f for f in self._facts.current(tx, user_id)}
        for index, (draft, vector, text_terms) in enumerate(
            zip(drafts, vectors, terms, strict=True)
        ):
            judged = verdicts[index] if verdicts is not None else {}
            decision = self._one(
                tx,
                user_id,
                draft,
                vector,
                text_terms,
                list(current.values()),
                extractor,
                now,
                judged,
                judge,
            )
            decisions.append(decision)
            touched_ids = [decision.fact_id, decision.other_id]
            if decision.decision in ("added", "superseded"):
                touched_ids.extend(
                    self._end_stale(tx, user_id, draft, decision.fact_id, current, now)
                )
            wrong = corrects[index] if corrects is not None else None
            if wrong is not None and decision.decision in ("added", "superseded", "duplicate"):
                touched_ids.extend(
                    self._end_corrected(tx, user_id, draft, decision.fact_id, wrong, current, now)
                )
            # keep the in-memory view current: read back only the rows this decision touched
            for touched in touched_ids:
                if touched is None:
                    continue
                current.pop(touched, None)
                fact = self._facts.fetch(tx, touched)
                if fact is not None and fact.card.status != "superseded":
                    current[touched] = fact
        return decisions

    def _end_stale(
        self,
        tx: Transaction,
        user_id: str,
        draft: CardDraft,
        new_id: int,
        current: dict[int, StoredFact],
        now: float,
    ) -> list[int]:
        """Supersede the current cards of other keys that the new card makes stale."""
        ended: list[int] = []
        for number, fact in list(current.items()):
            if number == new_id or fact.card.status != "current":
                continue
            reason = slots.makes_stale(fact.card, draft)
            if reason is None:
                continue
            self._end(tx, user_id, draft, new_id, fact, "slots", reason, now)
            ended.append(number)
        return ended

    def _end_corrected(
        self,
        tx: Transaction,
        user_id: str,
        draft: CardDraft,
        new_id: int,
        wrong: int,
        current: dict[int, StoredFact],
        now: float,
    ) -> list[int]:
        """Supersede the fact a correction names as wrong, if it still holds."""
        fact = current.get(wrong)
        if wrong == new_id or fact is None or fact.card.status != "current":
            return []
        self._end(tx, user_id, draft, new_id, fact, "correction", "corrected", now)
        return [wrong]

    def _end(
        self,
        tx: Transaction,
        user_id: str,
        draft: CardDraft,
        new_id: int,
        ended: StoredFact,
        by: str,
        reason: str,
        now: float,
    ) -> None:
        """Supersede a card of another key (or a corrected one) by the new card, and log why."""
        self._facts.supersede(tx, ended.number, new_id, now, _event_time(draft))
        detail = {**_detail(draft, by), "reason": reason, "ended_key": ended.card.key}
        self._facts.log(tx, user_id, "superseded", new_id, ended.number, detail, now)

    def _similarity(self, fact: StoredFact, vector: npt.NDArray[np.float32]) -> float:
        cosine = float(fact.vector @ vector)
        return min(1.0, max(0.0, (cosine - self._low) / (self._high - self._low)))

    def needs_judgment(
        self, draft: CardDraft, vector: npt.NDArray[np.float32], current: Sequence[StoredFact]
    ) -> list[StoredFact]:
        """Stored facts similar enough to conflict (from the conflict threshold up) that are not
        duplicates and fill another slot, most similar first: the judge's pairs."""
        subject = draft.subject.casefold()
        band: list[tuple[float, StoredFact]] = []
        for fact in current:
            if fact.card.subject.casefold() != subject or fact.card.key == draft.key:
                continue
            if slots.independent(fact.card.key, draft.key):
                continue
            similarity = self._similarity(fact, vector)
            if similarity >= self._conflict and not _same_values(fact.card, draft):
                band.append((similarity, fact))
        band.sort(key=lambda item: -item[0])
        return [fact for _, fact in band[:_JUDGED_PER_CARD]]

    def _one(
        self,
        tx: Transaction,
        user_id: str,
        draft: CardDraft,
        vector: npt.NDArray[np.float32],
        terms: str,
        current: list[StoredFact],
        extractor: str,
        now: float,
        judged: dict[int, Verdict],
        judge: str | None,
    ) -> Decision:
        subject = draft.subject.casefold()
        same_subject = [f for f in current if f.card.subject.casefold() == subject]
        same_subject.sort(key=lambda f: f.card.key != draft.key)  # its own slot decides first
        for fact in same_subject:
            same_slot = fact.card.key == draft.key
            if not same_slot and slots.independent(fact.card.key, draft.key):
                continue  # "works as an engineer at Stripe" is no duplicate of "works at Stripe"
            similarity = self._similarity(fact, vector)
            if _same_values(fact.card, draft) and (same_slot or similarity >= self._duplicate):
                return self._duplicate_of(tx, user_id, fact, draft, similarity, now)
        for fact in same_subject:
            similarity = self._similarity(fact, vector)
            if fact.card.key == draft.key:
                if draft.multi_valued:
                    continue
                if slots.closes_other_value(fact.card, draft):
                    return self._history(tx, user_id, fact, draft, vector, terms, extractor, now)
                return self._conflict_with(
                    tx, user_id, fact, draft, vector, terms, extractor, now, "same slot"
                )
            if slots.independent(fact.card.key, draft.key):
                continue
            verdict = judged.get(fact.number)
            if verdict is not None:
                if verdict.relation == "duplicate":
                    return self._duplicate_of(tx, user_id, fact, draft, similarity, now)
                if verdict.relation == "contradicts":
                    reason = f"{judge}: {verdict.reason}"
                    return self._conflict_with(
                        tx, user_id, fact, draft, vector, terms, extractor, now, reason
                    )
                continue  # compatible: the judge overrules the attribute rule
            if (
                self._conflict <= similarity
                and fact.card.category == draft.category
                and _clashing_attribute(fact.card, draft) is not None
                and not draft.multi_valued
            ):
                reason = f"same category, attribute {_clashing_attribute(fact.card, draft)!r}"
                return self._conflict_with(
                    tx, user_id, fact, draft, vector, terms, extractor, now, reason
                )
        fact_id = self._facts.insert(
            tx, user_id, draft, vector, terms, status="current", extractor=extractor, now=now
        )
        detail = _detail(draft, extractor)
        if judged:
            detail["judged"] = [
                {"fact_id": number, "relation": v.relation, "reason": v.reason, "by": judge}
                for number, v in judged.items()
            ]
        self._facts.log(tx, user_id, "added", fact_id, None, detail, now)
        return Decision("added", fact_id, None)

    def _history(
        self,
        tx: Transaction,
        user_id: str,
        current: StoredFact,
        draft: CardDraft,
        vector: npt.NDArray[np.float32],
        terms: str,
        extractor: str,
        now: float,
    ) -> Decision:
        """A closing card about another value than the current one ("I left Acme" while the
        user works at Stripe): kept as history behind the current card."""
        new_id = self._facts.insert(
            tx, user_id, draft, vector, terms, status="superseded", extractor=extractor, now=now
        )
        self._facts.mark_superseded_by(tx, new_id, current, now)
        detail = {**_detail(draft, extractor), "reason": "closes another value"}
        self._facts.log(tx, user_id, "superseded_by_existing", new_id, current.number, detail, now)
        return Decision("superseded_by_existing", new_id, current.number)

    def _duplicate_of(
        self,
        tx: Transaction,
        user_id: str,
        fact: StoredFact,
        draft: CardDraft,
        similarity: float,
        now: float,
    ) -> Decision:
        confidence = 1.0 - (1.0 - fact.card.confidence) * (1.0 - draft.confidence)
        confidence = min(0.99, max(confidence, fact.card.confidence))
        self._facts.reinforce(tx, fact.number, confidence, draft.sources)
        self._facts.log(
            tx,
            user_id,
            "duplicate",
            fact.number,
            None,
            {
                "statement": draft.statement,
                "similarity": round(similarity, 4),
                "confidence": confidence,
                "sources": list(draft.sources),  # a delete of that message finds this entry
            },
            now,
        )
        return Decision("duplicate", fact.number, None)

    def _conflict_with(
        self,
        tx: Transaction,
        user_id: str,
        old: StoredFact,
        draft: CardDraft,
        vector: npt.NDArray[np.float32],
        terms: str,
        extractor: str,
        now: float,
        reason: str,
    ) -> Decision:
        detail = {**_detail(draft, extractor), "reason": reason, "strategy": self._strategy}
        if self._strategy == "flag":
            new_id = self._facts.insert(
                tx, user_id, draft, vector, terms, status="flagged", extractor=extractor, now=now
            )
            self._facts.set_status(tx, old.number, "flagged")
            self._facts.log(tx, user_id, "flagged", new_id, old.number, detail, now)
            return Decision("flagged", new_id, old.number)
        if self._strategy == "confidence":
            new_wins = draft.confidence >= old.card.confidence
        else:  # latest event time wins; a late-arriving older statement becomes history
            new_time = _event_time(draft)
            old_time = _event_time(old.card)
            new_wins = (
                new_time is None
                or old_time is None
                or new_time >= old_time
                or old_time <= _span_end(draft, new_time)  # "last month" holds the old moment
            )
        if (
            new_wins
            and reason == "same slot"
            and _clashing_attribute(old.card, draft) is None
            and not (classified(old.card) or classified(draft))  # an open card's words
        ):
            # a complement, not a contradiction: "my passport number is …", later "it expires
            # in May" — the new version keeps what the old one knew
            known = {a.name for a in draft.attributes}
            carried = [a for a in old.card.attributes if a.name not in known]
            if carried:
                draft = draft.model_copy(update={"attributes": [*draft.attributes, *carried]})
                detail["carried_over"] = [a.name for a in carried]
        if new_wins:
            new_id = self._facts.insert(
                tx, user_id, draft, vector, terms, status="current", extractor=extractor, now=now
            )
            self._facts.supersede(tx, old.number, new_id, now, _event_time(draft))
            self._facts.log(tx, user_id, "superseded", new_id, old.number, detail, now)
            return Decision("superseded", new_id, old.number)
        capped = draft.model_copy(update={"valid_to": draft.valid_to or old.card.valid_from})
        new_id = self._facts.insert(
            tx, user_id, capped, vector, terms, status="superseded", extractor=extractor, now=now
        )
        self._facts.mark_superseded_by(tx, new_id, old, now)
        self._facts.log(tx, user_id, "superseded_by_existing", new_id, old.number, detail, now)
        return Decision("superseded_by_existing", new_id, old.number)


def _values(card: CardDraft) -> dict[str, str]:
    return {a.name: " ".join(a.value.casefold().split()) for a in card.attributes}


def _same_values(old: CardDraft, new: CardDraft) -> bool:
    if slots.status(old) != slots.status(new):
        return False  # "I work at Stripe" and "I left Stripe" name one employer, not one fact
    old_values, new_values = _values(old), _values(new)
    if not old_values or not new_values:
        return " ".join(old.statement.casefold().split()) == " ".join(
            new.statement.casefold().split()
        )
    shared = set(old_values) & set(new_values)
    return bool(shared) and all(old_values[name] == new_values[name] for name in shared)


def _clashing_attribute(old: CardDraft, new: CardDraft) -> str | None:
    old_values, new_values = _values(old), _values(new)
    for name in sorted(set(old_values) & set(new_values)):
        if old_values[name] != new_values[name]:
            return name
    return None


def _event_time(card: CardDraft) -> float | None:
    return None if card.valid_from is None else to_epoch(card.valid_from)


def _span_end(card: CardDraft, start: float) -> float:
    """The end of the period a card says it happened in (its ``until`` date's last moment),
    else its start: two statements in one period are ordered by when they were said."""
    until = slots.value(card, "until")
    if until is None:
        return start
    try:
        end = datetime.fromisoformat(until).replace(tzinfo=UTC) + timedelta(days=1)
    except ValueError:
        return start
    return max(start, end.timestamp())


def _detail(draft: CardDraft, extractor: str) -> dict[str, object]:
    return {
        "statement": draft.statement,
        "key": draft.key,
        "category": draft.category.value,
        "memory_type": draft.memory_type.value,
        "extractor": extractor,
        "sources": list(draft.sources),
    }
