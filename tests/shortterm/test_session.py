"""Conversation buffers: the window within a budget, pinned messages, the rolling summary,
expiry, and the way into long-term memory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from madeleine import Memory
from madeleine.shortterm.summary import heuristic_summary
from madeleine.store.records import BufferedMessage
from tests.fakes import HashingEmbedder


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    memory = Memory(tmp_path / "m", embedder=HashingEmbedder())
    yield memory
    memory.close()


def _talk(session: object, turns: int) -> None:
    for i in range(turns):
        session.append({"role": "user", "content": f"Message number {i}. Some more words here."})  # type: ignore[attr-defined]


def test_window_keeps_recent_messages_within_budget_and_folds_the_rest(mem: Memory) -> None:
    session = mem.session("s1", user_id="u1")
    _talk(session, 30)
    window = session.window(budget_tokens=120)
    assert window.tokens <= 120
    contents = [m["content"] for m in window.messages]
    assert contents[-1].startswith("Message number 29")
    assert contents == sorted(contents, key=lambda c: int(c.split()[2].rstrip(".")))
    assert window.folded == 30 - len(window.messages)
    assert "Message number" in window.summary
    everything = session.window(budget_tokens=100_000)
    assert len(everything.messages) == 30 and everything.summary == "" and everything.folded == 0


def test_pinned_messages_are_always_kept(mem: Memory) -> None:
    session = mem.session("s1", user_id="u1")
    session.append({"role": "system", "content": "The user is allergic to peanuts."}, pinned=True)
    _talk(session, 40)
    window = session.window(budget_tokens=80)
    assert window.messages[0] == {
        "role": "system",
        "content": "The user is allergic to peanuts.",
        "pinned": True,
    }
    assert window.messages[-1]["content"].startswith("Message number 39")


def test_summary_is_stored_and_only_new_messages_are_folded(mem: Memory) -> None:
    calls: list[int] = []
    session = mem.session("s1", user_id="u1")

    def counting(previous: str, messages: list[BufferedMessage]) -> str:
        calls.append(len(messages))
        return heuristic_summary(previous, messages)

    session._summarize = counting  # type: ignore[assignment]
    _talk(session, 20)
    session.window(budget_tokens=60)
    session.window(budget_tokens=60)
    assert len(calls) == 1  # the second window reused the stored summary
    _talk(session, 5)
    session.window(budget_tokens=60)
    assert len(calls) == 2 and calls[1] <= 5


def test_appended_messages_reach_long_term_memory(mem: Memory) -> None:
    session = mem.session("trip", user_id="u1")
    session.append({"role": "user", "content": "I live in Lisbon now."})
    mem.wait()
    hits = mem.search("where does the user live", user_id="u1")
    assert any("Lisbon" in h.text and h.session_id == "trip" for h in hits)


def test_a_bad_message_leaves_the_buffer_unchanged(mem: Memory) -> None:
    session = mem.session("s1", user_id="u1")
    with pytest.raises(ValueError):
        session.append({"role": "user"})
    with pytest.raises(TypeError):
        session.append({"role": "user", "content": 5})
    assert session.messages() == []
    with pytest.raises(ValueError):
        session.window(budget_tokens=0)


def test_sessions_expire_after_their_ttl(mem: Memory) -> None:
    session = mem.session("s1", user_id="u1", ttl_seconds=100)
    now = [1_000.0]
    session._clock = lambda: now[0]
    session.append({"role": "user", "content": "hello"})
    assert len(session.messages()) == 1
    now[0] += 101
    assert session.messages() == [] and session.window().messages == []
    session.append({"role": "user", "content": "a new start"})
    assert [m["content"] for m in session.messages()] == ["a new start"]


def test_clear_forget_and_export(mem: Memory) -> None:
    session = mem.session("s1", user_id="u1")
    _talk(session, 3)
    assert [s["session_id"] for s in mem.sessions("u1")] == ["s1"]
    assert "Message number 2" in str(mem.export_user("u1")["short_term"])
    assert session.clear() == 3 and session.messages() == []
    _talk(session, 2)
    mem.forget_user("u1")
    assert session.messages() == [] and mem.sessions("u1") == []


def test_buffers_survive_reopening(tmp_path: Path) -> None:
    with Memory(tmp_path / "m", embedder=HashingEmbedder()) as first:
        first.session("s1", user_id="u1").append({"role": "user", "content": "remember me"})
        first.agent("a1", user_id="u1").transition("planning")
    with Memory(tmp_path / "m", embedder=HashingEmbedder()) as second:
        assert second.session("s1", user_id="u1").messages()[0]["content"] == "remember me"
        assert second.agent("a1", user_id="u1").state == "planning"
