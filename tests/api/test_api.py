from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest

from madeleine import Memory
from madeleine.embed.base import Embedder
from madeleine.text.tokens import estimate_tokens
from tests.conftest import trip_conversation


def test_add_wait_search_returns_explained_hits(memory: Memory) -> None:
    result = memory.add(
        trip_conversation(), user_id="u1", session_id="s1", timestamp="2024-09-15T10:00:00"
    )
    assert result.count == 4 and result.duplicates == []
    assert memory.wait(timeout=60)
    hits = memory.search("violin lessons for my kid", user_id="u1", limit=3)
    assert hits[0].source_ids == ["t4"]
    top = hits[0]
    assert top.id.startswith("ep_") and top.kind == "turn"
    assert "violin" in top.text and top.text.startswith("Alice:")
    assert top.timestamp == datetime(2024, 9, 15, 10, 0, tzinfo=UTC)
    assert set(top.explain["channels"]) == {"dense", "bm25"}
    assert top.explain["fused"] == pytest.approx(top.score, abs=1e-6)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_a_reply_is_found_by_what_it_refers_to(memory: Memory) -> None:
    memory.add(trip_conversation(), user_id="u1", session_id="s1")
    memory.wait(timeout=60)
    hits = memory.search(
        "which Japan Airlines flight did Alice book", user_id="u1", channels=["bm25"], limit=4
    )
    assert "t3" in [s for h in hits for s in h.source_ids]


def test_channels_can_be_selected(memory: Memory) -> None:
    memory.add(trip_conversation(), user_id="u1")
    memory.wait(timeout=60)
    for channel in ("dense", "bm25"):
        hits = memory.search("window seats", user_id="u1", channels=[channel])
        assert hits and set(hits[0].explain["channels"]) == {channel}
        # other hits may come in through a neighbouring turn or their session, never
        # through a channel that was not asked for
        assert all(set(h.explain["channels"]) <= {channel} for h in hits)


def test_time_range_filters_by_event_time(memory: Memory) -> None:
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
    memory.wait(timeout=60)
    only_2024 = memory.search(
        "adopted a pet", user_id="u1", time_range=("2024-01-01T00:00:00", None)
    )
    assert {s for h in only_2024 for s in h.source_ids} == {"new"}  # its turn and its card
    only_2023 = memory.search(
        "adopted a pet", user_id="u1", time_range=(None, datetime(2023, 12, 31, tzinfo=UTC))
    )
    assert {s for h in only_2023 for s in h.source_ids} == {"old"}


def test_context_respects_budget_and_labels_items(memory: Memory) -> None:
    memory.add(trip_conversation(), user_id="u1", session_id="s1", timestamp="2024-09-15T10:00:00")
    memory.wait(timeout=60)
    ctx = memory.context("What did Alice book?", user_id="u1", budget_tokens=2000)
    assert ctx.items and ctx.tokens <= 2000
    assert "### 2024-09-15 · s1" in ctx.text and "\n- Alice:" in ctx.text
    assert "not instructions" in ctx.text
    assert ctx.tokens == estimate_tokens(ctx.text)
    # most relevant first: the items keep the search order, and the best hit is always in
    hits = memory.search("What did Alice book?", user_id="u1", limit=50)
    order = [h.id for h in hits]
    assert ctx.items[0].id == order[0]
    assert [order.index(i.id) for i in ctx.items] == sorted(order.index(i.id) for i in ctx.items)
    for budget in (1, 10, 25, 40, 60, 90, 150):
        small = memory.context("What did Alice book?", user_id="u1", budget_tokens=budget)
        assert small.tokens <= budget
        assert estimate_tokens(small.text) <= budget
        if budget >= 10:  # tiny budgets degrade to the best evidence, never to nothing
            assert small.text and small.items[0].id == order[0]


def test_context_sections_windows_and_dedupe(memory: Memory) -> None:
    turns = [
        ("q1", "user", "Which gym did you recommend for climbing?"),
        ("a1", "assistant", "Try Boulder Barn on 5th street, it opens at 6am."),
        ("x1", "user", "Thanks. Unrelated: my sister visits next month."),
        ("x2", "assistant", "Nice, enjoy the visit."),
        ("q2", "user", "Does Boulder Barn rent climbing shoes?"),
        ("a2", "assistant", "Yes, Boulder Barn rents climbing shoes for 5 dollars."),
    ]
    memory.add(
        [{"role": r, "id": i, "content": c} for i, r, c in turns],
        user_id="u1",
        session_id="gym",
        timestamp="2024-03-02T08:00:00",
    )
    memory.add(
        {"role": "user", "id": "other", "content": "I climbed at Boulder Barn with Tom today."},
        user_id="u1",
        session_id="later",
        timestamp="2024-05-10T18:00:00",
    )
    memory.wait(timeout=60)
    ctx = memory.context("Boulder Barn climbing", user_id="u1", budget_tokens=2000, limit=3)
    # each turn once, even where the windows of two hits overlap
    turns_part = ctx.text[ctx.text.index("\n### ") :]
    lines = [line for line in turns_part.splitlines() if line.startswith("- ")]
    packed_turns = [h for h in ctx.items if h.kind == "turn"]
    assert len(lines) == len(set(lines))
    packed_ids = [h.id for h in packed_turns + ctx.window]
    assert len(packed_ids) == len(set(packed_ids))
    # neighbouring turns come only when they earn it: never the unrelated aside; the
    # evidence packing (specifics the block lacks) marks its own
    windows = [h for h in ctx.window if "evidence" not in h.explain]
    assert all(h.explain["window_of"] in {i.id for i in ctx.items} for h in windows)
    assert "sister" not in ctx.text
    # one section per session, turns in the order they were said
    sessions = {h.session_id for h in packed_turns + ctx.window}
    assert ctx.text.count("\n### ") == len(sessions)
    assert ctx.text.count("### 2024-03-02 · gym\n") == 1
    everything = memory.context("Boulder Barn climbing", user_id="u1", limit=7)
    assert everything.text.count("### 2024-05-10 · later\n") == 1
    assert everything.text.count("### 2024-03-02 · gym\n") == 1
    gym = ctx.text.split("· gym")[1].split("###")[0]
    said = [i for i, _, c in turns if c[:20] in gym]
    assert said == sorted(said, key=[t[0] for t in turns].index)
    # hits are packed first; windows only fill what the budget leaves
    hits_only = memory.context("Boulder Barn climbing", user_id="u1", limit=3, window=0)
    assert hits_only.window == [] and 1 <= len(hits_only.items) <= 3
    tight = memory.context(
        "Boulder Barn climbing", user_id="u1", limit=3, budget_tokens=hits_only.tokens + 2
    )
    assert [h.id for h in tight.items] == [h.id for h in hits_only.items] and not tight.window
    with pytest.raises(ValueError, match="window"):
        memory.context("x", user_id="u1", window=-1)


def test_unknown_user_gets_empty_results(memory: Memory) -> None:
    assert memory.search("anything", user_id="nobody") == []
    assert memory.context("anything", user_id="nobody").items == []
    assert memory.export_user("nobody")["events"] == []
    assert memory.forget_user("nobody")["events"] == 0


def test_stats_and_integrity(memory: Memory) -> None:
    memory.add(trip_conversation(), user_id="u1")
    memory.wait(timeout=60)
    stats = memory.stats()
    assert stats["events"] == 4 and stats["episodes"] == 4 and stats["pending_jobs"] == 0
    assert stats["users"] == 1 and stats["embedder"]
    integrity = memory.integrity()
    assert integrity["episodes"] == integrity["vectors"] == integrity["fts"] == 4
    assert integrity["orphan_episodes"] == integrity["events_without_episode"] == 0


def test_closed_memory_refuses_work(memory: Memory) -> None:
    memory.close()
    from madeleine import StoreClosedError

    with pytest.raises(StoreClosedError):
        memory.search("x", user_id="u1")


def test_out_of_order_turn_reindexes_its_successor(memory: Memory) -> None:
    memory.add(
        [
            {"content": "first", "id": "a", "timestamp": "2024-01-01T10:00:00"},
            {"content": "third: sounds great", "id": "c", "timestamp": "2024-01-01T10:02:00"},
        ],
        user_id="u1",
        session_id="s",
    )
    memory.wait(timeout=60)
    memory.add(
        [
            {
                "content": "second: shall we go kayaking on the river",
                "id": "b",
                "timestamp": "2024-01-01T10:01:00",
            }
        ],
        user_id="u1",
        session_id="s",
    )
    memory.wait(timeout=60)
    episodes = {e["source_ids"][0]: e for e in memory.export_user("u1")["episodes"]}
    assert "kayaking" in episodes["c"]["context"]
    assert memory.integrity()["episodes"] == 3


def test_async_twin(tmp_path: Path, embedder: Embedder) -> None:
    from madeleine import AsyncMemory

    async def scenario() -> list[str]:
        async with AsyncMemory(tmp_path / "m", embedder=embedder) as mem:
            await mem.add(trip_conversation(), user_id="u1")
            assert await mem.wait(timeout=60)
            hits = await mem.search("violin", user_id="u1")
            return hits[0].source_ids

    assert asyncio.run(scenario()) == ["t4"]
