"""The forgetting curves, spaced reinforcement and protections, without a store."""

from __future__ import annotations

import numpy as np
import pytest

from madeleine.config import LifecycleSettings
from madeleine.maintain.strength import DAY, Curve, ItemFacts, StrengthModel
from madeleine.store.records import ItemState

T0 = 1_700_000_000.0


def model(**overrides: object) -> StrengthModel:
    return StrengthModel(LifecycleSettings(**overrides))  # type: ignore[arg-type]


def turn(timestamp: float = T0, **extra: object) -> ItemFacts:
    return ItemFacts(item="ep_1", kind="turn", timestamp=timestamp, **extra)  # type: ignore[arg-type]


def card(category: str = "preference", stability: str = "volatile", **extra: object) -> ItemFacts:
    return ItemFacts(
        item="fact_1",
        kind="fact",
        timestamp=T0,
        category=category,
        stability=stability,
        key=f"{category}.x",
        **extra,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    ("spec", "at_half_life", "at_double"),
    [("exponential:10", 0.5, 0.25), ("linear:10", 0.5, 0.0), ("none", 1.0, 1.0)],
)
def test_each_curve_has_its_shape(spec: str, at_half_life: float, at_double: float) -> None:
    curve = Curve.parse(spec)
    ages = np.array([0.0, 10.0, 20.0])
    got = curve.retention(ages, np.ones(3))
    assert got == pytest.approx([1.0, at_half_life, at_double])


def test_curves_are_chosen_per_memory_type() -> None:
    m = model(curves={"turn": "linear:30", "fact.plan": "exponential:7", "fact.volatile": "none"})
    assert m.curve(turn()).describe() == "linear:30"
    assert m.curve(card("plan")).describe() == "exponential:7"  # category before stability
    assert m.curve(card("preference")).describe() == "none"
    assert m.curve(ItemFacts(item="ep_2", kind="event", timestamp=T0)).shape == "none"


def test_a_bad_curve_is_refused_with_the_reason() -> None:
    with pytest.raises(ValueError, match="shape must be one of"):
        LifecycleSettings(curves={"turn": "cubic:3"})
    with pytest.raises(ValueError, match="positive half-life"):
        LifecycleSettings(curves={"turn": "exponential:-1"})


def test_stable_facts_never_fade_and_volatile_ones_do() -> None:
    m = model()
    years_later = T0 + 3 * 365 * DAY
    assert m.strength(card("identity", "stable"), None, years_later).value == 1.0
    assert m.strength(card("preference", "stable"), None, years_later).protected == "curve:none"
    volatile = m.strength(card("preference", "volatile"), None, T0 + 120 * DAY)
    assert volatile.value == pytest.approx(0.5) and volatile.protected is None


def test_importance_pins_and_exemptions_protect() -> None:
    m = model(exempt_keys=["account."])
    late = T0 + 2000 * DAY
    assert m.strength(turn(), ItemState("ep_1", importance=0.9), late).protected == "importance"
    assert m.strength(turn(pinned=True), None, late).protected == "pinned"
    # the caller's unpin wins over the record's pin
    assert m.strength(turn(pinned=True), ItemState("ep_1", pinned=False), late).value < 0.1
    assert m.strength(card("health"), None, late).protected == "category:health"
    assert m.strength(card("account"), None, late).protected == "key:account.x"
    assert m.strength(turn(), None, late).value < 0.1


def test_a_recall_is_spaced_the_same_minute_adds_almost_nothing() -> None:
    m = model(curves={"turn": "exponential:10"})
    after_ten_days = m.reinforced(turn(), None, T0 + 10 * DAY)
    assert after_ten_days.recalls == 1
    assert after_ten_days.stability == pytest.approx(1.5)  # recalled at half strength
    again = m.reinforced(turn(), after_ten_days, T0 + 10 * DAY + 60)
    assert again.recalls == 2
    assert again.stability == pytest.approx(after_ten_days.stability, rel=1e-3)
    # the reinforced item fades from its last recall, and more slowly
    later = T0 + 25 * DAY
    assert m.strength(turn(), again, later).value > m.strength(turn(), None, later).value


def test_clock_skew_never_makes_an_item_older_nor_moves_a_recall_back() -> None:
    m = model(curves={"turn": "exponential:10"})
    future = turn(T0 + 5 * DAY)  # written by a client whose clock runs ahead
    assert m.strength(future, None, T0).value == 1.0
    recalled = m.reinforced(turn(), None, T0 + 10 * DAY)
    earlier = m.reinforced(turn(), recalled, T0 + 2 * DAY)  # a late report from a slow clock
    assert earlier.last_recall == recalled.last_recall


def test_explain_says_why() -> None:
    m = model()
    entry = m.strength(turn(), ItemState("ep_1", recalls=2, stability=2.0), T0 + 10 * DAY)
    explained = entry.explain(0.8)
    assert explained["curve"] == "exponential:365" and explained["recalls"] == 2
    assert explained["factor"] == pytest.approx(0.8 + 0.2 * entry.value, abs=1e-6)
