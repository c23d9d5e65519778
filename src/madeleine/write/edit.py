"""A person corrects a card: the edit becomes a new version that supersedes the old one.

Nothing is overwritten (the old card keeps its statement, times and sources, and ``history``
shows both); the new statement goes through the same PII policy as a message, keeps the old
card's slot, sources and importance, and holds with full confidence, since a person said it.
The memory checks run again over the user's current cards, and the routing log records the
edit with its reason.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

import numpy as np

from madeleine.embed.base import Embedder
from madeleine.errors import ItemNotFoundError, StaleVersionError
from madeleine.facts.cards import CardDraft
from madeleine.inputs import require_text
from madeleine.store.ports import Store
from madeleine.store.records import MAX_ID, StoredFact, Transaction, fact_number
from madeleine.text.analyzer import Analyzer
from madeleine.text.pii import Action, PiiCategory, restore, scrub

MAX_STATEMENT_CHARS = 1000  # a card's statement is one sentence (``CardDraft.statement``)
EDITOR = "edit"  # the ``extractor`` of a card a person wrote


class FactEditor:
    """``checks(tx, user_id, now)`` runs the memory checks inside the edit's transaction."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        analyzer: Analyzer,
        pii_policy: Mapping[PiiCategory, Action],
        checks: Callable[[Transaction, str, float], None],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._analyzer = analyzer
        self._policy = pii_policy
        self._checks = checks
        self._clock = clock

    def edit(
        self, user_id: str, fact_id: str, statement: str, reason: str
    ) -> tuple[int, StoredFact]:
        """The new version's number, and the version it replaced. ItemNotFoundError when the
        user has no such fact; StaleVersionError when it is not the current version (edit the
        newest one)."""
        number = _number(fact_id)
        text = _statement(statement)
        facts = self._store.facts
        with self._store.transaction() as tx:
            facts.lock_user(tx, user_id)  # an indexer or another edit may supersede it too
            old = facts.fetch(tx, number)
            if old is None or old.card.user_id != user_id:
                raise ItemNotFoundError(f"user {user_id!r} has no fact {fact_id!r}")
            stale = old.card.status == "superseded"
            if not stale:
                new = self._replace(tx, user_id, old, text, reason)
        if stale:
            assert old is not None
            holding = [
                f.card.id
                for f in facts.read_current(user_id)
                if f.card.key == old.card.key
                and f.card.subject.casefold() == old.card.subject.casefold()
            ]
            now_holds = f"the current one is {', '.join(holding)}" if holding else "none holds now"
            raise StaleVersionError(
                f"{fact_id} was superseded: edit the current version of {old.card.key!r} "
                f"({now_holds})"
            )
        return new, old

    def _replace(
        self,
        tx: Transaction,
        user_id: str,
        old: StoredFact,
        text: str,
        reason: str,
    ) -> int:
        facts = self._store.facts
        said_before = restore(old.card.statement, self._store.vault.getter(tx, user_id))
        if " ".join(said_before.split()) == text:
            raise ValueError(f"the statement of {old.card.id} is unchanged: nothing to edit")
        put = self._store.vault.putter(tx, user_id)
        masked = scrub(text, self._policy, put).text
        reason = scrub(reason, self._policy, put).text  # kept in the routing log
        said = (text.casefold(), masked.casefold())
        card = old.card
        draft = CardDraft(
            statement=masked,
            category=card.category,
            subject=card.subject,
            relationship=card.relationship,
            backstory=card.backstory,
            # typed values the new statement no longer says would contradict it
            attributes=[a for a in card.attributes if any(a.value.casefold() in t for t in said)],
            key=card.key,
            multi_valued=card.multi_valued,
            memory_type=card.memory_type,
            stability=card.stability,
            importance=card.importance,
            confidence=1.0,
            valid_from=card.valid_from,
            valid_to=card.valid_to,
            sources=list(card.sources),
        )
        now = self._clock()
        vector = np.asarray(self._embedder.embed_passages([masked])[0], dtype=np.float32)
        terms = " ".join(self._analyzer.terms(masked))
        new = facts.insert(
            tx, user_id, draft, vector, terms, status="current", extractor=EDITOR, now=now
        )
        facts.correct(tx, old.number, new, now)  # the old statement never held
        facts.log(
            tx,
            user_id,
            "edited",
            new,
            old.number,
            {"reason": reason, "key": card.key, "by": "person"},
            now,
        )
        self._checks(tx, user_id, now)
        return new


def _number(fact_id: object) -> int:
    number = fact_number(fact_id)
    if number > MAX_ID:
        raise ItemNotFoundError(f"no fact {fact_id!r}")
    return number


def _statement(statement: object) -> str:
    if not isinstance(statement, str):
        raise TypeError(f"statement must be a str, got {type(statement).__name__}")
    text = " ".join(statement.split())
    if not text:
        raise ValueError("statement must not be empty")
    if len(text) > MAX_STATEMENT_CHARS:
        raise ValueError(
            f"statement must be at most {MAX_STATEMENT_CHARS} characters (one sentence), "
            f"got {len(text)}"
        )
    require_text(text, "statement")
    return text
