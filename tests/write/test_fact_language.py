"""Statements in the language the user spoke: Korean input gives Korean statements, English
input English ones, with the same keys and canonical attribute values either way."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from madeleine import Memory
from madeleine.embed.base import Embedder
from madeleine.facts.cards import CardDraft
from madeleine.facts.extract import ExtractInput
from madeleine.facts.rules import RuleExtractor
from madeleine.facts.rules.phrases import particle

NOW = datetime(2024, 9, 10, 10, 0, tzinfo=UTC)  # a Tuesday
_HANGUL = re.compile(r"[\uac00-\ud7a3]")


def say(text: str, project: str | None = None) -> dict[str, CardDraft]:
    drafts = RuleExtractor().extract([ExtractInput(1, "s", "user", None, text, NOW, project)])
    return {d.key: d for d in drafts}


@pytest.mark.parametrize(
    ("text", "key", "statement"),
    [
        (
            "9월 17일에 치과 예약이 있어요",
            "plan.appointment.dentist",
            "사용자는 2024-09-17에 치과 예약이 있다.",
        ),
        (
            "다음 달에 서울로 이사 가요",
            "plan.move.seoul",
            "사용자는 2024-10-01쯤 서울로 이사할 계획이다.",
        ),
        ("서울로 이사할 예정이에요", "plan.move.seoul", "사용자는 서울로 이사할 계획이다."),
        ("부산에 살아요", "location.home", "사용자는 부산에 산다."),
        ("강남구에 살고 있어요", "location.home_area", "사용자의 집은 서울 강남구에 있다."),
        ("카카오에서 개발자로 일해요", "work.role", "사용자는 카카오에서 개발자로 일한다."),
        ("카카오에서 개발자로 일해요", "work.employer", "사용자는 카카오에서 일한다."),
        ("네이버에 입사했어요", "work.employer", "사용자는 네이버에서 일한다."),
        ("회사를 그만뒀어요", "work.employer", "사용자는 회사를 그만두었다."),
        ("저는 간호사예요", "work.role", "사용자는 간호사로 일한다."),
        ("리스본 여행을 취소했어요", "plan.trip.lisbon", "사용자는 리스본 여행을 취소했다."),
        (
            "다음 주 금요일에 도쿄로 여행 가요",
            "plan.trip.tokyo",
            "사용자는 2024-09-20에 도쿄로 여행을 계획하고 있다.",
        ),
        ("저는 민수예요", "identity.name", "사용자의 이름은 민수다."),
        ("제 이름은 김서연이에요", "identity.name", "사용자의 이름은 김서연이다."),
        ("땅콩 알레르기가 있어요", "health.allergy", "사용자는 땅콩에 알레르기가 있다."),
        ("커피에서 녹차로 바꿨어요", "preference.drink", "사용자는 커피에서 녹차로 바꿨다."),
        ("커피를 끊었어요", "preference.avoid.커피", "사용자는 커피를 끊었다."),
        ("저는 김치를 좋아해요", "preference.like", "사용자는 김치를 좋아한다."),
        ("창가 좌석을 선호해요", "preference.seat", "사용자는 창가 좌석을 선호한다."),
        (
            "다음 주 화요일에 치과 가요",
            "plan.appointment.dentist",
            "사용자는 2024-09-17에 치과에 간다.",
        ),
        (
            "금요일에 면접이 잡혔어요",
            "plan.appointment.interview",
            "사용자는 2024-09-13에 면접이 있다.",
        ),
        (
            "내일 오후 3시에 병원 예약 있어요",
            "plan.appointment.doctor",
            "사용자는 2024-09-11 15:00에 병원 예약이 있다.",
        ),
        ("요즘 커피 대신 녹차를 마셔요", "preference.drink", "사용자는 커피에서 녹차로 바꿨다."),
        (
            "토스에서 백엔드 개발자로 일하고 있어요",
            "work.role",
            "사용자는 토스에서 백엔드 개발자로 일한다.",
        ),
        ("라인을 그만뒀어요", "work.employer", "사용자는 라인을 그만두었다."),
        ("제주도 여행이 취소됐어요", "plan.trip.jeju", "사용자는 제주도 여행을 취소했다."),
    ],
)
def test_korean_input_gives_korean_statements(text: str, key: str, statement: str) -> None:
    assert say(text)[key].statement == statement


def test_korean_relatives_are_named_in_korean() -> None:
    cards = say("제 딸 지수는 새우를 좋아해요")
    assert cards["relationship.daughter"].statement == "지수는 사용자의 딸이다."
    assert cards["preference.like"].statement == "지수는 새우를 좋아한다."


@pytest.mark.parametrize(
    ("text", "key", "statement"),
    [
        (
            "인증은 JWT로 하기로 했어요",
            "project.shop.decision.auth",
            "shop 프로젝트는 인증에 JWT를 쓰기로 했다.",
        ),
        (
            "프로덕션에서 Postgres 15를 써요",
            "project.shop.version.postgresql",
            "shop 프로젝트는 운영 환경에서 PostgreSQL 15를 쓴다.",
        ),
    ],
)
def test_korean_project_facts(text: str, key: str, statement: str) -> None:
    assert say(text, project="shop")[key].statement == statement


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("I have a dentist appointment on September 17", "plan.appointment.dentist"),
        ("I'm planning to move to Seoul next month", "plan.move.seoul"),
        ("Hi, I'm Alex", "identity.name"),
        ("I switched from coffee to green tea", "preference.drink"),
        ("I'm a backend engineer at Stripe", "work.role"),
    ],
)
def test_english_input_stays_english(text: str, key: str) -> None:
    statement = say(text)[key].statement
    assert statement.startswith("The user") and not _HANGUL.search(statement)


def test_both_languages_fill_the_same_keys_with_the_same_values() -> None:
    english = say("I'm planning to move to Seoul next month")["plan.move.seoul"]
    korean = say("다음 달에 서울로 이사 가요")["plan.move.seoul"]
    assert english.attributes == korean.attributes
    english_tea = say("I switched from coffee to green tea")["preference.drink"]
    assert english_tea.key == say("커피에서 녹차로 바꿨어요")["preference.drink"].key


@pytest.mark.parametrize(
    ("text", "absent"),
    [
        ("서울로 이사 갈까요?", "plan.move.seoul"),  # a question
        ("만약 서울로 이사 가면 좋겠어요", "plan.move.seoul"),  # a hypothetical
        ("저는 학생이에요", "identity.name"),
        ("저는 피곤해요", "identity.name"),
        ("작년에 서울로 이사했어요", "plan.move.seoul"),  # done, not planned
    ],
)
def test_korean_negatives(text: str, absent: str) -> None:
    assert absent not in say(text)


@pytest.mark.parametrize(
    ("word", "with_final", "without", "expected"),
    [
        ("예약", "이", "가", "예약이"),
        ("미팅", "이", "가", "미팅이"),
        ("회의", "이", "가", "회의가"),
        ("커피", "을", "를", "커피를"),
        ("JWT", "을", "를", "JWT를"),
        ("Postgres 16", "을", "를", "Postgres 16을"),
    ],
)
def test_particles_follow_the_last_syllable(
    word: str, with_final: str, without: str, expected: str
) -> None:
    assert particle(word, with_final, without) == expected


def test_korean_facts_are_stored_and_found_in_korean(tmp_path: Path, embedder: Embedder) -> None:
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        memory.add(
            {"role": "user", "content": "9월 17일에 치과 예약이 있어요", "id": "k1"},
            user_id="minsu",
            timestamp="2024-09-10T10:00:00Z",
        )
        memory.add(
            {"role": "user", "content": "다음 달에 서울로 이사 가요", "id": "k2"},
            user_id="minsu",
            session_id="s2",
            timestamp="2024-09-11T10:00:00Z",
        )
        memory.wait(timeout=120)
        cards = {c.key: c for c in memory.facts("minsu")}
        assert (
            cards["plan.appointment.dentist"].statement == "사용자는 2024-09-17에 치과 예약이 있다."
        )
        assert cards["plan.move.seoul"].statement.startswith("사용자는")
        hits = memory.search("언제 이사해요?", user_id="minsu", limit=3)
        assert any("이사" in hit.text for hit in hits)
