"""Open cards (facts/rules/disclosure.py): a first-person statement that no slot rule reads
still becomes a card, about the user, in the language spoken, with its time resolved; chatter,
questions, requests, hypotheticals and vaulted values do not."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from madeleine import Memory
from madeleine.facts.cards import CardDraft, MemoryType
from madeleine.facts.extract import ExtractInput
from madeleine.facts.rules import RuleExtractor
from tests.fakes import HashingEmbedder

NOW = datetime(2023, 5, 8, 13, 0, tzinfo=UTC)


def _drafts(text: str, open_cards: bool = True) -> list[CardDraft]:
    message = ExtractInput(1, "s1", "user", None, text, NOW)
    return RuleExtractor(open_cards=open_cards).extract([message])


def _notes(text: str) -> list[CardDraft]:
    return [d for d in _drafts(text) if d.key.startswith("note.")]


@pytest.mark.parametrize(
    ("said", "words"),
    [
        ("We finally got out of Chicago and settled in Tucson.", ["Tucson", "Chicago"]),
        ("I sold the Subaru, it's an e-bike for me now.", ["sold the Subaru", "e-bike"]),
        ("I'm fully gluten-free these days.", ["gluten-free"]),
        ("i volunteer at the animal shelter on weekends", ["volunteers", "shelter"]),
        ("저는 요즘 도자기 수업을 듣고 있어요.", ["사용자는", "도자기"]),
    ],
)
def test_a_statement_no_rule_reads_becomes_an_open_card_about_the_user(
    said: str, words: list[str]
) -> None:
    (card,) = _notes(said)
    for word in words:
        assert word in card.statement
    assert "I " not in card.statement and " my " not in card.statement
    assert card.multi_valued and card.subject == "user"
    assert card.sources == [1]
    predicate = {a.name: a.value for a in card.attributes}["predicate"]
    assert card.key == f"note.{predicate.replace('-', '_')}"


def test_its_time_is_resolved_and_makes_it_an_episode() -> None:
    (card,) = _notes("Thanks, Caroline! I adopted a puppy named Coco last week.")
    assert "(2023-05-01 to 2023-05-07)" in card.statement
    values = {a.name: a.value for a in card.attributes}
    assert values["when"] == "2023-05-01" and values["until"] == "2023-05-07"
    assert card.memory_type == MemoryType.EPISODIC
    assert card.valid_from is not None and card.valid_from.date().isoformat() == "2023-05-01"
    (korean,) = _notes("어제 친구랑 등산을 다녀왔어요.")
    assert "2023-05-07" in korean.statement
    (standing,) = _notes("I'm fully gluten-free these days.")
    assert standing.memory_type == MemoryType.SEMANTIC
    assert standing.valid_from == NOW  # said then: time ranges place it there


def test_one_message_makes_one_open_card_per_time_it_names() -> None:
    (card,) = _notes("I adopted a puppy last week! I named her Coco. We walk to the river daily.")
    assert card.statement.startswith("The user adopted a puppy last week (2023-05-01")
    assert "The user named her Coco." in card.statement
    assert "the river" in card.statement
    values = {a.name: a.value for a in card.attributes}
    assert values["predicate"] == "adopted" and values["when"] == "2023-05-01"
    assert {"coco", "river", "puppy"} <= set(values["object"].split())
    moved, starts = _notes("We settled in Tucson last year. Next month I start a new job there.")
    assert "(2022-01-01" in moved.statement and "(2023-06-01)" in starts.statement
    assert {a.name: a.value for a in starts.attributes}["tense"] == "future"
    # two messages are two cards
    messages = [
        ExtractInput(1, "s1", "user", None, "I volunteer at the animal shelter.", NOW),
        ExtractInput(2, "s1", "user", None, "I paint landscapes on weekends.", NOW),
    ]
    notes = [d for d in RuleExtractor().extract(messages) if d.key.startswith("note.")]
    assert [d.sources for d in notes] == [[1], [2]]


@pytest.mark.parametrize(
    "said",
    [
        "Sounds great!",
        "I'm so happy for you!",
        "I love that!",
        "Thanks so much, I really appreciate it.",
        "I think you would be a great mom.",
        "Did you go to the concert?",
        "Can you book me a table for two?",
        "If I moved to Paris I would learn French.",
        "my password is [pii:password]",
        "정말 좋네요!",
        "다음 주에 시간 있으세요?",
    ],
)
def test_chatter_questions_requests_hypotheticals_and_vaulted_values_make_none(
    said: str,
) -> None:
    assert _notes(said) == []


def test_a_slot_rule_s_card_wins_and_open_cards_are_off_unless_asked() -> None:
    drafts = _drafts("I'm vegetarian.")
    assert [d.key for d in drafts] == ["preference.diet"]
    assert _drafts("I sold the Subaru, it's an e-bike for me now.", open_cards=False) == []


def test_open_cards_reach_the_store_and_keep_to_a_search_s_time_range(tmp_path: Path) -> None:
    memory = Memory(
        tmp_path / "m", embedder=HashingEmbedder(), fact_open_cards=True, fact_slot_classifier=False
    )
    try:
        memory.add(
            [{"content": "I adopted a cat named Miso", "id": "old"}],
            user_id="u1",
            timestamp="2023-01-10T09:00:00",
        )
        memory.add(
            [{"content": "I adopted a dog named Bori", "id": "new"}],
            user_id="u1",
            timestamp="2024-06-01T09:00:00",
        )
        assert memory.wait(timeout=60)
        statements = sorted(c.statement for c in memory.facts("u1"))
        assert statements == [
            "The user adopted a cat named Miso.",
            "The user adopted a dog named Bori.",
        ]
        found = memory.search(
            "adopted a pet", user_id="u1", time_range=("2024-01-01T00:00:00", None)
        )
        assert found and {s for h in found for s in h.source_ids} == {"new"}
    finally:
        memory.close()


def test_an_open_card_beside_its_turn_is_folded_into_the_turns_hit(tmp_path: Path) -> None:
    """In search, an open card is its turn's own words: it does not take a second place next
    to that turn, but its id and statement ride on the turn's explain."""
    memory = Memory(
        tmp_path / "m", embedder=HashingEmbedder(), fact_open_cards=True, fact_slot_classifier=False
    )
    try:
        memory.add(
            [{"content": "I adopted a cat named Miso", "id": "cat"}],
            user_id="u1",
            timestamp="2023-01-10T09:00:00",
        )
        assert memory.wait(timeout=60)
        (card,) = memory.facts("u1")
        hits = memory.search("adopted a cat", user_id="u1", limit=5)
        assert [h.kind for h in hits] == ["turn"]
        assert hits[0].explain["open_card"] == {"id": card.id, "statement": card.statement}
        facts_only = memory.search("adopted a cat", user_id="u1", limit=5, channels=["facts"])
        assert [h.id for h in facts_only] == [card.id]  # no turn listed: the card stays
    finally:
        memory.close()


@pytest.mark.parametrize(
    "said",
    [
        "I volunteer at the animal shelter every Saturday.",
        "I go swimming on Mondays with my sister.",
        "I meditate daily before work.",
        "저는 매주 토요일 도자기 수업을 들어요.",
        "저는 주말마다 등산을 가요.",
    ],
)
def test_a_habit_is_not_dated(said: str) -> None:
    (card,) = _notes(said)
    assert "when" not in {a.name for a in card.attributes}
    assert "(20" not in card.statement and card.memory_type == MemoryType.SEMANTIC


def test_a_date_beside_a_habit_is_still_read() -> None:
    (card,) = _notes("I ran every day last week, it was brutal.")
    assert {a.name: a.value for a in card.attributes}["when"] == "2023-05-01"
