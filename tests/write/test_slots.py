"""Right slots (issue 14): which keys a statement fills, and what each new card supersedes —
role and employer, city and neighbourhood, plans and their cancellation, preference
switches, introductions, project facts of imported coding sessions."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from madeleine import Memory
from madeleine.embed.base import Embedder
from madeleine.facts.cards import Attribute, Card, CardDraft, Category
from madeleine.facts.extract import ExtractInput
from madeleine.facts.rules import RuleExtractor
from madeleine.facts.slots import closes_other_value, independent, makes_stale
from tests.write.telling import tell

NOW = datetime(2024, 9, 10, 10, 0, tzinfo=UTC)  # a Tuesday


def say(*texts: str, project: str | None = None) -> list[CardDraft]:
    window = [
        ExtractInput(i + 1, "s", "user", None, text, NOW, project) for i, text in enumerate(texts)
    ]
    return RuleExtractor().extract(window)


def keyed(drafts: Sequence[CardDraft]) -> dict[str, dict[str, str]]:
    return {d.key: {a.name: a.value for a in d.attributes} for d in drafts}


# ------------------------------------------------------------------- what is filed


@pytest.mark.parametrize(
    ("text", "role", "employer"),
    [
        ("I'm a backend engineer at Stripe.", "backend engineer", "Stripe"),
        ("I work as a backend engineer at Stripe", "backend engineer", "Stripe"),
        ("I joined Google as a PM.", "PM", "Google"),
        ("I just joined Shopify as a senior data scientist", "senior data scientist", "Shopify"),
        ("I'm a nurse at Mercy Hospital", "nurse", "Mercy Hospital"),
        ("카카오에서 개발자로 일해요", "개발자", "카카오"),
        ("삼성에서 PM으로 일하고 있어요", "PM", "삼성"),
        ("I work at Stripe as a backend engineer", "backend engineer", "Stripe"),
        ("I started a new job at Airbnb as a product designer", "product designer", "Airbnb"),
        ("토스에서 백엔드 개발자로 일하고 있어요", "백엔드 개발자", "토스"),
    ],
)
def test_role_and_employer_are_two_slots(text: str, role: str, employer: str) -> None:
    cards = keyed(say(text))
    assert cards["work.role"]["role"] == role
    assert cards["work.role"]["employer"] == employer  # the role knows where it is held
    assert cards["work.employer"] == {"employer": employer}
    assert independent("work.role", "work.employer")


@pytest.mark.parametrize(
    ("text", "employer"),
    [
        ("I left my job at Stripe.", "Stripe"),
        ("I quit Stripe last month", "Stripe"),
        ("I was laid off from Meta", "Meta"),
        ("I quit my job", None),
        ("회사를 그만뒀어요", None),
        ("네이버를 퇴사했어요", "네이버"),
        ("I'm no longer at Stripe", "Stripe"),
        ("I don't work at Stripe anymore", "Stripe"),
        ("I resigned from Netflix", "Netflix"),
    ],
)
def test_leaving_a_job_closes_the_employer(text: str, employer: str | None) -> None:
    card = keyed(say(text))["work.employer"]
    assert card["status"] == "left"
    assert card.get("employer") == employer


@pytest.mark.parametrize(
    ("text", "area", "city"),
    [
        ("My new apartment is in Pudong.", "Pudong", "Shanghai"),
        ("I live in Brooklyn", "Brooklyn", "New York"),
        ("my flat is in Kreuzberg", "Kreuzberg", "Berlin"),
        ("I live in the Mission district", "Mission", None),
        ("We just moved into a new apartment in Gangnam", "Gangnam", "Seoul"),
        ("I moved to Pudong", "Pudong", "Shanghai"),
        ("My new place is in Jing'an", "Jing'an", "Shanghai"),
        ("마포구 연남동에 살아요", "연남동", "Seoul"),
        ("강남구에 살고 있어요", "강남구", "Seoul"),
    ],
)
def test_a_neighbourhood_is_its_own_slot(text: str, area: str, city: str | None) -> None:
    cards = keyed(say(text))
    assert cards["location.home_area"]["area"] == area
    assert cards["location.home_area"].get("city") == city
    if city is not None:
        assert cards["location.home"]["city"] == city  # consistent with the city, not a move


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("I'm planning to move to Seoul next month", "plan.move.seoul"),
        ("We're moving to Berlin in June", "plan.move.berlin"),
        ("I'm going to relocate to Lisbon", "plan.move.lisbon"),
        ("I'm planning a move to Seoul", "plan.move.seoul"),
        ("내년 봄에 도쿄로 이사할 계획이에요", "plan.move.tokyo"),
        ("다음 달에 서울로 이사 가요", "plan.move.seoul"),
        ("내년에 부산으로 이사할 예정이에요", "plan.move.busan"),
    ],
)
def test_planned_moves(text: str, key: str) -> None:
    cards = keyed(say(text))
    assert cards[key]["status"] == "planned"
    assert "location.home" not in cards  # the home changes when the move happens


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("We cancelled the trip to Lisbon.", "plan.trip.lisbon"),
        ("I called off my trip to Tokyo", "plan.trip.tokyo"),
        ("we canceled the Lisbon trip", "plan.trip.lisbon"),
        ("I cancelled my dentist appointment", "plan.appointment.dentist"),
        ("My move to Seoul was cancelled", "plan.move.seoul"),
        ("리스본 여행을 취소했어요", "plan.trip.lisbon"),
        ("치과 예약을 취소했어요", "plan.appointment.dentist"),
        ("Our trip to Paris got cancelled", "plan.trip.paris"),
        ("We had to cancel our flight to Rome", "plan.trip.rome"),
        ("제주도 여행이 취소됐어요", "plan.trip.jeju"),
        ("I cancelled my appointment with the dentist", "plan.appointment.dentist"),
        ("I cancelled my meeting with Dr. Park", "plan.appointment.meeting_dr_park"),
        ("리스본 여행 계획을 취소했어요", "plan.trip.lisbon"),
        ("We cancelled the move to Seoul", "plan.move.seoul"),
    ],
)
def test_cancellations_name_the_plan_they_close(text: str, key: str) -> None:
    cards = keyed(say(text))
    assert cards[key]["status"] == "cancelled"
    assert len(cards) == 1  # not also a planned trip


def test_cancelling_something_else_keeps_the_plan() -> None:
    cards = keyed(say("I'm flying to Tokyo next week but cancelled the hotel"))
    assert "status" not in cards["plan.trip.tokyo"]


@pytest.mark.parametrize(
    ("text", "key", "value", "previous"),
    [
        ("I switched from coffee to green tea", "preference.drink", "green tea", "coffee"),
        ("I've switched from coffee to matcha recently", "preference.drink", "matcha", "coffee"),
        ("I changed from Chrome to Firefox", "preference.browser", "Firefox", "Chrome"),
        ("커피에서 녹차로 바꿨어요", "preference.drink", "녹차", "커피"),
        (
            "I now drink oat milk instead of regular milk",
            "preference.milk",
            "oat milk",
            "regular milk",
        ),
        ("요즘 커피 대신 녹차를 마셔요", "preference.drink", "녹차", "커피"),
        (
            "I used to drink coffee but now I drink green tea",
            "preference.drink",
            "green tea",
            "coffee",
        ),
        ("I used to use Chrome, but now I use Firefox", "preference.browser", "Firefox", "Chrome"),
    ],
)
def test_switches_record_what_they_replace(text: str, key: str, value: str, previous: str) -> None:
    cards = keyed(say(text))
    assert cards[key] == {"value": value, "previous": previous}


@pytest.mark.parametrize(
    ("text", "item"),
    [
        ("I stopped eating meat", "meat"),
        ("I quit smoking last year", "smoking"),
        ("I gave up sugar", "sugar"),
        ("I don't drink coffee anymore", "coffee"),
        ("커피를 끊었어요", "커피"),
    ],
)
def test_things_given_up_are_avoided(text: str, item: str) -> None:
    cards = keyed(say(text))
    avoided = [k for k in cards if k.startswith("preference.avoid.")]
    assert len(avoided) == 1 and cards[avoided[0]]["item"] == item


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Hi, I'm Alex", "Alex"),
        ("Hello! I'm Maria Lopez.", "Maria Lopez"),
        ("I'm Alex, nice to meet you", "Alex"),
        ("Hey there, I am Sam and I need help with a trip", "Sam"),
        ("My name is Jordan", "Jordan"),
        ("저는 민수예요", "민수"),
        ("안녕하세요, 저는 서연입니다", "서연"),
        ("저는 김민수라고 합니다", "김민수"),
        ("Hi, I'm Dominic", "Dominic"),
        ("Hi, this is Jamie", "Jamie"),
        ("Good morning, I'm Priya", "Priya"),
        ("안녕하세요 저는 지훈이에요", "지훈"),
        ("I'm Alex by the way", "Alex"),
        ("Hi there, Maria here.", "Maria"),
        ("민수라고 해요", "민수"),
    ],
)
def test_introductions_give_a_name(text: str, name: str) -> None:
    assert keyed(say(text))["identity.name"] == {"name": name}


@pytest.mark.parametrize(
    "text",
    [
        "I'm tired",
        "Hi, I'm Korean",
        "Hi, I'm Christian",
        "I'm Fine, thanks",
        "Hi, I'm back",
        "I'm a nurse",
        "Hi, I'm Vegan",
        "I'm in London",
        "I'm Alex's sister",
        "I'm Vietnamese.",
        "Hi, I'm Swedish",
        "Hello, I'm Jewish",
        "저는 학생이에요",
        "저는 피곤해요",
        "저는 한국인이에요",
        "저는 괜찮아요",
    ],
)
def test_what_is_not_a_name(text: str) -> None:
    assert "identity.name" not in keyed(say(text))


@pytest.mark.parametrize(
    ("text", "key", "expected"),
    [
        (
            "we run Postgres 15 in prod",
            "project.shop.version.postgresql",
            {"tech": "PostgreSQL", "version": "15", "environment": "prod"},
        ),
        ("We upgraded to Python 3.12", "project.shop.version.python", {"version": "3.12"}),
        (
            "we decided to use JWT for auth",
            "project.shop.decision.auth",
            {"decision": "JWT", "topic": "auth"},
        ),
        ("Let's go with Redis for caching.", "project.shop.decision.cache", {"decision": "Redis"}),
        ("We deploy to Fly.io", "project.shop.environment.prod", {"platform": "Fly.io"}),
        (
            "assistant: Our convention is snake_case for module names",
            "project.shop.convention.snake_case_for_module_names",
            {"convention": "snake_case for module names"},
        ),
        ("인증은 JWT로 하기로 했어요", "project.shop.decision.auth", {"decision": "JWT"}),
        ("프로덕션에서 Postgres 15를 써요", "project.shop.version.postgresql", {"version": "15"}),
        (
            "우리는 Redis를 캐시로 쓰기로 했어요",
            "project.shop.decision.cache",
            {"decision": "Redis"},
        ),
        ("We use pnpm, not npm", "project.shop.decision.packaging", {"decision": "pnpm"}),
        ("Python 3.11 is required", "project.shop.version.python", {"version": "3.11"}),
        ("we switched the database from MySQL to Postgres", "project.shop.decision.database", {}),
        ("never commit directly to main", "project.shop.convention.never_commit_directly_main", {}),
    ],
)
def test_project_facts(text: str, key: str, expected: dict[str, str]) -> None:
    cards = keyed(say(text, project="shop"))
    assert cards[key]["project"] == "shop"
    assert expected.items() <= cards[key].items()


def test_work_words_that_are_no_technology_decide_nothing() -> None:
    assert keyed(say("We use tabs and we use our judgement", project="shop")) == {}


def test_a_promotion_changes_the_role_only() -> None:
    assert keyed(say("I got promoted to staff engineer")) == {
        "work.role": {"role": "staff engineer"}
    }


def test_assistant_lines_of_a_transcript_give_project_facts_only() -> None:
    transcript = (
        "user: Hi, I'm Dana. We run Python 3.12 in prod.\n"
        "assistant: I'm Claude, nice to meet you. We decided to use JWT for auth.\n"
        "I live in Berlin, by the way.\n"
        "user: I live in Lisbon."
    )
    cards = keyed(say(transcript, project="shop"))
    assert cards["identity.name"] == {"name": "Dana"}
    assert cards["location.home"]["city"] == "Lisbon"  # the assistant's Berlin is not the user's
    assert cards["project.shop.decision.auth"]["decision"] == "JWT"
    assert cards["project.shop.version.python"]["version"] == "3.12"


def test_no_project_facts_without_a_project() -> None:
    assert not [k for k in keyed(say("we decided to use JWT for auth")) if "project" in k]


def test_project_questions_decide_nothing() -> None:
    assert keyed(say("should we use JWT for auth?", project="shop")) == {}


# ----------------------------------------------------------- how slots relate


def _card(key: str, category: Category, **values: str) -> CardDraft:
    return CardDraft.model_validate(
        {
            "statement": f"{key} {values}",
            "category": category,
            "key": key,
            "attributes": [
                Attribute.model_validate({"name": n, "value": v}) for n, v in values.items()
            ],
        }
    )


def test_slot_relations() -> None:
    home = _card("location.home", Category.LOCATION, city="Shanghai")
    area = _card("location.home_area", Category.LOCATION, area="Pudong", city="Shanghai")
    moved = _card("location.home", Category.LOCATION, city="Berlin")
    assert makes_stale(area, moved) is not None
    assert makes_stale(area, home) is None  # the same city: the neighbourhood stays
    assert makes_stale(home, area) is None
    role = _card("work.role", Category.WORK, role="engineer", employer="Stripe")
    google = _card("work.employer", Category.WORK, employer="Google")
    stripe = _card("work.employer", Category.WORK, employer="Stripe")
    left = _card("work.employer", Category.WORK, employer="Stripe", status="left")
    left_acme = _card("work.employer", Category.WORK, employer="Acme", status="left")
    assert makes_stale(role, google) is not None and makes_stale(role, stripe) is None
    assert makes_stale(role, left) is not None
    assert closes_other_value(stripe, left_acme) and not closes_other_value(stripe, left)
    assert makes_stale(role, _card("work.employer", Category.WORK, status="left")) is not None
    plan = _card("plan.move.seoul", Category.PLAN, destination="Seoul", status="planned")
    assert makes_stale(plan, _card("location.home", Category.LOCATION, city="Seoul"))
    assert makes_stale(plan, moved) is None  # moved elsewhere: the Seoul plan still stands
    assert independent("plan.trip.lisbon", "plan.move.seoul")
    assert independent("project.a.version.python", "project.a.decision.auth")
    assert not independent("location.home", "location.home")
    checking = _card("account.bank.checking", Category.ACCOUNT, number="1", bank="Chase")
    savings = _card("account.bank.savings", Category.ACCOUNT, number="2", bank="Citi")
    closed = _card("account.bank.chase", Category.ACCOUNT, name="Chase", status="closed")
    assert makes_stale(checking, closed) is not None and makes_stale(savings, closed) is None
    like = _card("preference.like", Category.PREFERENCE, item="coffee")
    avoid = _card("preference.avoid.coffee", Category.PREFERENCE, item="coffee", status="stopped")
    tea = _card("preference.drink", Category.PREFERENCE, value="green tea", previous="coffee")
    assert makes_stale(like, avoid) is not None and makes_stale(like, tea) is not None
    assert makes_stale(avoid, _card("preference.like", Category.PREFERENCE, item="coffee"))
    assert makes_stale(_card("preference.like", Category.PREFERENCE, item="tea"), avoid) is None


# --------------------------------------------------------------- end to end


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[Memory]:
    with Memory(tmp_path_factory.mktemp("slots") / "m", embedder=embedder) as opened:
        yield opened


def _current(memory: Memory, user: str) -> dict[str, Card]:
    cards = memory.facts(user)
    keys = [c.key for c in cards]
    assert len(keys) == len(set(keys)), keys
    return {c.key: c for c in cards}


def _value(card: Card, name: str) -> str | None:
    return next((a.value for a in card.attributes if a.name == name), None)


def test_role_survives_its_employer_and_a_job_change_supersedes_both(memory: Memory) -> None:
    tell(memory, "job", ("2024-01-10T09:00:00Z", "I'm a backend engineer at Stripe."))
    cards = _current(memory, "job")
    assert _value(cards["work.role"], "role") == "backend engineer"
    assert _value(cards["work.employer"], "employer") == "Stripe"
    assert len(memory.facts("job", include_history=True)) == 2  # nothing superseded
    tell(memory, "job", ("2024-06-01T09:00:00Z", "I joined Google as a PM."))
    cards = _current(memory, "job")
    assert _value(cards["work.role"], "role") == "PM"
    assert _value(cards["work.employer"], "employer") == "Google"
    history = memory.history(cards["work.role"].id, user_id="job")
    assert [_value(c, "role") for c in history] == ["backend engineer", "PM"]
    history = memory.history(cards["work.employer"].id, user_id="job")
    assert [_value(c, "employer") for c in history] == ["Stripe", "Google"]
    then = {c.key: c for c in memory.facts("job", as_of="2024-03-01")}
    assert _value(then["work.role"], "role") == "backend engineer"


def test_leaving_a_job_ends_it_and_its_role(memory: Memory) -> None:
    tell(
        memory,
        "quit",
        ("2024-01-10T09:00:00Z", "I'm a designer at Figma."),
        ("2024-02-10T09:00:00Z", "I left my job at Acme years ago."),  # another job: history
    )
    cards = _current(memory, "quit")
    assert _value(cards["work.employer"], "employer") == "Figma"
    assert "work.role" in cards
    tell(memory, "quit", ("2024-05-01T09:00:00Z", "I left my job at Figma."))
    cards = _current(memory, "quit")
    assert _value(cards["work.employer"], "status") == "left"
    assert "work.role" not in cards
    tell(
        memory,
        "quit2",
        ("2024-01-10T09:00:00Z", "I'm a nurse at Mercy Hospital."),
        ("2024-03-10T09:00:00Z", "I quit my job."),
    )
    cards = _current(memory, "quit2")
    assert _value(cards["work.employer"], "status") == "left"
    assert "work.role" not in cards


def test_a_neighbourhood_refines_the_city_and_a_move_ends_it(memory: Memory) -> None:
    tell(
        memory,
        "home",
        ("2024-01-10T09:00:00Z", "I live in Shanghai."),
        ("2024-03-01T09:00:00Z", "My new apartment is in Pudong."),
    )
    cards = _current(memory, "home")
    assert _value(cards["location.home"], "city") == "Shanghai"
    assert _value(cards["location.home_area"], "area") == "Pudong"
    shanghai = [c for c in memory.facts("home", include_history=True) if c.key == "location.home"]
    assert all(c.status == "current" for c in shanghai)  # refined, never superseded
    hits = memory.search("which neighborhood is my apartment in?", user_id="home", limit=3)
    assert "Pudong" in hits[0].text
    tell(memory, "home", ("2024-04-01T09:00:00Z", "Actually my flat is in Xuhui."))
    cards = _current(memory, "home")
    assert _value(cards["location.home_area"], "area") == "Xuhui"
    assert _value(cards["location.home"], "city") == "Shanghai"
    tell(memory, "home", ("2024-08-01T09:00:00Z", "I moved to Berlin."))
    cards = _current(memory, "home")
    assert _value(cards["location.home"], "city") == "Berlin"
    assert "location.home_area" not in cards  # the Shanghai neighbourhood ended with the move


def test_plans_are_separate_and_a_cancellation_closes_only_its_plan(memory: Memory) -> None:
    tell(
        memory,
        "plans",
        ("2024-09-01T09:00:00Z", "I'm planning to move to Seoul next month."),
        ("2024-09-02T09:00:00Z", "I'm flying to Lisbon on October 20."),
        ("2024-09-03T09:00:00Z", "I have a dentist appointment on September 20."),
    )
    cards = _current(memory, "plans")
    assert {"plan.move.seoul", "plan.trip.lisbon", "plan.appointment.dentist"} <= set(cards)
    tell(memory, "plans", ("2024-09-05T09:00:00Z", "We cancelled the trip to Lisbon."))
    cards = _current(memory, "plans")
    assert _value(cards["plan.trip.lisbon"], "status") == "cancelled"
    assert cards["plan.trip.lisbon"].supersedes is not None
    assert _value(cards["plan.move.seoul"], "status") == "planned"
    assert _value(cards["plan.appointment.dentist"], "status") is None
    assert "location.home" not in cards
    tell(memory, "plans", ("2024-09-06T09:00:00Z", "I cancelled my appointment with the dentist."))
    cards = _current(memory, "plans")
    assert _value(cards["plan.appointment.dentist"], "status") == "cancelled"
    tell(memory, "plans", ("2024-10-03T09:00:00Z", "We finally moved to Seoul."))
    cards = _current(memory, "plans")
    assert _value(cards["location.home"], "city") == "Seoul"
    assert "plan.move.seoul" not in cards  # the plan is done
    assert "plan.trip.lisbon" in cards


def test_preference_switches_and_avoidance(memory: Memory) -> None:
    tell(
        memory,
        "drinks",
        ("2024-01-10T09:00:00Z", "I love coffee."),
        ("2024-02-10T09:00:00Z", "I love steak and I love jazz."),
    )
    tell(memory, "drinks", ("2024-03-10T09:00:00Z", "I switched from coffee to green tea."))
    cards = memory.facts("drinks")
    drink = next(c for c in cards if c.key == "preference.drink")
    assert _value(drink, "value") == "green tea" and _value(drink, "previous") == "coffee"
    likes = {_value(c, "item") for c in cards if c.key == "preference.like"}
    assert likes == {"steak", "jazz"}  # coffee ended, nothing else touched
    tell(memory, "drinks", ("2024-04-10T09:00:00Z", "I stopped eating steak."))
    cards = memory.facts("drinks")
    assert {_value(c, "item") for c in cards if c.key == "preference.like"} == {"jazz"}
    assert any(c.key == "preference.avoid.steak" for c in cards)
    tell(memory, "drinks", ("2024-05-10T09:00:00Z", "I switched from green tea to coffee."))
    drinks = [c for c in memory.facts("drinks") if c.key == "preference.drink"]
    assert [_value(c, "value") for c in drinks] == ["coffee"]


@pytest.mark.parametrize(
    ("text", "key", "name"),
    [
        ("My Chase account closes on October 1", "account.bank.chase", "Chase"),
        ("I closed my bank account", "account.bank.account", "bank"),
        ("my account closes next week", "account.bank.account", None),
        ("I cancelled my Netflix subscription", "account.service.netflix", "Netflix"),
    ],
)
def test_accounts_that_close(text: str, key: str, name: str | None) -> None:
    card = keyed(say(text))[key]
    assert card["status"] == "closed" and card.get("name") == name


def test_a_closed_account_ends_the_account_it_names(memory: Memory) -> None:
    tell(
        memory,
        "bank",
        ("2024-01-10T09:00:00Z", "My Chase checking account number is 12345678."),
        ("2024-01-11T09:00:00Z", "My Citi savings account number is 87654321."),
    )
    assert {"account.bank.checking", "account.bank.savings"} <= set(_current(memory, "bank"))
    tell(memory, "bank", ("2024-02-10T09:00:00Z", "My Chase account closes on March 1."))
    cards = _current(memory, "bank")
    assert "account.bank.checking" not in cards
    assert "account.bank.savings" in cards  # the Citi account is untouched
    assert _value(cards["account.bank.chase"], "status") == "closed"


def test_introductions_file_the_name(memory: Memory) -> None:
    tell(memory, "intro", ("2024-01-10T09:00:00Z", "Hi, I'm Alex! I'm tired today."))
    names = [c for c in memory.facts("intro") if c.key == "identity.name"]
    assert [_value(c, "name") for c in names] == ["Alex"]


def _claude_line(kind: str, text: str, uuid: str, minute: int) -> str:
    return json.dumps(
        {
            "type": kind,
            "sessionId": "sess-p",
            "uuid": uuid,
            "cwd": "/home/dev/shop",
            "timestamp": f"2025-06-01T10:{minute:02d}:00.000Z",
            "message": {"role": kind, "content": text},
        }
    )


def test_imported_coding_sessions_give_project_facts(tmp_path: Path, memory: Memory) -> None:
    folder = tmp_path / "projects" / "-home-dev-shop"
    folder.mkdir(parents=True)
    lines = [
        _claude_line(
            "user", "We run Postgres 15 in prod. We decided to use JWT for auth.", "u1", 0
        ),
        _claude_line("assistant", "Noted, I'll keep the token code in src/auth.", "a1", 1),
        _claude_line("user", "We upgraded to Postgres 16 last week.", "u2", 2),
    ]
    (folder / "s.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    memory.import_claude_code(tmp_path / "projects", user_id="coder")
    memory.wait(timeout=120)
    cards = _current(memory, "coder")
    version = cards["project.shop.version.postgresql"]
    assert _value(version, "version") == "16" and _value(version, "project") == "shop"
    assert version.supersedes is not None
    decision = cards["project.shop.decision.auth"]
    assert _value(decision, "decision") == "JWT"
    hits = memory.search("which postgres version does shop run?", user_id="coder", limit=3)
    assert any("16" in h.text for h in hits)


@pytest.mark.parametrize(
    ("text", "key", "value"),
    [
        ("I drink coffee every morning.", "preference.drink", "coffee"),
        ("I usually drink green tea.", "preference.drink", "green tea"),
        ("We always have oat milk with breakfast", "preference.milk", "oat milk"),
        ("I take the bus to work.", "preference.commute", "bus"),
        ("매일 아침 커피를 마셔요.", "preference.drink", "커피"),
        # a value whose head noun is known: black coffee is a drink as coffee is
        ("These days I mostly drink black coffee.", "preference.drink", "black coffee"),
        ("I mostly drink oat lattes.", "preference.drink", "oat lattes"),
        # a sport done regularly
        ("My main sport right now is swimming.", "preference.sport", "swimming"),
        ("I've been doing a lot of bouldering lately.", "preference.sport", "bouldering"),
        ("I still do yoga twice a week.", "preference.sport", "yoga"),
        ("We go running every morning.", "preference.sport", "running"),
    ],
)
def test_habits_of_a_known_topic_are_preferences(text: str, key: str, value: str) -> None:
    assert keyed(say(text)).get(key, {}).get("value") == value


@pytest.mark.parametrize(
    "text",
    [
        "I drink water when I run.",
        "I usually have meetings.",
        "I take it every day.",
        "I usually have team meetings.",
        "I go shopping every weekend.",
        "I've been doing a lot of paperwork lately.",
    ],
)
def test_habits_of_no_known_topic_file_nothing(text: str) -> None:
    assert not [d for d in say(text) if d.key.startswith("preference.")]


def test_topic_preferences_never_conflict_with_each_other() -> None:
    assert independent("preference.drink", "preference.commute")
    assert not independent("preference.drink", "preference.switched_to")


def test_a_switch_supersedes_the_habit_not_another_topic(memory: Memory) -> None:
    tell(
        memory,
        "tea",
        ("2024-01-10T09:00:00Z", "I drink coffee every morning."),
        ("2024-01-11T09:00:00Z", "I usually take the bus to work."),
        ("2024-06-01T09:00:00Z", "I switched from coffee to green tea."),
    )
    cards = _current(memory, "tea")
    assert _value(cards["preference.drink"], "value") == "green tea"
    assert _value(cards["preference.commute"], "value") == "bus"
    hits = memory.search("what do I drink?", user_id="tea", limit=3)
    first = next(h for h in hits if "coffee" in h.text or "tea" in h.text)
    assert "green tea" in first.text


@pytest.mark.parametrize(
    ("text", "key", "number"),
    [
        ("My patient number is PX-48213.", "health.patient_id.main", "PX-48213"),
        ("My patient ID at Mercy is 44821.", "health.patient_id.mercy", "44821"),
        ("My insurance policy number is HX-2231-99.", "health.insurance.main", "HX-2231-99"),
    ],
)
def test_care_numbers(text: str, key: str, number: str) -> None:
    assert keyed(say(text)).get(key, {}).get("number") == number


def test_care_numbers_in_korean_read_in_korean() -> None:
    drafts = say("제 환자 번호는 PX-48213이에요.")
    assert [d.statement for d in drafts if d.key.startswith("health.")] == [
        "사용자의 환자 번호는 PX-48213이다."
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Booked a doctor's appointment at Providence for July 20.",
        "Just scheduled a dentist appointment for October 3.",
    ],
)
def test_bookings_without_a_subject_are_appointments(text: str) -> None:
    assert any(k.startswith("plan.appointment.") for k in keyed(say(text)))


def test_an_account_at_a_bank_that_closes() -> None:
    found = keyed(say("My checking account at Chase closes at the end of the month."))
    assert found["account.bank.chase_checking"]["status"] == "closed"
