"""The resolver against the storage port: duplicate, conflict or new, with fake vectors.

No embedder: the similarity a decision depends on is set by the vectors themselves.
"""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import numpy.typing as npt
import pytest

from madeleine.facts.cards import CardDraft, Category
from madeleine.facts.contradiction import Verdict
from madeleine.store.ports import Store
from madeleine.write.resolve import Decision, Resolver

DIM = 8
NOW = 1_700_000_000.0


def _unit(seed: int) -> npt.NDArray[np.float32]:
    vector = np.random.default_rng(seed).normal(size=DIM).astype(np.float32)
    return vector / np.linalg.norm(vector)


def _similar(base: npt.NDArray[np.float32], cosine: float, seed: int) -> npt.NDArray[np.float32]:
    """A unit vector with the given cosine to ``base``."""
    other = _unit(seed)
    other = other - float(other @ base) * base
    other /= np.linalg.norm(other)
    mixed: npt.NDArray[np.float32] = (cosine * base + np.sqrt(1 - cosine**2) * other).astype(
        np.float32
    )
    return mixed


def _draft(
    statement: str,
    key: str,
    city: str,
    *,
    source: int,
    day: int,
    category: Category = Category.LOCATION,
) -> CardDraft:
    return CardDraft.model_validate(
        {
            "statement": statement,
            "category": category,
            "key": key,
            "attributes": [{"name": "city", "type": "place", "value": city}],
            "valid_from": datetime(2024, 1, day, tzinfo=UTC),
            "sources": [source],
        }
    )


def _resolve(
    store: Store,
    resolver: Resolver,
    draft: CardDraft,
    vector: npt.NDArray[np.float32],
    verdicts: dict[int, Verdict] | None = None,
) -> Decision:
    with store.transaction() as tx:
        (decision,) = resolver.resolve(
            tx,
            "u",
            [draft],
            vector[None, :],
            [draft.statement],
            "rules",
            NOW,
            None if verdicts is None else [verdicts],
            None if verdicts is None else "judge",
        )
    return decision


@pytest.fixture
def resolver(store: Store) -> Resolver:
    return Resolver(
        store.facts, duplicate_threshold=0.85, conflict_threshold=0.5, strategy="latest"
    )


def test_a_new_slot_is_a_new_fact(store: Store, resolver: Resolver) -> None:
    decision = _resolve(
        store,
        resolver,
        _draft("Lives in Seattle.", "location.home", "Seattle", source=1, day=1),
        _unit(1),
    )
    assert decision.decision == "added"
    assert [f.card.statement for f in store.facts.read_current("u")] == ["Lives in Seattle."]


def test_the_same_slot_and_value_is_a_duplicate_that_merges_sources(
    store: Store, resolver: Resolver
) -> None:
    vector = _unit(1)
    first = _resolve(
        store,
        resolver,
        _draft("Lives in Seattle.", "location.home", "Seattle", source=1, day=1),
        vector,
    )
    again = _resolve(
        store,
        resolver,
        _draft("I live in Seattle.", "location.home", "Seattle", source=2, day=2),
        _similar(vector, 0.6, 2),
    )
    assert again.decision == "duplicate" and again.fact_id == first.fact_id
    (current,) = store.facts.read_current("u")
    assert current.card.confidence > 0.7
    assert [d["decision"] for d in store.facts.routing_log("u")] == ["duplicate", "added"]


def test_the_same_slot_with_another_value_supersedes_by_event_time(
    store: Store, resolver: Resolver
) -> None:
    old = _resolve(
        store,
        resolver,
        _draft("Lives in Seattle.", "location.home", "Seattle", source=1, day=1),
        _unit(1),
    )
    new = _resolve(
        store,
        resolver,
        _draft("Moved to Portland.", "location.home", "Portland", source=2, day=9),
        _unit(2),
    )
    assert new.decision == "superseded" and new.other_id == old.fact_id
    (current,) = store.facts.read_current("u")
    assert current.card.statement == "Moved to Portland."
    chain = store.facts.chain(new.fact_id)
    assert [f.card.statement for f in chain] == ["Lives in Seattle.", "Moved to Portland."]
    assert chain[0].card.status == "superseded" and chain[0].card.valid_to == datetime(
        2024, 1, 9, tzinfo=UTC
    )


def test_a_late_arriving_older_statement_becomes_history(store: Store, resolver: Resolver) -> None:
    _resolve(
        store,
        resolver,
        _draft("Moved to Portland.", "location.home", "Portland", source=2, day=9),
        _unit(2),
    )
    late = _resolve(
        store,
        resolver,
        _draft("Lives in Seattle.", "location.home", "Seattle", source=1, day=1),
        _unit(1),
    )
    assert late.decision == "superseded_by_existing"
    (current,) = store.facts.read_current("u")
    assert current.card.statement == "Moved to Portland."


def test_a_multi_valued_slot_keeps_every_value(store: Store, resolver: Resolver) -> None:
    for source, city in enumerate(["Paris", "Rome"], start=1):
        draft = _draft(f"Likes {city}.", "preference.city", city, source=source, day=source)
        draft = draft.model_copy(update={"multi_valued": True, "category": Category.PREFERENCE})
        assert _resolve(store, resolver, draft, _unit(source)).decision == "added"
    assert len(store.facts.read_current("u")) == 2


def test_the_flag_strategy_keeps_both_and_flags_them(store: Store) -> None:
    flagging = Resolver(
        store.facts, duplicate_threshold=0.85, conflict_threshold=0.5, strategy="flag"
    )
    _resolve(
        store,
        flagging,
        _draft("Lives in Seattle.", "location.home", "Seattle", source=1, day=1),
        _unit(1),
    )
    decision = _resolve(
        store,
        flagging,
        _draft("Moved to Portland.", "location.home", "Portland", source=2, day=9),
        _unit(2),
    )
    assert decision.decision == "flagged"
    assert sorted(f.card.status for f in store.facts.read_current("u")) == ["flagged", "flagged"]


def test_a_judges_verdict_overrules_the_attribute_rule(store: Store, resolver: Resolver) -> None:
    vector = _unit(1)
    old = _resolve(
        store,
        resolver,
        _draft(
            "Works in Seattle.", "work.place", "Seattle", source=1, day=1, category=Category.WORK
        ),
        vector,
    )
    similar = _similar(vector, 0.7, 3)  # in the contradiction band
    draft = _draft(
        "Works in Portland.", "work.office", "Portland", source=2, day=5, category=Category.WORK
    )
    assert resolver.needs_judgment(draft, similar, store.facts.read_current("u"))
    compatible = Verdict(relation="compatible", reason="two offices")
    decision = _resolve(store, resolver, draft, similar, {old.fact_id: compatible})
    assert decision.decision == "added"
    assert len(store.facts.read_current("u")) == 2
