"""The lifecycle through ``Memory``: archive, restore, pins, importance, reinforcement,
strength in search, consolidation and undo (on SQLite and on PostgreSQL + Redis)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from madeleine import Memory
from tests.fakes import HashingEmbedder

DAY = 86_400.0
T0 = 1_700_000_000.0
LATER = T0 + 400 * DAY


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    memory = Memory(tmp_path / "m", embedder=HashingEmbedder(dim=256), background=False)
    yield memory
    memory.close()


def say(mem: Memory, session: str, at: float, *texts: str, user: str = "u") -> None:
    mem.add(
        [{"role": "user", "content": t, "timestamp": at + n * 60} for n, t in enumerate(texts)],
        user_id=user,
        session_id=session,
    )


def user_history(mem: Memory) -> None:
    """Eight sessions, twenty days apart: a job said every time, a procedure, noise, and a
    rare but important fact said once."""
    for s in range(8):
        say(
            mem,
            f"s{s}",
            T0 + s * 20 * DAY,
            "I work at Acme as an engineer.",
            f"Yesterday I watched the film number {s} with friends.",
            "First I book the flight, then I reserve the hotel, finally I email my manager.",
        )
    say(mem, "s0", T0 + 300, "I am allergic to peanuts.")
    assert mem.wait(60)


def turn_id(mem: Memory, text: str) -> str:
    hits = mem.search(text, user_id="u", limit=1, channels=["bm25"], include_archived=True)
    assert hits and hits[0].kind == "turn"
    return hits[0].id


def test_archive_hides_an_item_everywhere_and_restore_brings_it_back(mem: Memory) -> None:
    say(mem, "s", T0, "I adopted a cat named Miso.", "The weather is grey today.")
    assert mem.wait(30)
    cat = turn_id(mem, "cat named Miso")
    assert mem.archive(cat, user_id="u", reason="not relevant any more")
    assert not mem.archive(cat, user_id="u")  # already archived: nothing to do
    assert cat not in {h.id for h in mem.search("cat Miso", user_id="u")}
    assert cat in {h.id for h in mem.search("cat Miso", user_id="u", include_archived=True)}
    assert cat not in {i.id for i in mem.context("cat Miso", user_id="u").items}
    state = mem.lifecycle(cat, user_id="u")
    assert state.archived and state.archive_reason == "not relevant any more"
    assert mem.restore(cat, user_id="u")
    assert cat in {h.id for h in mem.search("cat Miso", user_id="u")}
    assert not mem.lifecycle(cat, user_id="u").archived


def test_an_archived_card_leaves_listings_and_search(mem: Memory) -> None:
    say(mem, "s", T0, "I am allergic to peanuts.")
    assert mem.wait(30)
    card = mem.facts("u")[0]
    mem.archive(card.id, user_id="u")
    assert mem.facts("u") == [] and [c.id for c in mem.facts("u", include_archived=True)] == [
        card.id
    ]
    assert card.id not in {h.id for h in mem.search("peanuts", user_id="u")}
    assert mem.profile("u") == {}
    mem.restore(card.id, user_id="u")
    assert [c.id for c in mem.facts("u")] == [card.id]


def test_items_of_another_user_or_malformed_ids_are_refused(mem: Memory) -> None:
    say(mem, "s", T0, "I adopted a cat named Miso.")
    say(mem, "s", T0, "I play the violin.", user="v")
    assert mem.wait(30)
    cat = turn_id(mem, "cat named Miso")
    with pytest.raises(LookupError, match="has no turn"):
        mem.archive(cat, user_id="v")
    with pytest.raises(LookupError):
        mem.pin("fact_999999", user_id="u")
    with pytest.raises(ValueError, match="item id looks like"):
        mem.restore("episode-3", user_id="u")
    with pytest.raises(ValueError, match="between 0 and 1"):
        mem.set_importance(cat, 1.5, user_id="u")
    with pytest.raises(TypeError):
        mem.set_importance(cat, "high", user_id="u")  # type: ignore[arg-type]


def test_pins_and_importance_protect_from_fading(mem: Memory) -> None:
    say(mem, "s", T0, "The garage code changes every spring.", "I bought new socks.")
    assert mem.wait(30)
    code = turn_id(mem, "garage code")
    socks = turn_id(mem, "new socks")
    assert mem.lifecycle(code, user_id="u", now=LATER).strength < 0.5
    assert mem.set_importance(code, 0.95, user_id="u")
    described = mem.lifecycle(code, user_id="u", now=LATER)
    assert described.strength == 1.0 and described.protected == "importance"
    assert described.importance_by == "caller"
    assert mem.pin(socks, user_id="u")
    assert mem.lifecycle(socks, user_id="u", now=LATER).protected == "pinned"
    assert mem.unpin(socks, user_id="u")
    assert mem.lifecycle(socks, user_id="u", now=LATER).protected is None
    actions = [e.action for e in mem.lifecycle_log("u")]
    assert actions == ["unpin", "pin", "importance"]


def test_a_pinned_card_is_first_in_the_profile_listing(mem: Memory) -> None:
    say(mem, "s", T0, "I live in Lyon.", "My favourite colour is green.")
    assert mem.wait(30)
    cards = mem.facts("u")
    last = cards[-1]
    mem.pin(last.id, user_id="u")
    assert next(c for c in mem.facts("u") if c.id == last.id).pinned
    assert mem.lifecycle(last.id, user_id="u").pinned


def test_search_weighs_relevance_by_strength_and_explains_it(mem: Memory) -> None:
    say(mem, "old", T0, "We talked about the red bicycle repair.")
    say(mem, "new", T0 + 300 * DAY, "We talked about the red bicycle repair again.")
    assert mem.wait(30)
    hits = mem.search("red bicycle repair", user_id="u", now=T0 + 301 * DAY)
    strengths = {h.id: h.explain["strength"] for h in hits if h.kind == "turn"}
    assert len(strengths) == 2
    old, new = sorted(strengths.values(), key=lambda e: e["age_days"])[::-1]
    assert old["strength"] < new["strength"] and old["factor"] < new["factor"]
    assert old["curve"] == "exponential:365"
    plain = mem.search(
        "red bicycle repair", user_id="u", now=T0 + 301 * DAY, stages={"strength": False}
    )
    assert all("strength" not in h.explain for h in plain)


def test_recalls_into_a_context_are_written_off_the_request_path(mem: Memory) -> None:
    say(mem, "s", T0, "My bike is a blue Brompton.")
    assert mem.wait(30)
    bike = turn_id(mem, "blue Brompton")
    generation = mem._open().store.lifecycle.generation("u")
    context = mem.context("what bike do I ride", user_id="u", now=T0 + 30 * DAY)
    assert bike in {i.id for i in context.items}
    # the request wrote nothing: the recall waits for the worker
    assert mem._open().store.lifecycle.generation("u") == generation
    assert mem.lifecycle(bike, user_id="u").recalls == 0
    mem.search("what bike do I ride", user_id="u")  # a search is not a recall
    assert mem.wait(30)  # the worker's chores run between batches
    described = mem.lifecycle(bike, user_id="u", now=T0 + 30 * DAY)
    assert described.recalls == 1 and described.strength == pytest.approx(1.0)


def test_consolidation_compacts_keeps_what_matters_and_a_second_run_does_nothing(
    mem: Memory,
) -> None:
    user_history(mem)
    held_early = {c.statement for c in mem.facts("u", as_of=T0 + DAY)}
    report = mem.consolidate("u", now=LATER)
    counts = report.counts()
    assert counts["archive"] >= 7  # the restated job and procedure turns
    assert counts["digest"] == 8 and counts["procedure"] == 1
    assert report.after["turns"] < report.before["turns"]
    # what matters survives: the allergy (important by rule) and the job
    allergy = mem.search("allergic to peanuts", user_id="u", now=LATER, limit=3)
    assert any("peanuts" in h.text for h in allergy)
    job = mem.search("where do I work", user_id="u", now=LATER, limit=3)
    assert any("Acme" in h.text for h in job)
    # digests are searchable as their own kind and link to their turns
    digests = [h for h in mem.search("film with friends", user_id="u", now=LATER, limit=20)]
    assert any(h.kind == "digest" for h in digests)
    procedure = [c for c in mem.facts("u") if c.key.startswith("procedure.")]
    assert procedure and procedure[0].memory_type.value == "procedural"
    # idempotent: nothing left to do
    assert mem.consolidate("u", now=LATER).changes == []
    # as_of still reconstructs the past: merges keep the oldest card of a cluster; only what
    # faded (the open cards of the films watched, unimportant and never recalled) is gone
    faded = {c.item for c in report.changes if c.action == "forget"}
    every = {c.id: c.statement for c in mem.facts("u", include_archived=True)}
    assert faded and all("film number" in every[item] for item in faded)
    after = mem.facts("u", as_of=T0 + DAY)
    assert held_early - {every[item] for item in faded} <= {c.statement for c in after}
    assert all(
        c.key.startswith(("digest.", "procedure.")) for c in after if c.statement not in held_early
    )


def test_everything_a_run_changed_can_be_undone(mem: Memory) -> None:
    user_history(mem)
    turns_before = {h.id for h in mem.search("film friends", user_id="u", limit=50)}
    cards_before = {c.id: (c.confidence, tuple(c.sources)) for c in mem.facts("u")}
    report = mem.consolidate("u", now=LATER)
    assert report.changes
    undone = mem.undo(report.run, user_id="u")
    assert len(undone) == len(mem.lifecycle_log("u", run=report.run))
    turns_after = {h.id for h in mem.search("film friends", user_id="u", limit=50)}
    assert turns_after == turns_before
    cards_after = {c.id: (c.confidence, tuple(c.sources)) for c in mem.facts("u")}
    assert cards_after == cards_before  # created digests and procedures archived again
    assert mem.undo(report.run, user_id="u") == []  # nothing left to undo


def test_a_storage_budget_archives_the_weakest_first(tmp_path: Path) -> None:
    memory = Memory(
        tmp_path / "b", embedder=HashingEmbedder(dim=256), background=False, max_items=10
    )
    try:
        for n in range(20):
            say(memory, f"s{n}", T0 + n * 5 * DAY, f"Note {n}: bought item {n * 7} at the shop.")
        say(memory, "safe", T0, "My insurance policy number is kept in the blue folder.")
        assert memory.wait(60)
        report = memory.consolidate("u", now=T0 + 120 * DAY)
        assert report.after["turns"] + report.after["facts"] <= 10
        # the oldest notes went first; the important one stayed
        archived = {c.item for c in report.changes if c.action == "forget"}
        assert turn_id(memory, "insurance policy") not in archived
        assert turn_id(memory, "Note 0 bought") in archived
        assert turn_id(memory, "Note 19 bought") not in archived
    finally:
        memory.close()


def test_a_run_that_crashed_is_finished_by_the_next(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    user_history(mem)
    consolidator = mem._open().consolidator

    def crash(*args: object) -> list[object]:
        raise RuntimeError("killed")

    monkeypatch.setattr(consolidator, "_digests", crash)
    with pytest.raises(RuntimeError):
        mem.consolidate("u", now=LATER)
    monkeypatch.undo()
    resumed = mem.consolidate("u", now=LATER)
    assert resumed.counts().get("digest") == 8 and "merge" not in resumed.counts()
    assert mem.consolidate("u", now=LATER).changes == []


def test_a_changed_value_is_never_taken_for_a_restatement(mem: Memory) -> None:
    say(mem, "a", T0, "These days I mostly drink oat lattes.")
    say(mem, "b", T0 + 40 * DAY, "These days I mostly drink black coffee.")
    say(mem, "c", T0 + 80 * DAY, "These days I mostly drink black coffee.")
    assert mem.wait(30)
    report = mem.consolidate("u", now=T0 + 81 * DAY)
    archived = {c.item for c in report.changes if c.action == "archive"}
    assert (
        archived
        == {turn_id(mem, "drink black coffee")}
        - {h.id for h in mem.search("black coffee", user_id="u", limit=5)}
        or len(archived) == 1
    )
    kept = {h.text for h in mem.search("what do I drink", user_id="u", limit=10)}
    assert any("oat lattes" in t for t in kept) and any("black coffee" in t for t in kept)
    # the restatement kept is the latest, recalled as often as the value was said
    latest = [h for h in mem.search("black coffee", user_id="u", limit=5) if h.kind == "turn"]
    assert len(latest) == 1 and latest[0].timestamp.timestamp() >= T0 + 80 * DAY
    assert mem.lifecycle(latest[0].id, user_id="u").recalls == 1


def test_turns_that_only_restate_a_card_are_archived_but_not_those_saying_more(
    mem: Memory,
) -> None:
    say(mem, "a", T0, "I live in Lyon.")
    say(mem, "b", T0 + 10 * DAY, "As you know, I live in Lyon.")
    say(mem, "c", T0 + 20 * DAY, "I live in Lyon with Ana and our cat.")
    assert mem.wait(30)
    report = mem.consolidate("u", now=T0 + 21 * DAY)
    restated = [c for c in report.changes if c.detail.get("reason") == "restatement"]
    assert len(restated) == 1 and restated[0].detail["card"].startswith("fact_")
    left = {h.text for h in mem.search("Lyon", user_id="u", limit=10) if h.kind == "turn"}
    assert any("As you know" in t for t in left)  # the latest plain telling stays
    assert any("Ana" in t for t in left)  # it says more than the card: kept


def test_small_talk_gets_low_importance_and_is_compacted_into_the_digest(mem: Memory) -> None:
    say(
        mem,
        "old",
        T0,
        "Good morning!",
        "I repaired the garden fence with my neighbour.",
        "Thanks a lot!",
    )
    assert mem.wait(30)
    report = mem.consolidate("u", now=T0 + 60 * DAY)
    counts = report.counts()
    assert counts.get("digest") == 1 and counts.get("compact") == 2
    digest = next(c for c in report.changes if c.action == "digest")
    assert len(digest.detail["turns"]) == 3
    turns = [h.text for h in mem.search("garden fence", user_id="u", limit=10) if h.kind == "turn"]
    assert any("fence" in t for t in turns) and not any("Good morning" in t for t in turns)
    hits = mem.search("garden fence neighbour", user_id="u", limit=10)
    assert any(h.kind == "digest" and h.explain["digest_weight"] == 0.6 for h in hits)


def test_an_export_holds_archived_cards_and_the_lifecycle_and_forget_erases_it(
    mem: Memory,
) -> None:
    say(mem, "s", T0, "I am allergic to peanuts.")
    assert mem.wait(30)
    card = mem.facts("u")[0]
    mem.archive(card.id, user_id="u", reason="test")
    exported = mem.export_user("u")
    assert [c["id"] for c in exported["facts"]] == [card.id]
    states = exported["lifecycle"]["states"]
    assert states[0]["item"] == card.id and states[0]["archive_reason"] == "test"
    assert [e["action"] for e in exported["lifecycle"]["log"]] == ["archive"]
    mem.forget_user("u")
    assert mem.export_user("u")["lifecycle"] == {"states": [], "log": []}


def test_an_archived_turn_never_comes_back_as_a_neighbour_in_a_context(mem: Memory) -> None:
    say(
        mem,
        "s",
        T0,
        "We planned the trip to Porto.",
        "Then we talked.",
        "My bank PIN is in the drawer.",
        "Porto flights are booked.",
    )
    assert mem.wait(30)
    assert "drawer" in mem.context("the trip to Porto", user_id="u", window=2).text
    mem.archive(turn_id(mem, "bank PIN drawer"), user_id="u")
    context = mem.context("the trip to Porto", user_id="u", window=2)
    assert "drawer" not in context.text and "Then we talked" in context.text


def test_bad_arguments_are_refused_before_anything_is_written(mem: Memory) -> None:
    """A wrong ``now``, a user id passed where a list belongs, an unknown or empty run: a
    clear error, and the log stays readable and empty."""
    say(mem, "s", T0, "I adopted a cat named Miso.")
    assert mem.wait(30)
    cat = turn_id(mem, "cat named Miso")
    with pytest.raises(TypeError):
        mem.consolidate("u", now=object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="after 1970"):
        mem.consolidate("u", now=-5)
    with pytest.raises(TypeError, match="list of user ids"):
        mem.maintain("u")
    with pytest.raises(LookupError, match="no lifecycle run"):
        mem.undo("maintain-nope", user_id="u")
    with pytest.raises(TypeError, match="run must be a string"):
        mem.undo(123, user_id="u")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="reason must not be empty"):
        mem.archive(cat, user_id="u", reason=" ")
    assert mem.lifecycle_log("u") == []
    report = mem.consolidate("u", now="2024-01-01T00:00:00Z")  # a text time is a time
    assert all(entry.at >= 0 for entry in mem.lifecycle_log("u", run=report.run))


def test_restoring_what_is_not_archived_changes_nothing(mem: Memory) -> None:
    say(mem, "s", T0, "I adopted a cat named Miso.")
    assert mem.wait(30)
    cat = turn_id(mem, "cat named Miso")
    before = mem.lifecycle(cat, user_id="u", now=LATER)
    assert mem.restore(cat, user_id="u") is False
    assert mem.lifecycle(cat, user_id="u", now=LATER) == before
    assert mem.lifecycle_log("u") == []
    assert mem.archive(cat, user_id="u")
    run = mem.lifecycle_log("u")[0].run
    assert len(mem.undo(run, user_id="u")) == 1
    assert mem.undo(run, user_id="u") == []  # undone already: nothing left, no error


def test_a_digest_written_by_a_run_gets_its_importance_in_that_run(mem: Memory) -> None:
    """The digest of a session that holds an allergy is important from the run that wrote
    it, so a second run finds nothing to do."""
    say(mem, "old", T0, "Hello!", "I am allergic to peanuts.", "Thanks, that's helpful.")
    say(mem, "new", LATER, "I bought a new bike.")
    assert mem.wait(30)
    first = mem.consolidate("u", now=LATER + DAY)
    assert any(c.action == "digest" for c in first.changes)
    second = mem.consolidate("u", now=LATER + DAY)
    assert second.changes == []


def test_digests_are_listed_only_when_asked_for(mem: Memory) -> None:
    user_history(mem)
    mem.consolidate("u", now=LATER)
    plain = mem.facts("u")
    asked = mem.facts("u", include_digests=True)
    assert plain and not any(c.key.startswith("digest.") for c in plain)
    assert sum(c.key.startswith("digest.") for c in asked) == 8
    assert "digest" not in mem.profile("u").get("other", {})
    assert not any(
        c.key.startswith("digest.")
        for subs in mem.profile("u").values()
        for cards in subs.values()
        for c in cards
    )
    assert any(
        c.key.startswith("digest.")
        for subs in mem.profile("u", include_digests=True).values()
        for cards in subs.values()
        for c in cards
    )
    with pytest.raises(TypeError, match="include_digests must be a bool"):
        mem.facts("u", include_digests="yes")  # type: ignore[arg-type]
