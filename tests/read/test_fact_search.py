"""Facts in search(): current truth by default, as_of, history, decay, deletes, channels."""

from __future__ import annotations

from pathlib import Path

import pytest

from madeleine import Memory
from madeleine.embed.base import Embedder


def _moved(memory: Memory) -> None:
    memory.add(
        {"role": "user", "content": "I live in Beijing.", "id": "a"},
        user_id="u",
        session_id="s1",
        timestamp="2023-01-10T09:00:00Z",
    )
    memory.add(
        {"role": "user", "content": "I moved to Shanghai last week.", "id": "b"},
        user_id="u",
        session_id="s2",
        timestamp="2024-03-05T09:00:00Z",
    )
    memory.wait(timeout=120)


def _homes(hits: list) -> list[str]:  # type: ignore[type-arg]
    return [
        "Shanghai" if "Shanghai" in h.text else "Beijing"
        for h in hits
        if h.kind == "fact" and h.explain["fact"]["key"] == "location.home"
    ]


def test_search_returns_current_truth_then_as_of_then_history(
    tmp_path: Path, embedder: Embedder
) -> None:
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        _moved(memory)
        hits = memory.search("where does the user live?", user_id="u")
        assert _homes(hits) == ["Shanghai"]
        fact = next(h for h in hits if h.kind == "fact")
        assert fact.id.startswith("fact_") and fact.source_ids == ["b"]
        assert fact.session_id == "s2"
        assert fact.explain["fact"]["status"] == "current"
        assert (
            set(fact.explain["channels"]) <= {"dense", "bm25", "graph"} and fact.explain["channels"]
        )

        then = memory.search("where does the user live?", user_id="u", as_of="2023-06-01")
        assert _homes(then) == ["Beijing"]
        # as of then, nothing said later is returned either
        assert all(h.timestamp.year == 2023 for h in then)

        both = memory.search("where does the user live?", user_id="u", include_history=True)
        assert sorted(_homes(both)) == ["Beijing", "Shanghai"]
        old = next(h for h in both if h.kind == "fact" and "Beijing" in h.text)
        assert old.explain["fact"]["status"] == "superseded"
        assert old.explain["fact"]["superseded_by"] == fact.id


def test_channels_choose_facts_or_passages(tmp_path: Path, embedder: Embedder) -> None:
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        _moved(memory)
        only_facts = memory.search("Shanghai", user_id="u", channels=["facts"])
        assert only_facts and all(h.kind == "fact" for h in only_facts)
        passages = memory.search("Shanghai", user_id="u", channels=["dense", "bm25"])
        assert passages and all(h.kind != "fact" for h in passages)
        lexical = memory.search("Shanghai", user_id="u", channels=["bm25", "facts"])
        facts = [h for h in lexical if h.kind == "fact"]
        assert facts and all(set(h.explain["channels"]) == {"bm25"} for h in facts)
        with pytest.raises(ValueError, match="unknown names"):
            memory.search("x", user_id="u", channels=["telepathy"])
        with pytest.raises(TypeError, match="include_history"):
            memory.search("x", user_id="u", include_history="yes")  # type: ignore[arg-type]


def test_volatile_facts_decay_and_stable_ones_do_not(tmp_path: Path, embedder: Embedder) -> None:
    with Memory(tmp_path / "m", embedder=embedder, half_life_days={"fact": 30}) as memory:
        memory.add(
            [
                {"role": "user", "content": "I live in Lisbon.", "id": "home"},
                {"role": "user", "content": "I prefer window seats.", "id": "seat"},
            ],
            user_id="u",
            timestamp="2020-01-01T00:00:00Z",
        )
        memory.wait(timeout=120)
        hits = memory.search(
            "Lisbon window seats", user_id="u", channels=["facts"], now="2024-01-01T00:00:00Z"
        )
        by_key = {h.explain["fact"]["key"]: h for h in hits}
        home, seat = by_key["location.home"], by_key["preference.seat"]
        assert home.explain["decay"]["exempt"] is False
        assert home.explain["decay"]["factor"] < 1e-6
        assert seat.explain["decay"] == {"factor": 1.0, "exempt": True}
        assert hits[0].explain["fact"]["key"] == "preference.seat"
        undecayed = memory.search(
            "Lisbon window seats",
            user_id="u",
            channels=["facts"],
            now="2024-01-01T00:00:00Z",
            stages={"decay": False},
        )
        assert all("decay" not in h.explain for h in undecayed)


def test_fact_hits_follow_deletes_and_restore_pii_for_the_owner(
    tmp_path: Path, embedder: Embedder
) -> None:
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        memory.add(
            {"role": "user", "content": "My checking account number is 9876543210.", "id": "c"},
            user_id="u",
            timestamp="2024-05-01T00:00:00Z",
        )
        memory.wait(timeout=120)
        facts = [
            h for h in memory.search("checking account number", user_id="u") if h.kind == "fact"
        ]
        assert facts and "9876543210" in facts[0].text
        assert memory.search("checking account number", user_id="other") == []
        memory.delete_message("c", user_id="u")
        assert memory.search("checking account number", user_id="u") == []


def test_context_lists_the_query_facts_first_and_stays_bounded(
    tmp_path: Path, embedder: Embedder
) -> None:
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        memory.add(
            [
                {"role": "user", "content": f"I like {thing}.", "id": f"l{i}"}
                for i, thing in enumerate(
                    ["jazz", "hiking", "sushi", "chess", "tea", "tennis", "opera", "kayaks"]
                    + [f"topic number {n}" for n in range(30)]
                )
            ]
            + [{"role": "user", "content": "I'm allergic to penicillin.", "id": "al"}],
            user_id="u",
            timestamp="2024-05-01T00:00:00Z",
        )
        memory.wait(timeout=120)
        assert len(memory.facts("u")) > 30
        ctx = memory.context("what is the user allergic to?", user_id="u")
        facts_part = ctx.text.split("\n### ")[0]
        lines = [line for line in facts_part.splitlines() if line.startswith("- ")]
        assert "penicillin" in lines[0]
        assert len(lines) <= 20


def test_deleting_a_fact_hit_deletes_its_messages_and_the_old_truth_returns(
    tmp_path: Path, embedder: Embedder
) -> None:
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        _moved(memory)
        shanghai = next(
            h for h in memory.search("where does the user live?", user_id="u") if h.kind == "fact"
        )
        assert not memory.delete(shanghai.id, user_id="someone-else")
        assert memory.delete(shanghai.id, user_id="u")
        assert not memory.delete(shanghai.id, user_id="u")  # already gone
        assert [e["external_id"] for e in memory.export_user("u")["events"]] == ["a"]
        assert _homes(memory.search("where does the user live?", user_id="u")) == ["Beijing"]
        with pytest.raises(ValueError, match="fact_12"):
            memory.delete("facts_1", user_id="u")
