"""``Memory.timeline``: turns, facts and digests in time order, grouped, with supersessions
marked and a narrative (heuristic; the LLM's when one is configured)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from madeleine import Memory
from madeleine.embed.base import Embedder
from tests.fake_llm import FakeLLM, fake_llm_fixture  # noqa: F401
from tests.fakes import HashingEmbedder

DAY = 86_400.0
T0 = 1_700_000_000.0


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    memory = Memory(tmp_path / "m", embedder=HashingEmbedder(dim=256), background=False)
    yield memory
    memory.close()


def moved(mem: Memory) -> None:
    mem.add(
        [{"role": "user", "content": "I live in Lyon.", "timestamp": T0}],
        user_id="u",
        session_id="a",
    )
    mem.add(
        [
            {"role": "user", "content": "Good morning!", "timestamp": T0 + 10 * DAY},
            {
                "role": "user",
                "content": "We moved: I now live in Berlin.",
                "timestamp": T0 + 10 * DAY + 60,
            },
        ],
        user_id="u",
        session_id="b",
    )
    assert mem.wait(30)


def test_items_are_in_time_order_grouped_by_day_and_session(mem: Memory) -> None:
    moved(mem)
    timeline = mem.timeline("u")
    times = [i.timestamp for i in timeline.items]
    assert times == sorted(times)
    assert {i.kind for i in timeline.items} == {"turn", "fact"}
    assert all(i.id and i.text and isinstance(i.timestamp, datetime) for i in timeline.items)
    assert [(g.day, g.session_id) for g in timeline.groups] == [
        (datetime.fromtimestamp(T0, UTC).date().isoformat(), "a"),
        (datetime.fromtimestamp(T0 + 10 * DAY, UTC).date().isoformat(), "b"),
    ]
    lyon = next(i for i in timeline.items if i.kind == "fact" and "Lyon" in i.text)
    berlin = next(i for i in timeline.items if i.kind == "fact" and "Berlin" in i.text)
    assert lyon.superseded_by == berlin.id and berlin.supersedes == lyon.id
    assert "changed:" in timeline.narrative and "Berlin" in timeline.narrative
    assert not timeline.llm


def test_a_time_window_and_a_query_narrow_it(mem: Memory) -> None:
    moved(mem)
    later = mem.timeline("u", start=datetime.fromtimestamp(T0 + 5 * DAY, UTC))
    assert all(i.timestamp.timestamp() >= T0 + 5 * DAY for i in later.items)
    assert not any("Lyon" in i.text and i.kind == "turn" for i in later.items)
    about = mem.timeline("u", "where do I live")
    texts = " ".join(i.text for i in about.items)
    assert "Berlin" in texts and "Lyon" in texts  # the superseded version comes with it
    assert "Good morning" not in texts
    with pytest.raises(ValueError, match="start is after end"):
        mem.timeline("u", start=T0 + DAY, end=T0)


def test_archived_items_are_left_out_unless_asked_and_limit_keeps_the_latest(
    mem: Memory,
) -> None:
    moved(mem)
    first = mem.timeline("u").items[0]
    mem.archive(first.id, user_id="u")
    assert first.id not in {i.id for i in mem.timeline("u").items}
    shown = {i.id: i for i in mem.timeline("u", include_archived=True).items}
    assert shown[first.id].archived
    latest = mem.timeline("u", limit=2)
    assert latest.truncated and len(latest.items) == 2
    assert latest.items[-1].timestamp == mem.timeline("u").items[-1].timestamp


def test_an_unknown_user_has_an_empty_timeline(mem: Memory) -> None:
    timeline = mem.timeline("nobody")
    assert timeline.items == [] and timeline.groups == []
    assert timeline.narrative == "Nothing happened in this period."


def _with_llm(where: Path, fake_llm: FakeLLM) -> Memory:
    return Memory(
        where,
        embedder=HashingEmbedder(dim=256),
        background=False,
        llm_base_url=fake_llm.base_url,
        llm_model="m",
        llm_max_retries=0,
    )


def test_with_an_llm_the_narrative_is_the_models_and_falls_back_on_failure(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    memory = _with_llm(tmp_path / "l", fake_llm)
    try:
        fake_llm.script(*[500] * 20)  # the write path's extraction calls fail: rules take over
        moved(memory)
        fake_llm.clear()
        fake_llm.script({"narrative": "Lived in Lyon, then moved to Berlin."})
        told = memory.timeline("u")
        assert told.llm and told.narrative == "Lived in Lyon, then moved to Berlin."
        assert "Berlin" in fake_llm.requests[-1]["messages"][-1]["content"]
        fake_llm.script("not json")
        fallback = memory.timeline("u")
        assert not fallback.llm and "Berlin" in fallback.narrative
    finally:
        memory.close()


def test_a_query_that_matches_nothing_shows_nothing(tmp_path: Path, embedder: Embedder) -> None:
    """With a real embedder every item is some distance from any query: only what the
    query's words or meaning find is kept, not the dense channel's long tail."""
    with Memory(tmp_path / "real", embedder=embedder, background=False) as memory:
        memory.add(
            [
                {"role": "user", "content": "I moved to Denver last week for the new job."},
                {"role": "user", "content": "Thanks, you're the best!"},
                {"role": "user", "content": "I love a flat white in the morning."},
            ],
            user_id="u",
            session_id="s",
            timestamp=T0,
        )
        memory.index_pending()
        assert memory.timeline("u", "zebra quantum").items == []
        about = memory.timeline("u", "Denver")
        assert any("Denver" in i.text for i in about.items)
        assert not any("flat white" in i.text for i in about.items)


def test_turns_said_at_one_moment_keep_the_order_they_were_said(mem: Memory) -> None:
    """Twelve turns with one timestamp: ep_10 comes after ep_9, not after ep_1."""
    turns = [{"role": "user", "content": f"Note number {n} about the garden."} for n in range(12)]
    mem.add(turns, user_id="u", session_id="a", timestamp=T0)
    assert mem.wait(30)
    said = [i.text for i in mem.timeline("u").items if i.kind == "turn"]
    assert said == [f"user: Note number {n} about the garden." for n in range(12)]


def test_the_owner_reads_vaulted_values_and_the_llm_never_does(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    """Found trying the lifecycle as a newcomer: the narrative said "The user's gym number is
    [pii:loyalty_number:…]" while facts() said GX-4471. The timeline is built and narrated
    on placeholders, then restored for its owner."""
    said = "My gym membership number is GX-4471 and it renews March 3rd."
    with Memory(tmp_path / "m", embedder=HashingEmbedder(dim=256), background=False) as mem:
        mem.add([{"role": "user", "content": said, "timestamp": T0}], user_id="u")
        mem.index_pending()
        told = mem.timeline("u")
        assert "GX-4471" in told.narrative and "[pii:" not in told.narrative
        assert all("[pii:" not in item.text for item in told.items)
        assert any("GX-4471" in item.text for g in told.groups for item in g.items)
    memory = _with_llm(tmp_path / "l", fake_llm)
    try:
        fake_llm.script(*[500] * 20)  # extraction falls back on the rules
        memory.add([{"role": "user", "content": said, "timestamp": T0}], user_id="u")
        memory.index_pending()
        fake_llm.clear()
        fake_llm.script({"narrative": "Joined a gym."})
        memory.timeline("u")
        assert "GX-4471" not in str(fake_llm.requests)
    finally:
        memory.close()
