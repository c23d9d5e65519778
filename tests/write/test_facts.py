"""The write path end to end: messages → PII policy → cards → resolution → checks → reads."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from madeleine import Memory
from madeleine.embed.base import Embedder
from madeleine.facts.cards import Card
from madeleine.facts.checks import Alert
from tests.fake_llm import FakeLLM, fake_llm_fixture  # noqa: F401

MISSION = (
    "Help me book a flight to Tokyo next Friday. I prefer window seats and I'm vegetarian. "
    "Also use my United MileagePlus number 12345678."
)


def _is_judge(request: dict[str, Any]) -> bool:
    return "contradictions" in str(request["messages"][0]["content"])


def _all_compatible(request: dict[str, Any]) -> dict[str, Any]:
    lines = str(request["messages"][1]["content"]).splitlines()[1:]
    return {
        "verdicts": [
            {"pair": n, "relation": "compatible", "reason": "different topics"}
            for n in range(len(lines))
        ]
    }


def _file_bytes(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))


def test_mission_example_cards_and_vaulted_loyalty_number(
    tmp_path: Path, embedder: Embedder
) -> None:
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        memory.add(
            {"role": "user", "content": MISSION, "id": "m1"},
            user_id="mina",
            timestamp="2024-09-16T10:00:00Z",  # a Monday
        )
        memory.wait(timeout=120)
        cards = {c.key: c for c in memory.facts("mina")}
        assert cards["preference.seat"].attributes[0].value == "window"
        assert any(a.value == "vegetarian" for a in cards["preference.diet"].attributes)
        loyalty = next(c for k, c in cards.items() if k.startswith("account.loyalty"))
        assert any(a.value == "12345678" for a in loyalty.attributes)  # restored for the owner
        trip = cards["plan.trip.tokyo"]
        start = next(a.value for a in trip.attributes if a.name == "start_date")
        assert start.startswith("2024-09-20")
        # the raw number is in no index, log or file; the owner still gets it back
        assert b"12345678" not in _file_bytes(tmp_path / "m" / "memory.db")
        hits = memory.search("what is my MileagePlus number?", user_id="mina")
        assert "12345678" in hits[0].text
        assert "12345678" not in str(memory.facts("someone-else"))
        log = memory.routing_log("mina")
        assert {entry["decision"] for entry in log} >= {"added"}
        assert all("12345678" not in str(entry) for entry in log)


def test_latest_truth_wins_and_history_stays(tmp_path: Path, embedder: Embedder) -> None:
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        memory.add(
            {"role": "user", "content": "I live in Beijing.", "id": "a"},
            user_id="u",
            timestamp="2023-01-10T09:00:00Z",
        )
        memory.add(
            {"role": "user", "content": "I moved to Shanghai last week.", "id": "b"},
            user_id="u",
            timestamp="2024-03-05T09:00:00Z",
        )
        memory.wait(timeout=120)
        now = [c for c in memory.facts("u") if c.key == "location.home"]
        assert len(now) == 1 and "Shanghai" in now[0].statement
        before = [c for c in memory.facts("u", as_of="2023-06-01") if c.key == "location.home"]
        assert len(before) == 1 and "Beijing" in before[0].statement
        history = memory.history(now[0].id, user_id=now[0].user_id)
        assert [("Beijing" in c.statement, c.status) for c in history] == [
            (True, "superseded"),
            (False, "current"),
        ]
        assert history[0].superseded_by == now[0].id and now[0].supersedes == history[0].id
        everything = memory.facts("u", include_history=True)
        assert len([c for c in everything if c.key == "location.home"]) == 2
        stats = memory.stats()
        assert stats["fact_versions"] == stats["facts"] + 1
        decisions = [e["decision"] for e in memory.routing_log("u")]
        assert "superseded" in decisions
        ctx = memory.context("where do I live?", user_id="u")
        assert "Shanghai" in ctx.text.split("\n### ")[0]
        old = memory.context("where do I live?", user_id="u", as_of="2023-06-01")
        facts_part = old.text.split("\n### ")[0]
        assert "Beijing" in facts_part and "Shanghai" not in facts_part


def test_duplicates_reinforce_instead_of_piling_up(tmp_path: Path, embedder: Embedder) -> None:
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        for i, when in enumerate(["2024-01-01T00:00:00Z", "2024-02-01T00:00:00Z"]):
            memory.add(
                {"role": "user", "content": "I prefer window seats.", "id": f"w{i}"},
                user_id="u",
                timestamp=when,
            )
            memory.wait(timeout=120)  # two batches: the second meets the stored card
        seats = [c for c in memory.facts("u") if c.key == "preference.seat"]
        assert len(seats) == 1
        assert "duplicate" in [e["decision"] for e in memory.routing_log("u")]


def test_passport_alert_and_custom_checks(tmp_path: Path, embedder: Embedder) -> None:
    def no_weekend_meetings(cards: Sequence[Card]) -> list[Alert]:
        return [Alert("custom", "info", "custom check ran", (cards[0].id,))] if cards else []

    with Memory(tmp_path / "m", embedder=embedder, checks=[no_weekend_meetings]) as memory:
        memory.add(
            [
                {"role": "user", "content": "My passport expires on 2025-02-15.", "id": "p"},
                {"role": "user", "content": "I'm flying to Tokyo on January 14, 2025.", "id": "t"},
            ],
            user_id="u",
            timestamp="2024-11-01T09:00:00Z",
        )
        memory.wait(timeout=120)
        alerts = memory.alerts("u")
        rules = {a["rule"] for a in alerts}
        assert "passport_expiry_before_trip" in rules and "custom" in rules
        ctx = memory.context("plan my Tokyo trip", user_id="u")
        assert ctx.text.split("\n")[1] == "Alerts:"  # alerts about the query lead
        assert "passport expires on 2025-02-15" in ctx.text
        tight = memory.context("plan my Tokyo trip", user_id="u", budget_tokens=120)
        assert tight.items and tight.tokens <= 120
        assert "Alerts:" in tight.text and "passport expires" in tight.text


def test_deleting_the_message_deletes_its_facts_and_vault_entry(
    tmp_path: Path, embedder: Embedder
) -> None:
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        memory.add(
            [
                {"role": "user", "content": "My checking account number is 9876543210.", "id": "c"},
                {"role": "user", "content": "I prefer aisle seats.", "id": "s"},
            ],
            user_id="u",
            timestamp=datetime(2024, 5, 1, tzinfo=UTC),
        )
        memory.wait(timeout=120)
        assert any(c.key.startswith("account.bank") for c in memory.facts("u"))
        assert memory.delete_message("c", user_id="u")
        assert not any(c.key.startswith("account.bank") for c in memory.facts("u"))
        assert memory.export_user("u")["vault"] == []
        assert any(c.key == "preference.seat" for c in memory.facts("u"))
        memory.forget_user("u")
        assert memory.facts("u", include_history=True) == []
        assert memory.routing_log("u") == [] and memory.alerts("u") == []


def test_secrets_are_masked_for_good(tmp_path: Path, embedder: Embedder) -> None:
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        memory.add(
            {"role": "user", "content": "my password is hunter2! and 비밀번호는 qwer1234"},
            user_id="u",
        )
        memory.wait(timeout=120)
        exported = str(memory.export_user("u"))
        assert "hunter2" not in exported and "qwer1234" not in exported
        assert "[pii:password]" in exported
    data = _file_bytes(tmp_path / "m" / "memory.db")
    assert b"hunter2" not in data and b"qwer1234" not in data


def test_bad_pii_policy_is_refused(tmp_path: Path, embedder: Embedder) -> None:
    with pytest.raises(ValueError, match="mask"):
        Memory(tmp_path / "m", embedder=embedder, pii_policy={"password": "shred"})


def test_llm_extractor_one_call_per_window_and_recorded_fallback(
    tmp_path: Path, embedder: Embedder, fake_llm: FakeLLM
) -> None:
    messages = [
        {"role": "user", "content": "I'm allergic to penicillin.", "id": "h1"},
        {"role": "assistant", "content": "Noted, thanks.", "id": "h2"},
        {"role": "user", "content": "My doctor put me on amoxicillin 500mg.", "id": "h3"},
    ]

    def reply(request: dict[str, object]) -> dict[str, object]:
        prompt = str(request["messages"])
        ids = [int(part.split("]")[0]) for part in prompt.split("[")[1:] if part[:1].isdigit()]
        return {
            "cards": [
                {
                    "statement": "The user is allergic to penicillin.",
                    "category": "health",
                    "subject": "user",
                    "key": "health.allergy",
                    "multi_valued": True,
                    "attributes": [{"name": "allergen", "type": "text", "value": "penicillin"}],
                    "sources": ids[:1],
                },
                {
                    "statement": "The user takes amoxicillin 500mg.",
                    "category": "health",
                    "subject": "user",
                    "key": "health.medication",
                    "multi_valued": True,
                    "attributes": [{"name": "medication", "type": "text", "value": "amoxicillin"}],
                    "sources": ids[-1:],
                },
            ]
        }

    fake_llm.script(reply)
    options: dict[str, Any] = {
        "llm_base_url": fake_llm.base_url,
        "llm_model": "test-model",
        "llm_max_retries": 1,
    }
    with Memory(tmp_path / "m", embedder=embedder, **options) as memory:
        memory.add(messages, user_id="u", timestamp="2024-05-01T10:00:00Z")
        memory.wait(timeout=120)
        assert len(fake_llm.requests) == 1  # one call for the session window
        cards = memory.facts("u")
        assert {c.key for c in cards} == {"health.allergy", "health.medication"}
        assert all(c.extractor == "llm:test-model" for c in cards)
        assert [a["rule"] for a in memory.alerts("u")] == ["medication_allergy_class"]

        fake_llm.script("not json at all", "{still not json", _all_compatible)
        memory.add(
            {"role": "user", "content": "I prefer window seats.", "id": "w"},
            user_id="u",
            session_id="s2",
            timestamp="2024-05-02T10:00:00Z",
        )
        memory.wait(timeout=120)
        extraction = [r for r in fake_llm.requests if not _is_judge(r)]
        assert len(extraction) == 3  # the first window's call, then a call and one repair
        fallback = [e for e in memory.routing_log("u") if e["decision"] == "extractor_fallback"]
        assert fallback and fallback[0]["detail"]["error"]
        seat = [c for c in memory.facts("u") if c.key == "preference.seat"]
        assert seat and seat[0].extractor == "rules"  # nothing silently dropped


def test_behavioural_events_share_the_log(tmp_path: Path, embedder: Embedder) -> None:
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        result = memory.add_event(
            user_id="u",
            type="purchase",
            data={"item": "trail running shoes", "price": 89.9, "email": "mina@example.com"},
            timestamp="2024-04-02T12:00:00Z",
        )
        assert result.count == 1
        again = memory.add_event(
            user_id="u",
            type="purchase",
            data={"item": "trail running shoes", "price": 89.9, "email": "mina@example.com"},
            timestamp="2024-04-02T12:00:00Z",
        )
        assert again.count == 0  # idempotent like messages
        memory.wait(timeout=120)
        hits = memory.search("what shoes did I buy?", user_id="u")
        assert hits and "trail running shoes" in hits[0].text
        assert "mina@example.com" in hits[0].text  # vaulted, restored for the owner
        event = memory.export_user("u")["events"][0]
        assert event["kind"] == "action" and event["role"] == "event"
        with pytest.raises(TypeError, match="data"):
            memory.add_event(user_id="u", type="click", data=["not", "a", "dict"])  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="type"):
            memory.add_event(user_id="u", type="", data={})
    assert b"mina@example.com" not in _file_bytes(tmp_path / "m" / "memory.db")


def test_a_complement_keeps_what_the_older_card_knew(tmp_path: Path, embedder: Embedder) -> None:
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        memory.add(
            {"role": "user", "content": "I live in Beijing, China.", "id": "a"},
            user_id="u",
            timestamp="2023-01-10T09:00:00Z",
        )
        memory.add(
            {"role": "user", "content": "My passport number is X1234567.", "id": "p1"},
            user_id="u",
            timestamp="2024-01-10T09:00:00Z",
        )
        memory.wait(timeout=120)
        memory.add(
            [
                {"role": "user", "content": "My passport expires on 2025-02-15.", "id": "p2"},
                {"role": "user", "content": "I moved to Paris.", "id": "b"},
            ],
            user_id="u",
            timestamp="2024-06-10T09:00:00Z",
        )
        memory.wait(timeout=120)
        current = {c.key: c for c in memory.facts("u")}
        passport = {a.name: a.value for a in current["identity.passport"].attributes}
        assert passport.get("expires_on") == "2025-02-15"
        assert "number" in passport  # carried over from the older version
        home = {a.name: a.value for a in current["location.home"].attributes}
        assert home.get("city") == "Paris" and home.get("country") != "China"  # a real change
