from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from madeleine import Memory
from madeleine.embed.base import Embedder
from madeleine.store.sqlite.lexical import scope_token
from tests.postgres import BACKEND

SECRET = "Zanzibarian marmalade recipe"


def _populate(memory: Memory) -> None:
    memory.add(
        [
            {"content": f"My grandmother's {SECRET} uses bitter oranges", "id": "a1"},
            {"content": "I am training for the Berlin marathon", "id": "a2"},
        ],
        user_id="alice",
        session_id="s1",
    )
    memory.add(
        [
            {"content": "I am learning to bake sourdough bread", "id": "b1"},
            {"content": "My marathon plan is for Chicago", "id": "b2"},
        ],
        user_id="bob",
        session_id="s1",
    )
    assert memory.wait(timeout=60)


def test_users_never_see_each_other(memory: Memory) -> None:
    _populate(memory)
    for query in ("marmalade recipe with oranges", "marathon", "bread"):
        for hit in memory.search(query, user_id="bob", limit=50):
            assert hit.source_ids[0].startswith("b"), hit
        assert SECRET not in memory.context(query, user_id="bob").text
        for channel in ("dense", "bm25"):
            hits = memory.search(query, user_id="bob", channels=[channel], limit=50)
            assert all(h.source_ids[0].startswith("b") for h in hits)
    exported = memory.export_user("bob")
    assert SECRET not in str(exported)
    assert {e["external_id"] for e in exported["events"]} == {"b1", "b2"}


def test_delete_checks_owner_when_user_given(memory: Memory) -> None:
    _populate(memory)
    alice_hit = memory.search("marmalade", user_id="alice")[0]
    assert memory.delete(alice_hit.id, user_id="bob") is False
    assert memory.search("marmalade", user_id="alice")[0].id == alice_hit.id
    assert memory.delete(alice_hit.id, user_id="alice") is True


def test_delete_reaches_every_index(
    tmp_path: Path, embedder: Embedder, stored_text: Callable[[Path], str]
) -> None:
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        _populate(memory)
        hit = memory.search("marmalade", user_id="alice")[0]
        assert hit.source_ids == ["a1"]
        assert memory.delete(hit.id, user_id="alice") is True
        assert memory.delete(hit.id, user_id="alice") is False
        memory.wait(timeout=60)
        for channel in ("dense", "bm25"):
            ids = [
                s
                for h in memory.search("marmalade recipe", user_id="alice", channels=[channel])
                for s in h.source_ids
            ]
            assert "a1" not in ids
        # the next turn quoted the deleted one as context: it was re-indexed without it
        assert SECRET not in str(memory.export_user("alice"))
        integrity = memory.integrity()
        assert integrity["episodes"] == integrity["vectors"] == integrity["fts"] == 3
    assert SECRET not in stored_text(tmp_path / "m")
    assert "marmalad" not in stored_text(tmp_path / "m")  # not even the stemmed term


def test_delete_message_by_external_id(memory: Memory) -> None:
    _populate(memory)
    assert memory.delete_message("b1", user_id="bob") is True
    assert memory.delete_message("b1", user_id="bob") is False
    assert [e["external_id"] for e in memory.export_user("bob")["events"]] == ["b2"]


def test_forget_user_removes_everything(
    tmp_path: Path, embedder: Embedder, stored_text: Callable[[Path], str]
) -> None:
    with Memory(tmp_path / "m", embedder=embedder, ann_threshold=1) as memory:
        _populate(memory)
        assert memory.search("marathon", user_id="alice")  # builds alice's ANN index file
        if BACKEND == "sqlite":
            assert list((tmp_path / "m" / "ann").glob("*.usearch"))
        # every other place a user id is kept: lifecycle, buffers, agent states
        memory.pin(memory.search("marathon", user_id="alice")[0].id, user_id="alice")
        memory.session("s9", user_id="alice").append({"role": "user", "content": "hi"})
        memory.agent("planner", user_id="alice").transition("planning", reason="trip")
        assert memory.wait(timeout=60)
        counts = memory.forget_user("alice")  # the buffer's message joined the log: 3
        assert counts["events"] == 3 and counts["episodes"] == 3 and counts["vectors"] == 3
        assert memory.search("marathon", user_id="alice") == []
        assert memory.export_user("alice") == {
            "user_id": "alice",
            "events": [],
            "episodes": [],
            "facts": [],
            "vault": [],
            "short_term": [],
            "agents": [],
            "lifecycle": {"states": [], "log": []},
        }
        assert next(h.source_ids for h in memory.search("marathon", user_id="bob")) == ["b2"]
        assert not list((tmp_path / "m" / "ann").glob(scope_token("alice") + "*"))  # no file
        integrity = memory.integrity()
        assert integrity["episodes"] == integrity["vectors"] == integrity["fts"] == 2
    text = stored_text(tmp_path / "m")
    assert SECRET not in text and "Berlin" not in text and "berlin" not in text
    assert "alice" not in text  # not even the user id


def test_re_adding_creates_nothing_new(memory: Memory) -> None:
    batch = [{"content": "hello there", "id": "m1"}, {"content": "ok"}, {"content": "ok"}]
    first = memory.add(batch, user_id="u", session_id="s", timestamp="2024-05-01T12:00:00")
    assert len(first.added) == 3  # two identical "ok"s in one call are two messages
    again = memory.add(batch, user_id="u", session_id="s", timestamp="2024-05-01T12:00:00")
    assert again.added == [] and sorted(again.duplicates) == sorted(first.added)
    # same external id, different text: still the same message
    same_id = memory.add([{"content": "edited", "id": "m1"}], user_id="u", session_id="s")
    assert same_id.added == []
    # same content at another time is a new message
    later = memory.add(
        [{"content": "ok"}], user_id="u", session_id="s", timestamp="2024-05-02T12:00:00"
    )
    assert len(later.added) == 1
    # the same external id belongs to each user separately
    other = memory.add([{"content": "hello there", "id": "m1"}], user_id="v")
    assert len(other.added) == 1
    memory.wait(timeout=60)
    assert memory.stats()["events"] == 5 and memory.integrity()["episodes"] == 5


def test_vectors_for_large_users_use_the_ann_index(tmp_path: Path, embedder: Embedder) -> None:
    topics = [
        "rock climbing",
        "sourdough baking",
        "jazz piano",
        "tax returns",
        "garden tomatoes",
        "chess openings",
        "marathon training",
        "python debugging",
    ]
    messages = [
        {"content": f"Note {i}: today I spent time on {topics[i % len(topics)]}", "id": f"n{i}"}
        for i in range(80)
    ]
    with Memory(tmp_path / "m", embedder=embedder, ann_threshold=40) as memory:
        memory.add(messages, user_id="u")
        memory.wait(timeout=120)
        ann = memory.search("playing jazz on the piano", user_id="u", channels=["dense"], limit=5)
        assert all("jazz piano" in h.text for h in ann)
        if BACKEND == "sqlite":  # PostgreSQL keeps it as an HNSW index in the database
            assert (tmp_path / "m" / "ann").is_dir()
        # a deletion is reflected in the ANN results
        memory.delete(ann[0].id, user_id="u")
        after = memory.search("playing jazz on the piano", user_id="u", channels=["dense"], limit=5)
        assert ann[0].id not in [h.id for h in after]
    exact_dir = tmp_path / "exact"
    with Memory(exact_dir, embedder=embedder) as exact:
        exact.add(messages, user_id="u")
        exact.wait(timeout=120)
        top = exact.search("playing jazz on the piano", user_id="u", channels=["dense"], limit=5)
        assert all("jazz piano" in h.text for h in top)
