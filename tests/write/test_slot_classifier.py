"""The open-card slot classifier (facts/slot_classifier.py): an open card that clearly fills a
single-valued slot takes its key and supersedes the earlier card, whatever its phrasing; events,
visits, plans and other people's news do not. The sentences here are not in the examples file
(a test of generalisation, not of recall)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from madeleine import Memory
from madeleine.bench.slots import run_slots
from madeleine.embed.base import Embedder, Vectors
from madeleine.facts.cards import Category, MemoryType
from madeleine.facts.slot_classifier import (
    CLASSIFIED,
    OTHER,
    SlotClassifier,
    as_card_statement,
    load_examples,
    split,
)
from tests.fakes import HashingEmbedder

START = datetime(2024, 3, 1, 10, 0, tzinfo=UTC)


def _said(memory: Memory, user: str, *sentences: str) -> None:
    """Each sentence in its own session, two months apart."""
    for index, sentence in enumerate(sentences):
        when = START + timedelta(days=60 * index)
        memory.add(
            [{"role": "user", "content": sentence, "timestamp": when}],
            user_id=user,
            session_id=f"s{index}",
        )
    assert memory.wait()


def _current(memory: Memory, user: str, key: str) -> list[str]:
    return [c.statement for c in memory.facts(user) if c.key == key]


@pytest.mark.parametrize(
    ("before", "after", "key", "new_word"),
    [
        (
            "I live in Chicago.",
            "We sold the condo and settled down in Tucson for good.",
            "location.home",
            "Tucson",
        ),
        (
            "I work at Acme.",
            "These days I'm heading the platform group over at Shopify.",
            "work.employer",
            "Shopify",
        ),
        (
            "I'm vegetarian.",
            "Honestly I've gone totally dairy- and meat-free, fully vegan now.",
            "preference.diet",
            "vegan",
        ),
    ],
)
def test_a_change_in_words_no_rule_knows_supersedes_the_old_card(
    tmp_path: Path, embedder: Embedder, before: str, after: str, key: str, new_word: str
) -> None:
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        _said(memory, "u", before, after)
        current = _current(memory, "u", key)
        assert len(current) == 1 and new_word in current[0], current
        history = [c for c in memory.facts("u", include_history=True) if c.key == key]
        assert any(c.status == "superseded" for c in history)


@pytest.mark.parametrize(
    "unrelated",
    [
        "I spent a long weekend visiting museums in Boston.",
        "My cousin just bought a house in Tucson.",
        "We're relocating to Denver next month.",  # a plan: the home holds until it happens
    ],
)
def test_visits_other_people_and_plans_leave_the_home_card_current(
    tmp_path: Path, embedder: Embedder, unrelated: str
) -> None:
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        _said(memory, "u", "I live in Chicago.", unrelated)
        assert _current(memory, "u", "location.home") == ["The user lives in Chicago."]


def test_a_classified_card_keeps_its_own_words_not_the_old_cards_attributes(
    tmp_path: Path, embedder: Embedder
) -> None:
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        _said(memory, "u", "I live in Chicago.", "We ended up buying a farmhouse in Vermont.")
        (card,) = [c for c in memory.facts("u") if c.key == "location.home"]
        names = {a.name: a.value for a in card.attributes}
        assert "Vermont" in card.statement
        assert "city" not in names  # Chicago's city is not carried into the new card
        assert names[CLASSIFIED].startswith("home")
        assert card.category == Category.LOCATION and card.memory_type == MemoryType.SEMANTIC


def test_the_classifier_can_be_turned_off(tmp_path: Path, embedder: Embedder) -> None:
    with Memory(tmp_path / "m", embedder=embedder, fact_slot_classifier=False) as memory:
        _said(memory, "u", "I live in Chicago.", "We ended up buying a farmhouse in Vermont.")
        assert _current(memory, "u", "location.home") == ["The user lives in Chicago."]


def test_examples_load_split_and_reject_what_they_cannot_read(tmp_path: Path) -> None:
    examples = load_examples()
    assert {e.slot for e in examples} >= {"home", "employer", OTHER}
    training, held_out = split(examples)
    assert len(held_out) == pytest.approx(len(examples) / 4, abs=8)
    assert not {e.text for e in training} & {e.text for e in held_out}
    bad = tmp_path / "bad.tsv"
    bad.write_text("home\tI live here.\nplanet\tI live on Mars.\n", "utf-8")
    with pytest.raises(ValueError, match="line 2: unknown slot 'planet'"):
        load_examples(bad)
    bad.write_text("home I live here.\n", "utf-8")
    with pytest.raises(ValueError, match="line 1: expected"):
        load_examples(bad)


def test_a_classifier_needs_two_slots_and_is_fitted_only_when_used() -> None:
    embedder = HashingEmbedder()
    examples = [e for e in load_examples() if e.slot == "home"]
    with pytest.raises(ValueError, match="at least two slots"):
        SlotClassifier(embedder, examples)
    classifier = SlotClassifier(embedder, load_examples())
    assert classifier.guess(np.zeros((0, embedder.dim), np.float32)) == []
    vector = embedder.embed_passages([as_card_statement("I live in Lisbon now.")])
    (guess,) = classifier.guess(vector)
    assert guess.slot in classifier.slots and 0.0 < guess.probability <= 1.0


def test_korean_statements_are_compared_as_their_cards_say_them() -> None:
    assert as_card_statement("저는 부산에 살아요.").startswith("사용자는")
    assert as_card_statement("I moved to Lyon.") == "The user moved to Lyon."


def test_bench_slots_reports_both_splits_on_any_embedder() -> None:
    report = run_slots(HashingEmbedder(dim=256), load_examples())
    assert report.training + report.held_out == len(load_examples())
    for score in (report.cross_validated, report.held_out_chosen, report.held_out_configured):
        assert 0.0 <= score.accuracy <= 1.0
    assert "held out, chosen" in report.table()


class _Counting(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        self.calls += 1
        return super().embed_passages(texts)


def test_the_fitted_classifier_is_kept_for_the_next_process(tmp_path: Path) -> None:
    """A store's directory keeps the fitted model: the next process with the same embedder
    and examples embeds no example; other examples, another embedder or an unreadable file
    mean fitting again."""
    first = _Counting()
    fitted, precision = SlotClassifier(first, load_examples(), cache_dir=tmp_path)._fit()
    assert first.calls >= 1 and len(list(tmp_path.glob("slot-classifier-*.npz"))) == 1
    again = _Counting()
    kept, kept_precision = SlotClassifier(again, load_examples(), cache_dir=tmp_path)._fit()
    assert again.calls == 0 and kept_precision == precision
    assert np.array_equal(kept.weights, fitted.weights)
    SlotClassifier(again, load_examples()[:-1], cache_dir=tmp_path)._fit()
    assert again.calls >= 1
    for saved in tmp_path.glob("slot-classifier-*.npz"):
        saved.write_bytes(b"not a model")
    third = _Counting()
    SlotClassifier(third, load_examples(), cache_dir=tmp_path)._fit()
    assert third.calls >= 1


@pytest.mark.sqlite_only  # the embedded store's own files
def test_an_embedded_store_keeps_its_classifier_in_its_directory(tmp_path: Path) -> None:
    said = "We finally got out of Chicago and settled in Tucson."  # an open card: no rule
    # a dimension of its own: no other test of this process fitted this classifier yet
    with Memory(tmp_path / "m", embedder=HashingEmbedder(dim=72)) as memory:
        memory.add({"role": "user", "content": said}, user_id="u")
        assert memory.wait(timeout=60)
    assert list((tmp_path / "m" / "models").glob("slot-classifier-*.npz"))
