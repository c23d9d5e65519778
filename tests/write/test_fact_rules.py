"""The rule-based extractor: what it files, how it names it, and what it refuses to file."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from madeleine.facts.cards import Card, CardDraft, Category, MemoryType, Stability
from madeleine.facts.checks import passport_before_trip
from madeleine.facts.extract import ExtractInput
from madeleine.facts.rules import RuleExtractor, split_sentences

NOW = datetime(2025, 1, 8, 10, 0, tzinfo=UTC)  # a Wednesday
MISSION = (
    "Help me book a flight to Tokyo next Friday. I prefer window seats and I'm vegetarian. "
    "Also use my United MileagePlus number [pii:loyalty_number:v3k9q2m7xa]."
)


def say(*texts: str, role: str = "user", at: datetime = NOW) -> list[CardDraft]:
    window = [
        ExtractInput(
            event_id=i + 1, session_id="s", role=role, speaker=None, text=t, occurred_at=at
        )
        for i, t in enumerate(texts)
    ]
    return RuleExtractor().extract(window)


def slot_cards(text: str) -> list[CardDraft]:
    """What the slot rules file (open cards, tested in test_open_cards.py, left out)."""
    return [d for d in say(text) if not d.key.startswith("note.")]


def attrs(draft: CardDraft) -> dict[str, str]:
    return {a.name: a.value for a in draft.attributes}


def by_key(drafts: Sequence[CardDraft]) -> dict[str, CardDraft]:
    keys = [d.key for d in drafts]
    assert len(keys) == len(set(keys)), f"duplicate keys: {keys}"
    return {d.key: d for d in drafts}


def one(drafts: Sequence[CardDraft], key: str) -> CardDraft:
    found = [d for d in drafts if d.key == key]
    assert len(found) == 1, f"expected one {key}, got {[(d.key, attrs(d)) for d in drafts]}"
    return found[0]


# ------------------------------------------------------------------ the mission example


def test_mission_example_yields_exactly_seat_diet_loyalty_and_trip() -> None:
    cards = by_key(say(MISSION))
    assert set(cards) == {
        "preference.seat",
        "preference.diet",
        "account.loyalty.united_mileageplus",
        "plan.trip.tokyo",
    }
    assert attrs(cards["preference.seat"]) == {"seat": "window"}
    assert attrs(cards["preference.diet"]) == {"diet": "vegetarian"}
    assert attrs(cards["account.loyalty.united_mileageplus"]) == {
        "programme": "United MileagePlus",
        "number": "[pii:loyalty_number:v3k9q2m7xa]",  # the placeholder is kept as the value
    }
    trip = attrs(cards["plan.trip.tokyo"])
    assert trip == {
        "destination": "Tokyo",
        "start_date": "2025-01-10",  # the next Friday after Wednesday 8 January
        "travel_mode": "flight",
        "international": "true",
    }


def test_mission_cards_are_filed_with_types_weights_and_provenance() -> None:
    cards = by_key(say(MISSION))
    for draft in cards.values():
        assert draft.sources == [1]
        assert draft.subject == "user"
        assert draft.backstory == MISSION  # the message it was said in
        assert 0.7 <= draft.confidence <= 0.9
    trip, seat = cards["plan.trip.tokyo"], cards["preference.seat"]
    loyalty = cards["account.loyalty.united_mileageplus"]
    assert (trip.category, trip.memory_type, trip.stability) == (
        Category.PLAN,
        MemoryType.EPISODIC,
        Stability.VOLATILE,
    )
    assert (seat.category, seat.memory_type) == (Category.PREFERENCE, MemoryType.SEMANTIC)
    assert loyalty.category == Category.ACCOUNT and loyalty.importance >= 0.8
    assert next(a for a in loyalty.attributes if a.name == "number").type == "identifier"
    assert next(a for a in trip.attributes if a.name == "start_date").type == "date"
    assert trip.valid_from == NOW


def test_next_friday_is_the_first_friday_after_the_message() -> None:
    for day, expected in [(6, "2025-01-10"), (10, "2025-01-17"), (11, "2025-01-17")]:
        at = datetime(2025, 1, day, 9, tzinfo=UTC)
        trip = one(say("Book me a flight to Tokyo next Friday.", at=at), "plan.trip.tokyo")
        assert attrs(trip)["start_date"] == expected, day


def test_a_request_phrased_as_a_question_is_still_a_trip() -> None:
    drafts = say("Can you find me a flight to Tokyo next Friday? I prefer window seats.")
    assert {d.key for d in drafts} == {"plan.trip.tokyo", "preference.seat"}


# --------------------------------------------------------------- current truth, history


def test_moving_gives_the_same_key_a_new_city_from_the_move() -> None:
    earlier = NOW - timedelta(days=90)
    before = one(say("I live in Beijing.", at=earlier), "location.home")
    after = one(say("I moved to Shanghai.", at=NOW), "location.home")
    assert attrs(before) == {"city": "Beijing", "country": "China"}
    assert attrs(after) == {"city": "Shanghai", "country": "China"}
    assert before.valid_from == earlier and after.valid_from == NOW
    assert after.stability == Stability.VOLATILE and not after.multi_valued


def test_a_move_dated_in_the_sentence_holds_from_that_date() -> None:
    moved = one(say("We moved to Berlin last month."), "location.home")
    assert moved.valid_from == datetime(2024, 12, 1, tzinfo=UTC)


def test_both_states_of_one_window_are_kept_for_the_resolver() -> None:
    drafts = say("I live in Beijing.", "Actually I just moved to Shanghai!")
    homes = [(attrs(d)["city"], d.sources) for d in drafts if d.key == "location.home"]
    assert homes == [("Beijing", [1]), ("Shanghai", [2])]


# --------------------------------------------------------------------- documents, health


@pytest.mark.parametrize(
    ("text", "expires"),
    [
        ("My passport expires on 2025-02-15.", "2025-02-15"),
        ("my passport expires in February 2025", "2025-02-28"),  # month only: its last day
        ("My passport is valid until March 3, 2026", "2026-03-03"),
        ("passport expiration date: 15 Feb 2025", "2025-02-15"),
        ("여권 만료일은 2025년 2월 15일이에요", "2025-02-15"),
        ("여권이 2025년 2월에 만료돼요", "2025-02-28"),
        ("제 여권은 내년 2월에 만료돼요", "2026-02-28"),
    ],
)
def test_passport_expiry(text: str, expires: str) -> None:
    passport = one(say(text), "identity.passport")
    assert attrs(passport)["expires_on"] == expires
    assert passport.category == Category.IDENTITY and passport.stability == Stability.STABLE


def test_passport_number_and_expiry_of_one_window_make_one_card() -> None:
    passport = one(
        say("my passport number is [pii:passport:v0123456789]", "It expires 2026-05-01."),
        "identity.passport",
    )
    # "It expires" names no document: only the first message's number is filed
    assert attrs(passport) == {"number": "[pii:passport:v0123456789]"}
    both = one(
        say(
            "my passport number is [pii:passport:v0123456789]",
            "my passport expires on 2026-05-01",
        ),
        "identity.passport",
    )
    assert attrs(both) == {
        "number": "[pii:passport:v0123456789]",
        "expires_on": "2026-05-01",
    }
    assert both.sources == [1, 2]


def test_rule_cards_feed_the_passport_check() -> None:
    """The proof of the issue: a passport expiring a month after a January trip alerts."""
    at = datetime(2024, 11, 20, 9, tzinfo=UTC)
    drafts = say("I'm flying to Tokyo in January.", "My passport expires in February 2025.", at=at)
    cards = [
        Card(**d.model_dump(), id=f"f{i}", user_id="u", recorded_at=at)
        for i, d in enumerate(drafts)
    ]
    alerts = passport_before_trip(cards)
    assert len(alerts) == 1 and "2025-02-28" in alerts[0].message


def test_allergy_and_medication() -> None:
    drafts = say("I'm allergic to penicillin and I take amoxicillin 500mg twice a day.")
    allergy, medication = one(drafts, "health.allergy"), one(drafts, "health.medication")
    assert attrs(allergy) == {"allergen": "penicillin"}
    assert attrs(medication) == {"medication": "amoxicillin", "dose": "500mg twice a day"}
    assert allergy.category == Category.HEALTH and allergy.stability == Stability.STABLE
    assert allergy.multi_valued and allergy.importance >= 0.8


@pytest.mark.parametrize(
    ("text", "allergens"),
    [
        ("I have a severe peanut allergy.", ["peanut"]),
        ("Penicillin allergy.", ["penicillin"]),
        ("I'm allergic to shellfish, latex and bee stings", ["shellfish", "latex", "bee stings"]),
        ("I have an allergy to sulfa drugs", ["sulfa drugs"]),
        ("FYI allergic to cats", ["cats"]),
        ("I'm severely allergic to penicillin, please remember that.", ["penicillin"]),
        ("Allergic to peanuts please don't forget", ["peanuts"]),
        ("I'm allergic to latex, thanks for asking", ["latex"]),
        ("페니실린 알레르기가 있어요", ["페니실린"]),
        ("저는 땅콩에 알러지가 있어요", ["땅콩"]),
    ],
)
def test_allergy_paraphrases(text: str, allergens: list[str]) -> None:
    found = [attrs(d)["allergen"] for d in say(text) if d.key == "health.allergy"]
    assert found == allergens


@pytest.mark.parametrize(
    ("text", "medication", "dose"),
    [
        ("I'm on metformin 500 mg daily", "metformin", "500 mg daily"),
        ("I was prescribed ibuprofen", "ibuprofen", None),
        ("My doctor put me on lisinopril 10mg.", "lisinopril", "10mg"),
        ("I've been taking sertraline for a year", "sertraline", None),
        ("아목시실린 500mg 복용 중이에요", "아목시실린", "500mg"),
        ("혈압약을 매일 먹고 있어요", "혈압약", None),
    ],
)
def test_medication_paraphrases(text: str, medication: str, dose: str | None) -> None:
    found = attrs(one(say(text), "health.medication"))
    assert found.get("medication") == medication and found.get("dose") == dose


@pytest.mark.parametrize(
    ("text", "condition"),
    [
        ("I have asthma.", "asthma"),
        ("I was diagnosed with type 2 diabetes last year", "type 2 diabetes"),
        ("I'm diabetic", "diabetes"),
        ("I'm lactose intolerant", "lactose intolerance"),
        ("당뇨가 있어요", "당뇨"),
        ("천식 진단을 받았어요", "천식"),
    ],
)
def test_conditions(text: str, condition: str) -> None:
    assert attrs(one(say(text), "health.condition")) == {"condition": condition}


@pytest.mark.parametrize(
    "text",
    ["I take the bus to work", "I'm on my way", "I'm taking a break", "샐러드를 먹고 있어요"],
)
def test_everyday_verbs_are_not_medications(text: str) -> None:
    assert [d.key for d in say(text) if d.key.startswith("health")] == []


# ------------------------------------------------------------------------ relationships


@pytest.mark.parametrize(
    ("text", "relation", "name"),
    [
        ("my daughter Sarah started violin lessons", "daughter", "Sarah"),
        ("My wife, Emma, loves jazz.", "wife", "Emma"),
        ("Sarah is my daughter.", "daughter", "Sarah"),
        ("my daughter's name is Lily", "daughter", "Lily"),
        ("I have a son named Jake", "son", "Jake"),
        ("Meet my mom, Linda.", "mother", "Linda"),
        ("제 딸 지수가 학교에 갔어요", "daughter", "지수"),
        ("지수는 제 딸이에요", "daughter", "지수"),
        ("제 남편 이름은 민호예요", "husband", "민호"),
    ],
)
def test_relationships(text: str, relation: str, name: str) -> None:
    card = one(say(text), f"relationship.{relation}")
    assert (card.subject, card.relationship, attrs(card)) == (name, relation, {"name": name})
    assert card.multi_valued and card.category == Category.RELATIONSHIP


def test_facts_about_a_relative_name_the_relative() -> None:
    drafts = say("My daughter Sarah is allergic to peanuts.")
    allergy = one(drafts, "health.allergy")
    assert (allergy.subject, allergy.relationship) == ("Sarah", "daughter")
    assert attrs(allergy) == {"allergen": "peanuts"}
    assert one(drafts, "relationship.daughter").subject == "Sarah"


def test_a_name_from_earlier_in_the_window_is_resolved() -> None:
    drafts = say("my daughter Sarah started school", "Sarah is allergic to peanuts, and I hate it")
    allergy = one(drafts, "health.allergy")
    assert (allergy.subject, allergy.relationship, allergy.sources) == ("Sarah", "daughter", [2])
    # a name nobody introduced is not filed as a fact about anyone
    assert [d for d in say("Tom is allergic to cats") if d.key == "health.allergy"] == []


def test_korean_facts_about_a_relative() -> None:
    drafts = say("제 딸 지수가 땅콩 알레르기가 있어요. 지수는 딸기를 좋아해요.")
    allergy, like = one(drafts, "health.allergy"), one(drafts, "preference.like")
    assert (allergy.subject, allergy.relationship, attrs(allergy)) == (
        "지수",
        "daughter",
        {"allergen": "땅콩"},
    )
    assert (like.subject, attrs(like)) == ("지수", {"item": "딸기"})
    # "제 딸 땅콩 알레르기": 땅콩 is the allergen, not the daughter's name
    unnamed = say("제 딸 땅콩 알레르기가 있어요")
    assert [d.key for d in unnamed] == ["health.allergy"]
    assert (unnamed[0].subject, unnamed[0].relationship) == ("daughter", "daughter")


# ---------------------------------------------------------------------- preferences


@pytest.mark.parametrize(
    ("text", "seat"),
    [
        ("I prefer window seats", "window"),
        ("I'd prefer an aisle seat", "aisle"),
        ("Window seat please", "window"),
        ("I always sit by the window", "window"),
        ("my seat preference is aisle", "aisle"),
        ("창가 좌석을 선호해요", "window"),
        ("통로 쪽 자리가 좋아요", "aisle"),
        ("저는 비행기 탈 때 항상 창가 자리에 앉아요", "window"),
    ],
)
def test_seat_preferences(text: str, seat: str) -> None:
    assert attrs(one(say(text), "preference.seat")) == {"seat": seat}


@pytest.mark.parametrize(
    ("text", "diet"),
    [
        ("I'm vegetarian", "vegetarian"),
        ("I am vegan.", "vegan"),
        ("I eat halal", "halal"),
        ("I keep kosher", "kosher"),
        ("I'm a strict vegetarian", "vegetarian"),
        ("I'm on a keto diet", "keto"),
        ("I don't eat meat", "vegetarian"),
        ("I switched to a vegan diet", "vegan"),
        ("저는 채식주의자예요", "vegetarian"),
        ("비건이에요", "vegan"),
        ("할랄 음식만 먹어요", "halal"),
        ("고기를 안 먹어요", "vegetarian"),
    ],
)
def test_diets(text: str, diet: str) -> None:
    assert attrs(one(say(text), "preference.diet")) == {"diet": diet}


@pytest.mark.parametrize(
    ("text", "likes", "dislikes"),
    [
        ("I love hiking, swimming and reading", ["hiking", "swimming", "reading"], []),
        ("I really don't like onions or mushrooms", [], ["onions", "mushrooms"]),
        ("I'm a big fan of jazz but I hate country music", ["jazz"], ["country music"]),
        ("My favorite food is sushi", ["sushi"], []),
        ("My favorite drink is a flat white, as always.", ["flat white"], []),
        ("I love jazz, of course", ["jazz"], []),
        ("I'm not a fan of spicy food", [], ["spicy food"]),
        ("I like to travel", ["travel"], []),
        ("저는 커피를 좋아해요", ["커피"], []),
        ("매운 음식을 정말 좋아해요", ["매운 음식"], []),
        ("오이를 싫어해요", [], ["오이"]),
        ("커피를 안 좋아해요", [], ["커피"]),
    ],
)
def test_likes_and_dislikes(text: str, likes: list[str], dislikes: list[str]) -> None:
    drafts = say(text)
    assert [attrs(d)["item"] for d in drafts if d.key == "preference.like"] == likes
    assert [attrs(d)["item"] for d in drafts if d.key == "preference.dislike"] == dislikes
    assert all(d.multi_valued and d.importance < 0.5 for d in drafts)


def test_a_specific_match_is_not_also_a_like() -> None:
    assert [d.key for d in say("I love window seats")] == ["preference.seat"]


@pytest.mark.parametrize(
    "text",
    [
        "I'd like to book a table",
        "I like it",
        "I love you",
        "I like that idea",
        "I like how you explained it",
        "I love how it shows the togetherness and power you were talking about",
        "I love the way the frosting turned out!",
        "날씨가 좋아요",
        "그게 좋아요",
        "그 영화가 좋아요",
    ],
)
def test_polite_phrases_are_not_likes(text: str) -> None:
    assert say(text) == []


@pytest.mark.parametrize(
    ("text", "key", "value"),
    [
        ("I switched to T-Mobile", "preference.phone_carrier", "T-Mobile"),
        ("I switched from Verizon to T-Mobile last week", "preference.phone_carrier", "T-Mobile"),
        ("I changed my bank to Chase", "preference.bank", "Chase"),
        ("I switched to decaf", "preference.drink", "decaf"),
        ("I switched to a standing desk", "preference.switched_to", "standing desk"),
        ("통신사를 SKT로 바꿨어요", "preference.phone_carrier", "SKT"),
        ("카카오뱅크로 갈아탔어요", "preference.bank", "카카오뱅크"),
    ],
)
def test_switches(text: str, key: str, value: str) -> None:
    card = one(say(text), key)
    assert attrs(card)["value"] == value
    assert card.stability == Stability.VOLATILE and card.valid_from is not None


def test_a_rescheduled_flight_is_not_a_switch() -> None:
    assert slot_cards("I changed my flight to Friday") == []


def test_instructions_are_procedural() -> None:
    drafts = say("Please never book red-eye flights for me.")
    card = one(drafts, "habit.instruction")
    assert card.memory_type == MemoryType.PROCEDURAL
    assert attrs(card) == {"instruction": "never book red-eye flights for me"}
    korean = one(say("앞으로는 항상 통로 좌석으로 예약해 주세요"), "habit.instruction")
    assert korean.memory_type == MemoryType.PROCEDURAL


# ------------------------------------------------------------------ identifiers, contact


@pytest.mark.parametrize(
    ("text", "key", "expected"),
    [
        (
            "use my United MileagePlus number 12345678",
            "account.loyalty.united_mileageplus",
            {"programme": "United MileagePlus", "number": "12345678"},
        ),
        (
            "My Delta SkyMiles number is 9876543210",
            "account.loyalty.delta_skymiles",
            {"programme": "Delta SkyMiles", "number": "9876543210"},
        ),
        (
            "my frequent flyer number with Delta is 55554444",
            "account.loyalty.delta",
            {"programme": "Delta", "number": "55554444"},
        ),
        (
            "my checking account number is [pii:account_number:v1234567890]",
            "account.bank.checking",
            {"number": "[pii:account_number:v1234567890]"},
        ),
        (
            "my Chase savings account number is 998877665",
            "account.bank.savings",
            {"number": "998877665", "bank": "Chase"},
        ),
        ("the routing number is 021000021", "account.bank.routing", {"number": "021000021"}),
        (
            "신한은행 계좌번호는 110-123-456789예요",
            "account.bank.account",
            {"number": "110-123-456789", "bank": "신한은행"},
        ),
        (
            "대한항공 스카이패스 회원번호 12345678",
            "account.loyalty.korean_air_skypass",
            {"programme": "Korean Air SKYPASS", "number": "12345678"},
        ),
        (
            "my email is [pii:email:vabcdefghij]",
            "contact.email",
            {"value": "[pii:email:vabcdefghij]"},
        ),
        ("You can reach me at jane@example.com", "contact.email", {"value": "jane@example.com"}),
        (
            "my phone number is [pii:phone:v0123456789]",
            "contact.phone",
            {"value": "[pii:phone:v0123456789]"},
        ),
        (
            "제 이메일은 [pii:email:vabcdefghij]이에요",
            "contact.email",
            {"value": "[pii:email:vabcdefghij]"},
        ),
        (
            "[pii:phone:v0123456789]로 연락 주세요",
            "contact.phone",
            {"value": "[pii:phone:v0123456789]"},
        ),
    ],
)
def test_labelled_identifiers(text: str, key: str, expected: dict[str, str]) -> None:
    card = one(say(text), key)
    assert attrs(card) == expected
    assert card.category in (Category.ACCOUNT, Category.CONTACT)


@pytest.mark.parametrize(
    "text",
    [
        "my social security number is [pii:ssn]",
        "my password is [pii:password]",
        "my order number is 12345",
        "Order number 123456",
        "Employee ID 12345",
        "my confirmation number is ABC123",
    ],
)
def test_secrets_and_unlabelled_numbers_are_not_filed(text: str) -> None:
    assert say(text) == []


# ----------------------------------------------------------------------- plans


@pytest.mark.parametrize(
    ("text", "key", "title", "start"),
    [
        (
            "I have a dentist appointment on March 3 at 2pm",
            "plan.appointment.dentist",
            "dentist appointment",
            "2025-03-03T14:00:00+00:00",
        ),
        (
            "I've got a doctor's appointment tomorrow at 10:30 am",
            "plan.appointment.doctor",
            "doctor appointment",
            "2025-01-09T10:30:00+00:00",
        ),
        (
            "I have a job interview on the 14th at 11",
            "plan.appointment.job_interview",
            "job interview",
            "2025-01-14T11:00:00+00:00",
        ),
        (
            "My appointment with the dentist was moved to Friday at 9am",
            "plan.appointment.dentist",
            "appointment with dentist",
            "2025-01-10T09:00:00+00:00",
        ),
        (
            "I'm seeing the dermatologist next Tuesday",
            "plan.appointment.dermatologist",
            "dermatologist appointment",
            "2025-01-14",
        ),
        (
            "3월 3일 오후 2시에 치과 예약이 있어요",
            "plan.appointment.dentist",
            "치과 예약",
            "2025-03-03T14:00:00+00:00",
        ),
        (
            "내일 오후 3시에 회의가 있어요",
            "plan.appointment.meeting",
            "회의",
            "2025-01-09T15:00:00+00:00",
        ),
    ],
)
def test_appointments(text: str, key: str, title: str, start: str) -> None:
    card = one(say(text), key)
    assert attrs(card) == {"title": title, "start": start}
    assert card.memory_type == MemoryType.EPISODIC and card.category == Category.PLAN


def test_appointments_without_a_date_or_in_the_past_are_not_plans() -> None:
    assert slot_cards("I've got a doctor's appointment") == []
    assert slot_cards("I had a dentist appointment yesterday") == []


@pytest.mark.parametrize(
    ("text", "key", "expected"),
    [
        (
            "I'm flying to Tokyo in January",
            "plan.trip.tokyo",
            {
                "destination": "Tokyo",
                "start_date": "2025-01-08",
                "travel_mode": "flight",
                "international": "true",
            },
        ),
        (
            "I'm going to Paris from May 3 to May 10",
            "plan.trip.paris",
            {
                "destination": "Paris",
                "start_date": "2025-05-03",
                "end_date": "2025-05-10",
                "international": "true",
            },
        ),
        (
            "Could you book a hotel in Lisbon for May 3-7?",
            "plan.trip.lisbon",
            {
                "destination": "Lisbon",
                "start_date": "2025-05-03",
                "end_date": "2025-05-07",
                "international": "true",
            },
        ),
        (
            "다음 주 금요일에 도쿄 가는 비행기 예약해 줘",
            "plan.trip.tokyo",
            {
                "destination": "Tokyo",
                "start_date": "2025-01-17",
                "travel_mode": "flight",
                "international": "true",
            },
        ),
        (
            "5월 3일부터 10일까지 파리로 출장 가요",
            "plan.trip.paris",
            {
                "destination": "Paris",
                "start_date": "2025-05-03",
                "end_date": "2025-05-10",
                "international": "true",
            },
        ),
        (
            "부산 가는 기차표 예매해 줘",
            "plan.trip.busan",
            {"destination": "Busan", "travel_mode": "train", "international": "false"},
        ),
    ],
)
def test_trips(text: str, key: str, expected: dict[str, str]) -> None:
    assert attrs(one(say(text), key)) == expected


def test_a_trip_within_the_home_country_is_not_international() -> None:
    drafts = say("I live in Seattle.", "I'm driving to Chicago next week.")
    assert attrs(one(drafts, "plan.trip.chicago"))["international"] == "false"


# --------------------------------------------------------------------- work, location


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I work at Acme and I'm a nurse", {"work.employer": "Acme", "work.role": "nurse"}),
        (
            "I'm a software engineer at Google.",
            {"work.role": "software engineer", "work.employer": "Google"},
        ),
        (
            "I work as a data scientist for Netflix",
            {"work.role": "data scientist", "work.employer": "Netflix"},
        ),
        ("I just started a new job at Stripe", {"work.employer": "Stripe"}),
        ("삼성전자에서 일하고 있어요", {"work.employer": "삼성전자"}),
        ("저는 간호사예요", {"work.role": "간호사"}),
    ],
)
def test_work(text: str, expected: dict[str, str]) -> None:
    drafts = say(text)
    names = {"work.employer": "employer", "work.role": "role"}
    assert {d.key: attrs(d)[names[d.key]] for d in drafts} == expected


@pytest.mark.parametrize(
    ("text", "city"),
    [
        ("I'm from Chicago but I live in New York now", "New York"),
        ("I've just relocated to Berlin", "Berlin"),
        ("These days I'm based in London", "London"),
        ("서울에 살아요", "Seoul"),
        ("부산에서 서울로 이사했어요", "Seoul"),
        ("지난달에 부산으로 이사 왔어요", "Busan"),
        ("강남구에 살고 있어요", "Seoul"),  # a district refines its city
    ],
)
def test_home(text: str, city: str) -> None:
    assert attrs(one(say(text), "location.home"))["city"] == city


# ----------------------------------------------------------------- what is not a fact


@pytest.mark.parametrize(
    "text",
    [
        "do you prefer window seats?",
        "Should I move to Berlin?",
        "should I book a flight to Berlin?",
        "Is it worth being vegetarian?",
        "I don't live in Paris anymore",
        "I used to live in London",
        "I'm thinking about moving to Lisbon",
        "If I were vegetarian I'd eat more beans",
        "I'm not vegetarian",
        "I'm not allergic to anything",
        "I'm going to buy a car",
        "I'm going to Costco tomorrow",
        "I want to go to Paris someday",
        "ok, book that one in the morning",
        "서울에 살지 않아요",
        "서울에 살았어요",
        "서울로 이사할까 고민 중이에요",
        "저는 채식주의자가 아니에요",
        "알레르기는 없어요",
        "창가 좌석을 선호하시나요?",
        "도쿄에 갈까?",
        "제 딸 친구가 놀러 왔어요",
        "회사에 다녀요",
    ],
)
def test_questions_hypotheticals_and_negations_fill_no_slot(text: str) -> None:
    assert slot_cards(text) == []


def test_tag_questions_and_requests_to_remember_still_tell() -> None:
    assert attrs(one(say("I'm vegan, right?"), "preference.diet")) == {"diet": "vegan"}
    remembered = say("Can you remember that I'm allergic to penicillin?")
    assert attrs(one(remembered, "health.allergy")) == {"allergen": "penicillin"}
    assert say("Do you think I'm allergic to penicillin?") == []


@pytest.mark.parametrize(
    "text",
    [
        "My mom thinks I'm vegetarian",
        "I snapped that pic on my trip to the Smoky Mountains last year.",
        "I went to a castle during my trip to the UK last Friday!",
        "Never give up!",
        "I need tickets to Hamilton next week",
        "Tom said he lives in Paris",
    ],
)
def test_claims_of_others_and_non_trips_fill_no_slot(text: str) -> None:
    assert slot_cards(text) == []


def test_what_the_assistant_or_a_tool_says_is_not_a_user_fact() -> None:
    assert say(MISSION, role="assistant") == []
    assert say("My passport expires on 2025-02-15.", role="tool") == []
    window = [
        ExtractInput(1, "s", "assistant", None, "I found a flight to Tokyo next Friday.", NOW),
        ExtractInput(2, "s", "user", "Mina", "ok, book that one", NOW),
        ExtractInput(3, "s", "user", "Mina", "I prefer window seats.", NOW),
    ]
    drafts = RuleExtractor().extract(window)
    assert [(d.key, d.sources) for d in drafts] == [("preference.seat", [3])]


def test_hedged_statements_have_lower_confidence() -> None:
    sure = one(say("I'm allergic to shellfish"), "health.allergy")
    hedged = one(say("I think I'm allergic to shellfish"), "health.allergy")
    korean = one(say("아마 땅콩 알레르기가 있는 것 같아요"), "health.allergy")
    assert hedged.confidence < sure.confidence and korean.confidence < sure.confidence
    assert attrs(korean) == {"allergen": "땅콩"}


def test_repeated_facts_merge_their_sources() -> None:
    drafts = say("I'm vegetarian.", "As I said, I'm vegetarian!")
    diet = one(drafts, "preference.diet")
    assert diet.sources == [1, 2] and diet.valid_from == NOW


# -------------------------------------------------------------------------- robustness


def test_long_backstories_are_clipped_to_the_sentence() -> None:
    filler = "We talked about many things that day. " * 20
    drafts = say(filler + "I'm allergic to latex. " + filler)
    backstory = one(drafts, "health.allergy").backstory
    assert backstory == "I'm allergic to latex."


def test_sentences_split_on_punctuation_but_not_on_titles() -> None:
    assert split_sentences("I saw Dr. Kim today. It went well!  다음 주에 봐요.") == [
        "I saw Dr. Kim today.",
        "It went well!",
        "다음 주에 봐요.",
    ]


def test_every_draft_is_a_valid_card_draft() -> None:
    texts = [
        MISSION,
        "My daughter Sarah is allergic to peanuts and my wife Emma is vegan.",
        "제 딸 지수가 땅콩 알레르기가 있어요. 서울로 이사했어요. 창가 좌석을 선호해요.",
    ]
    for draft in say(*texts):
        assert CardDraft.model_validate_json(draft.model_dump_json()) == draft
        assert draft.key.split(".")[0] == draft.category.value or draft.key.startswith("habit.")


def test_pasted_text_is_read_in_bounded_time() -> None:
    started = time.perf_counter()
    say("가" * 50_000, "I love " + "Abc " * 10_000, "my daughter Sarah. " * 2_000)
    assert time.perf_counter() - started < 10
