"""Correcting a card and looking inside a memory: an edit is a new version that supersedes
(nothing overwritten, PII policy applied, checks rerun), a card's sources are the messages
it came from, and the users and graph entities a viewer starts from."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from madeleine import Memory
from madeleine.errors import ItemNotFoundError, StaleVersionError
from tests.fakes import HashingEmbedder

TRIP = [
    {"role": "user", "content": "I live in Boston and I work at Acme Robotics."},
    {"role": "user", "content": "I'm flying to Lisbon on September 12, 2024."},
    {"role": "user", "content": "My passport expires on 2024-12-01."},
]


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    with Memory(tmp_path / "m", embedder=HashingEmbedder()) as memory:
        memory.add(TRIP, user_id="alex", session_id="s1", timestamp="2024-06-01T10:00:00Z")
        memory.add(
            [{"role": "user", "content": "I live in Paris."}], user_id="sam", session_id="s1"
        )
        memory.wait()
        yield memory


def _card(mem: Memory, key: str, user: str = "alex") -> str:
    return next(c.id for c in mem.facts(user) if c.key == key)


def test_an_edit_is_a_new_version_that_supersedes_the_old(mem: Memory) -> None:
    home = _card(mem, "location.home")
    before = {c.id: c for c in mem.facts("alex")}
    new = mem.edit_fact(home, "The user lives in Denver.", user_id="alex", reason="moved")
    assert (
        new.id != home and new.supersedes == home and new.statement == "The user lives in Denver."
    )
    assert (new.key, new.category, new.sources) == (
        before[home].key,
        before[home].category,
        before[home].sources,
    )
    assert new.extractor == "edit" and new.confidence == 1.0
    history = mem.history(new.id, user_id="alex")
    assert [(c.id, c.status) for c in history] == [(home, "superseded"), (new.id, "current")]
    assert history[0].statement == before[home].statement  # the old card is kept as it was
    assert home not in {c.id for c in mem.facts("alex")}
    decision = mem.routing_log("alex", 1)[0]
    assert decision["decision"] == "edited" and decision["other_id"] == home
    assert decision["detail"]["reason"] == "moved"
    found = mem.search("where does the user live? Denver", user_id="alex", channels=["facts"])
    assert new.id in [h.id for h in found]  # searchable at once
    assert home not in [h.id for h in found]


def test_an_edited_statement_goes_through_the_pii_policy(
    mem: Memory, stored_text: object, tmp_path: Path
) -> None:
    home = _card(mem, "location.home")
    new = mem.edit_fact(home, "Reach me at alex.r@example.com in Denver.", user_id="alex")
    assert "alex.r@example.com" in new.statement  # shown to its owner
    assert "alex.r@example.com" not in stored_text(tmp_path / "m")  # type: ignore[operator]


def test_a_stale_or_foreign_version_cannot_be_edited(mem: Memory) -> None:
    home = _card(mem, "location.home")
    new = mem.edit_fact(home, "The user lives in Denver.", user_id="alex")
    with pytest.raises(StaleVersionError, match=f"current one is {new.id}"):
        mem.edit_fact(home, "The user lives in Austin.", user_id="alex")
    with pytest.raises(ItemNotFoundError):
        mem.edit_fact(new.id, "The user lives in Austin.", user_id="sam")
    with pytest.raises(ItemNotFoundError):
        mem.edit_fact("fact_999999", "The user lives in Austin.", user_id="alex")
    for statement, error in (("", ValueError), ("   ", ValueError), (3, TypeError)):
        with pytest.raises(error):
            mem.edit_fact(new.id, statement, user_id="alex")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at most 1000"):
        mem.edit_fact(new.id, "x" * 1001, user_id="alex")
    with pytest.raises(ValueError, match="fact_12"):
        mem.edit_fact("ep_1", "The user lives in Austin.", user_id="alex")
    assert [c.id for c in mem.history(new.id, user_id="alex")][-1] == new.id  # nothing written


def test_an_edit_reruns_the_memory_checks_and_keeps_a_pin(mem: Memory) -> None:
    assert [a["rule"] for a in mem.alerts("alex")] == ["passport_expiry_before_trip"]
    passport = _card(mem, "identity.passport")
    mem.pin(passport, user_id="alex")
    # the date the check read is no longer said: the alert goes with it
    new = mem.edit_fact(passport, "The user's passport was renewed.", user_id="alex")
    assert mem.alerts("alex") == []
    assert new.pinned and mem.lifecycle(new.id, user_id="alex").pinned


def test_sources_are_the_original_messages(mem: Memory) -> None:
    home = _card(mem, "location.home")
    sources = mem.sources(home, user_id="alex")
    assert [s["content"] for s in sources] == [TRIP[0]["content"]]
    assert sources[0]["session_id"] == "s1" and sources[0]["id"].startswith("ev_")
    with pytest.raises(ItemNotFoundError):
        mem.sources(home, user_id="sam")
    with pytest.raises(ValueError):
        mem.sources("nonsense", user_id="alex")


def test_users_and_graph_entities_are_where_a_viewer_starts(mem: Memory) -> None:
    users = mem.users()
    assert [u["user_id"] for u in users] == ["alex", "sam"]
    assert users[0]["turns"] == 3 and users[0]["facts"] == len(mem.facts("alex"))
    assert [u["user_id"] for u in mem.users(offset=1)] == ["sam"]
    assert [u["user_id"] for u in mem.users(prefix="s")] == ["sam"]
    assert mem.users(limit=1, offset=5) == []
    with pytest.raises(ValueError):
        mem.users(offset=-1)
    entities = mem.graph_entities("alex")
    labels = [e["label"] for e in entities]
    assert {"Lisbon", "Boston"} <= set(labels)
    assert all(e["mentions"] >= 1 for e in entities)
    assert [e["mentions"] for e in entities] == sorted(
        (e["mentions"] for e in entities), reverse=True
    )
    view = mem.graph("alex")  # no start given: the most mentioned entity
    assert view["around"] == entities[0]["id"] and view["nodes"][0]["id"] == entities[0]["id"]
    assert mem.graph("nobody") == {"around": None, "nodes": [], "edges": []}


def test_concurrent_edits_of_one_card_leave_one_current_version(mem: Memory) -> None:
    home = _card(mem, "location.home")
    start = threading.Barrier(4)
    outcomes: list[str] = []

    def edit(city: str) -> None:
        start.wait()
        try:
            mem.edit_fact(home, f"The user lives in {city}.", user_id="alex")
            outcomes.append("edited")
        except StaleVersionError:
            outcomes.append("stale")

    threads = [
        threading.Thread(target=edit, args=(c,)) for c in ("Austin", "Denver", "Reno", "Ely")
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["edited", "stale", "stale", "stale"]
    homes = [c for c in mem.facts("alex") if c.key == "location.home"]
    assert len(homes) == 1 and homes[0].supersedes == home


def test_an_edit_replaces_the_old_version_for_every_past_moment(mem: Memory) -> None:
    """A correction says what was true all along: reading as of any time after the card
    started gives the new version only, never both."""
    seat_turn = [{"role": "user", "content": "I prefer aisle seats."}]
    mem.add(seat_turn, user_id="alex", session_id="s2", timestamp="2024-08-01T10:00:00Z")
    mem.wait()
    seat = _card(mem, "preference.seat")
    new = mem.edit_fact(seat, "The user prefers window seats.", user_id="alex")
    for moment in ("2024-08-02", "2025-06-01"):
        held = [c.id for c in mem.facts("alex", as_of=moment) if c.key == "preference.seat"]
        assert held == [new.id], moment
        hits = mem.search("seat preference", user_id="alex", as_of=moment, channels=["facts"])
        assert seat not in [h.id for h in hits], moment
    assert [c.id for c in mem.facts("alex", as_of="2024-07-01")] == [
        c.id for c in mem.facts("alex", as_of="2024-07-01") if c.key != "preference.seat"
    ]


def test_an_unchanged_statement_is_not_a_new_version(mem: Memory) -> None:
    home = next(c for c in mem.facts("alex") if c.key == "location.home")
    with pytest.raises(ValueError, match="unchanged"):
        mem.edit_fact(home.id, f"  {home.statement} ", user_id="alex")
    assert len(mem.history(home.id, user_id="alex")) == 1
