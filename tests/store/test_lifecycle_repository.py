"""The lifecycle repository's contract, on every backend: states, the log, generations."""

from __future__ import annotations

from dataclasses import replace

from madeleine.store.ports import Store
from madeleine.store.records import ItemState, StateChange

ALICE, BOB = "alice", "bob"
NOW = 1_700_000_000.0


def archive(item: str) -> StateChange:
    after = ItemState(item=item, archived_at=NOW, archive_reason="test")
    return StateChange("archive", item, None, after, {"reason": "test"})


def test_changes_are_stored_logged_and_move_the_generation(store: Store) -> None:
    repo = store.lifecycle
    assert repo.generation(ALICE) == 0 and repo.states(ALICE) == {}
    done = repo.change(ALICE, ["ep_1", "fact_2"], lambda _: [archive("ep_1")], "run-1", NOW)
    assert [c.item for c in done] == ["ep_1"]
    first = repo.generation(ALICE)
    assert first > 0 and repo.generation(BOB) == 0
    state = repo.states(ALICE)["ep_1"]
    assert state.archived_at == NOW and state.archive_reason == "test"
    entries = repo.entries(ALICE)
    assert [(e.run, e.action, e.item) for e in entries] == [("run-1", "archive", "ep_1")]
    assert entries[0].before is None and entries[0].after is not None
    assert entries[0].after["archive_reason"] == "test" and entries[0].detail == {"reason": "test"}
    # an unlogged change (a recall) is stored but not logged
    recall = StateChange(
        "recall", "ep_1", state, replace(state, recalls=1, stability=1.4), logged=False
    )
    repo.change(ALICE, ["ep_1"], lambda current: [recall], "recall", NOW)
    assert repo.states(ALICE)["ep_1"].recalls == 1 and len(repo.entries(ALICE)) == 1
    assert repo.generation(ALICE) > first


def test_decide_sees_the_stored_states_and_may_change_nothing(store: Store) -> None:
    repo = store.lifecycle
    repo.change(ALICE, ["ep_1"], lambda _: [archive("ep_1")], "r", NOW)
    generation = repo.generation(ALICE)
    seen: dict[str, ItemState] = {}

    def decide(current: dict[str, ItemState]) -> list[StateChange]:
        seen.update(current)
        return []

    assert repo.change(ALICE, ["ep_1", "ep_9"], decide, "r2", NOW) == []
    assert set(seen) == {"ep_1"} and repo.generation(ALICE) == generation


def test_a_state_set_back_to_none_is_deleted_and_undone_entries_are_marked(store: Store) -> None:
    repo = store.lifecycle
    repo.change(ALICE, ["ep_1"], lambda _: [archive("ep_1")], "r", NOW)
    state = repo.states(ALICE)["ep_1"]
    repo.change(
        ALICE, ["ep_1"], lambda _: [StateChange("undo", "ep_1", state, None)], "undo-r", NOW
    )
    assert repo.states(ALICE) == {}
    entry = repo.entries(ALICE, run="r")[0]
    repo.mark_undone(ALICE, [entry.id], NOW + 1)
    assert repo.entries(ALICE, run="r")[0].undone_at == NOW + 1
    assert len(repo.entries(ALICE, limit=1)) == 1


def test_a_forgotten_user_loses_states_and_log_and_never_reuses_a_generation(
    store: Store,
) -> None:
    repo = store.lifecycle
    repo.change(ALICE, ["ep_1"], lambda _: [archive("ep_1")], "r", NOW)
    repo.change(BOB, ["ep_1"], lambda _: [archive("ep_1")], "r", NOW)
    before = repo.generation(ALICE)
    store.forget_user(ALICE)
    assert repo.states(ALICE) == {} and repo.entries(ALICE) == []
    assert repo.generation(ALICE) != before  # a cache keyed by it is never served again
    assert repo.states(BOB) and repo.entries(BOB)
