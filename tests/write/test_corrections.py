"""Corrections and successions (issue 14): "Actually it's Tuesday, not Monday" makes a new
version of what it corrects; a new manager ends the old one; a new language being learned
replaces the old one."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from madeleine import Memory
from madeleine.embed.base import Embedder
from madeleine.facts.cards import Card
from madeleine.facts.corrections import corrections_in, mentions
from madeleine.facts.extract import ExtractInput
from tests.write.telling import tell

NOW = datetime(2024, 3, 6, 19, 0, tzinfo=UTC)


def _pairs(text: str) -> list[tuple[str, str]]:
    message = ExtractInput(1, "s", "user", None, text, NOW)
    return [(c.old, c.new) for c in corrections_in(message)]


@pytest.mark.parametrize(
    ("text", "pairs"),
    [
        (
            "Oops, I looked at the card again. Actually it's Tuesday, not Monday.",
            [("Monday", "Tuesday")],
        ),
        (
            "Correction: the test came back and it's tree nuts, not peanuts. Fine after all!",
            [("peanuts", "tree nuts")],
        ),
        ("Sorry, I meant not Monday but Tuesday.", [("Monday", "Tuesday")]),
        ("정정할게요. 검사해 보니 땅콩이 아니라 복숭아 알레르기래요.", [("땅콩", "복숭아")]),
        ("아 정정할게요. 회식 금요일이에요, 목요일 아니고요.", [("목요일", "금요일")]),
    ],
)
def test_corrections_are_read(text: str, pairs: list[tuple[str, str]]) -> None:
    assert _pairs(text) == pairs


@pytest.mark.parametrize(
    "text",
    [
        "I'm a nurse, not a doctor.",  # no correction cue: a contrast, not a correction
        "It's Tuesday, not Monday.",
        "Actually it is not that bad.",  # "not" without a value pair
        "땅콩이 아니라 복숭아 알레르기래요.",
    ],
)
def test_contrasts_without_a_cue_correct_nothing(text: str) -> None:
    assert _pairs(text) == []


def test_an_assistant_never_corrects_the_user() -> None:
    message = ExtractInput(1, "s", "assistant", None, "Actually it's Tuesday, not Monday.", NOW)
    assert corrections_in(message) == []


def test_values_are_matched_as_words() -> None:
    assert mentions("on Monday at 3pm", "monday")
    assert not mentions("Mondays are long", "Monday")
    assert mentions("땅콩이 들어간", "땅콩") and not mentions("볶은땅콩", "땅콩")


# --------------------------------------------------------------- end to end


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[Memory]:
    with Memory(tmp_path_factory.mktemp("corrections") / "m", embedder=embedder) as opened:
        yield opened


def _values(cards: list[Card], key: str, name: str) -> list[str]:
    return [a.value for c in cards if c.key == key for a in c.attributes if a.name == name]


def test_a_correction_supersedes_what_it_corrects(memory: Memory) -> None:
    tell(
        memory,
        "dentist",
        ("2024-03-04T10:00:00Z", "Remind me that my dentist appointment is on Monday at 3pm."),
    )
    tell(
        memory,
        "dentist",
        (
            "2024-03-06T19:00:00Z",
            "Oops, I looked at the card again. Actually it's Tuesday, not Monday.",
        ),
    )
    current = memory.facts("dentist")
    starts = _values(current, "plan.appointment.dentist", "start")
    assert len(starts) == 1 and starts[0].startswith("2024-03-12T15:00")  # the next Tuesday
    (card,) = [c for c in current if c.key == "plan.appointment.dentist"]
    history = memory.history(card.id, user_id="dentist")
    assert [_values([c], "plan.appointment.dentist", "start")[0][:10] for c in history] == [
        "2024-03-11",
        "2024-03-12",
    ]
    assert "Tuesday, not Monday" in (history[-1].backstory or "")
    then = memory.facts("dentist", as_of="2024-03-05")
    assert _values(then, "plan.appointment.dentist", "start")[0].startswith("2024-03-11")


def test_a_correction_of_one_of_many_values_ends_only_that_one(memory: Memory) -> None:
    tell(
        memory,
        "allergy",
        ("2024-01-04T10:00:00Z", "I'm allergic to shellfish."),
        ("2024-01-05T10:00:00Z", "Please remember that I'm allergic to peanuts."),
    )
    tell(
        memory,
        "allergy",
        ("2024-02-01T10:00:00Z", "Correction: the test came back and it's tree nuts, not peanuts."),
    )
    allergens = sorted(_values(memory.facts("allergy"), "health.allergy", "allergen"))
    assert allergens == ["shellfish", "tree nuts"]


def test_a_correction_in_the_same_batch_and_in_korean(memory: Memory) -> None:
    tell(
        memory,
        "taemin",
        ("2024-01-04T10:00:00Z", "저 땅콩 알레르기 있는 거 꼭 기억해 주세요."),
        ("2024-01-09T10:00:00Z", "정정할게요. 검사해 보니 땅콩이 아니라 복숭아 알레르기래요."),
        wait=False,
    )
    memory.wait(timeout=120)
    assert _values(memory.facts("taemin"), "health.allergy", "allergen") == ["복숭아"]
    every = memory.facts("taemin", include_history=True)
    assert sorted(_values(every, "health.allergy", "allergen")) == ["땅콩", "복숭아"]


def test_a_correction_with_nothing_to_correct_adds_nothing(memory: Memory) -> None:
    tell(memory, "nothing", ("2024-01-04T10:00:00Z", "Actually it's Tuesday, not Monday."))
    assert memory.facts("nothing") == []


def test_a_new_manager_ends_the_old_one(memory: Memory) -> None:
    tell(
        memory,
        "boss",
        ("2023-10-05T16:00:00Z", "My manager Linda wants the quarterly report by Friday."),
        ("2023-11-05T16:00:00Z", "My sister Anna is visiting."),
    )
    tell(
        memory,
        "boss",
        ("2024-01-22T10:00:00Z", "Linda left the company, and my new boss is Raj."),
    )
    current = memory.facts("boss")
    assert _values(current, "relationship.manager", "name") == ["Raj"]
    assert _values(current, "relationship.sister", "name") == ["Anna"]
    then = memory.facts("boss", as_of="2023-12-01")
    assert _values(then, "relationship.manager", "name") == ["Linda"]
    tell(memory, "lead", ("2024-01-02T10:00:00Z", "우리 팀장님이 김 부장님인데, 보고서 내래요."))
    tell(
        memory,
        "lead",
        ("2024-03-02T10:00:00Z", "김 부장님 퇴사하셨어요. 새 팀장은 박지훈 팀장님이에요."),
    )
    assert _values(memory.facts("lead"), "relationship.manager", "name") == ["박지훈"]


def test_the_language_being_learned_changes(memory: Memory) -> None:
    tell(memory, "lang", ("2023-10-01T10:00:00Z", "I'm learning Spanish on Duolingo!"))
    tell(
        memory,
        "lang",
        ("2024-03-03T10:00:00Z", "I dropped Spanish, so I'm studying Japanese now."),
    )
    assert _values(memory.facts("lang"), "education.language", "language") == ["Japanese"]
    tell(memory, "eoneo", ("2023-10-01T10:00:00Z", "요즘 일본어 공부해요."))
    tell(
        memory, "eoneo", ("2024-03-03T10:00:00Z", "일본어는 잠깐 쉬고 스페인어 배우기 시작했어요.")
    )
    current = memory.facts("eoneo")
    assert _values(current, "education.language", "language") == ["스페인어"]
    assert current[0].statement == "사용자는 스페인어를 배우고 있다."


def test_a_correction_of_what_no_slot_holds_versions_the_sentence(
    tmp_path: Path, embedder: Embedder
) -> None:
    """Without open cards no card holds the sentence: the correction versions the sentence
    itself; with them (the default) it versions the open card. Either way one current card
    says Friday and its history says Thursday."""
    for open_cards in (False, True):
        with Memory(
            tmp_path / f"m{open_cards}", embedder=embedder, fact_open_cards=open_cards
        ) as memory:
            _landlord_corrected(memory, open_cards)


def _landlord_corrected(memory: Memory, open_cards: bool) -> None:
    tell(memory, "tom", ("2024-02-05T10:00:00Z", "The meeting with my landlord is on Thursday."))
    before = memory.facts("tom")
    assert [c.statement for c in before] == (
        ["The meeting with the user's landlord is on Thursday (2024-02-08)."] if open_cards else []
    )
    tell(memory, "tom", ("2024-02-07T09:00:00Z", "Sorry, I misread: it's Friday, not Thursday."))
    current = memory.facts("tom")
    assert len(current) == 1 and "landlord is on Friday" in current[0].statement
    history = memory.history(current[0].id, user_id="tom")
    assert "on Thursday" in history[0].statement and history[0].status == "superseded"
    hits = memory.search("When do I meet the landlord?", user_id="tom", limit=3)
    turns = [h for h in hits if h.kind == "turn"]
    assert "Friday" in turns[0].text
