"""Graph memory: entities at index time, guarded merging, PPR recall, deletes, the viewer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from madeleine import Memory
from madeleine.embed.base import Embedder
from madeleine.graph.entities import EntityExtractor, entity_key
from madeleine.text.analyzer import MultilingualAnalyzer
from tests.fake_llm import FakeLLM, fake_llm_fixture  # noqa: F401
from tests.read.test_fact_search import _moved as moved_from_beijing_to_shanghai

QUERY = "What did we learn while working on Project Falcon?"
TARGET = "gateway_v2 silently drops headers larger than 8 KB."

DISTRACTORS = [
    "I learned a lot working on my garden project this spring.",
    "We learned that the project timeline was too short.",
    "Working late again; the whole team is tired.",
    "What we learned from the retro: write things down.",
    "My sister is working on her thesis about birds of prey.",
    "The falcon at the zoo was beautiful.",
    "Lunch was ramen again.",
    "The quarterly planning meeting moved to Thursday.",
    "I should learn to say no to extra projects.",
    "Our designer is working on a new logo.",
    "The train was late this morning.",
    "We shipped the mobile release on time.",
    "Reading a book about what teams learn from failure.",
    "Coffee machine on the third floor is broken.",
    "The interns are working on onboarding docs.",
]


def _corpus(memory: Memory) -> None:
    sessions = [
        ("falcon", ["Project Falcon now routes every request through gateway_v2."]),
        ("ops", [TARGET]),
        *[(f"d{i}", [text]) for i, text in enumerate(DISTRACTORS)],
    ]
    for day, (session, texts) in enumerate(sessions, start=1):
        memory.add(
            [{"role": "user", "content": t, "id": f"{session}-{n}"} for n, t in enumerate(texts)],
            user_id="dev",
            session_id=session,
            timestamp=f"2024-03-{day:02d}T10:00:00Z",
        )
    memory.wait(timeout=120)


def _passages(view: dict[str, Any]) -> list[dict[str, Any]]:
    return [node for node in view["nodes"] if node["type"] == "passage"]


def _turns(hits: list) -> list:  # type: ignore[type-arg]
    return [h for h in hits if h.kind == "turn"]


def _target_rank(hits: list) -> int | None:  # type: ignore[type-arg]
    for rank, hit in enumerate(hits, start=1):
        if hit.text.endswith(TARGET):
            return rank
    return None


def test_two_hops_away_with_no_shared_word_only_the_graph_finds_it(
    tmp_path: Path, embedder: Embedder
) -> None:
    assert not set(TARGET.lower().split()) & set(QUERY.lower().rstrip("?").split())
    # one seed is enough here: no widening, so the path must run through Project Falcon
    with Memory(tmp_path / "m", embedder=embedder, graph_min_seeds=1) as memory:
        _corpus(memory)
        plain = {"windows": False, "sessions": False, "entities": False, "diversify": False}
        dense = memory.search(QUERY, user_id="dev", limit=5, channels=["dense"], stages=plain)
        bm25 = memory.search(QUERY, user_id="dev", limit=5, channels=["bm25"], stages=plain)
        graph = memory.search(QUERY, user_id="dev", limit=5, channels=["graph"], stages=plain)
        assert _target_rank(dense) is None and _target_rank(bm25) is None
        rank = _target_rank(graph)
        assert rank is not None
        found = graph[rank - 1]
        explain = found.explain["graph"]
        assert [seed["entity"] for seed in explain["seeds"]] == ["Project Falcon"]
        assert explain["seeds"][0]["how"] == "dictionary"
        assert explain["path"][0] == "entity:Project Falcon"
        assert "entity:gateway_v2" in explain["path"] and explain["path"][-1] == found.id
        # in the fused default ranking the graph channel lifts it above where it was among the
        # turns (the default also lists the distractors' open cards, which no channel list has)
        fused = _target_rank(_turns(memory.search(QUERY, user_id="dev", limit=20)))
        without = _target_rank(
            _turns(memory.search(QUERY, user_id="dev", limit=20, channels=["dense", "bm25"]))
        )
        assert fused is not None and without is not None and fused < without


def test_viewer_graph_and_deletes_remove_nodes(tmp_path: Path, embedder: Embedder) -> None:
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        _corpus(memory)
        assert memory.stats()["graph"] == {"entities": 2, "mentions": 3}
        view = memory.graph("dev", around="gateway_v2", depth=2)
        ids = {node["id"] for node in view["nodes"]}
        assert view["around"] == "entity:gateway_v2"
        assert "entity:Project Falcon" in ids
        passages = _passages(view)
        assert any(TARGET in n["label"] for n in passages)
        assert {e["type"] for e in view["edges"]} == {"mentions"}
        around_passage = memory.graph("dev", around=passages[0]["id"], depth=1)
        assert around_passage["around"] == passages[0]["id"]
        with pytest.raises(ValueError, match="no entity"):
            memory.graph("dev", around="nothing like this")
        with pytest.raises(ValueError, match="depth"):
            memory.graph("dev", around="gateway_v2", depth=9)

        assert memory.delete_message("ops-0", user_id="dev")
        memory.wait(timeout=60)
        still = memory.graph("dev", around="gateway_v2", depth=1)
        assert not any(TARGET in n.get("label", "") for n in still["nodes"])
        assert memory.delete_message("falcon-0", user_id="dev")
        with pytest.raises(ValueError, match="no entity"):
            memory.graph("dev", around="gateway_v2")  # no mention left: the entity is gone
        assert memory.stats()["graph"] == {"entities": 0, "mentions": 0}


def test_guarded_merging_never_merges_distinct_identifiers() -> None:
    assert entity_key("SR-2023-052") == entity_key("sr 2023 052") == "sr2023052"
    assert entity_key("SR-2023-052") != entity_key("SR-2023-053")
    assert entity_key("soul_server") == entity_key("Soul Server") == entity_key("soul-server")
    assert entity_key("Zoë") == entity_key("ZOE")
    assert entity_key("Caroline's") == entity_key("caroline")
    extractor = EntityExtractor(MultilingualAnalyzer())
    found = {
        m.key: m
        for m in extractor.extract(
            'Fixed SR-2023-052 and SR-2023-053 in soul_server; met Bob Smith ("Bobby").'
        )
    }
    assert {"sr2023052", "sr2023053", "soulserver", "bobsmith"} <= set(found)
    assert "fixedsr2023052" not in found  # a name span never swallows an identifier
    assert found["bobby"].alias_of == "bobsmith"
    vaulted = extractor.extract("use [pii:loyalty_number:vabcdef1234] and [pii:password] for Delta")
    assert [(m.surface, m.type) for m in vaulted] == [
        ("[pii:loyalty_number:vabcdef1234]", "pii"),
        ("Delta", "name"),
    ]
    known = extractor.extract("thanks, dubu loved it", {"dubu": "dubu"})
    assert [m.key for m in known] == ["dubu"]  # the dictionary matches whatever the case
    assert extractor.extract("Wow. Thanks!") == []  # sentence-initial capitals are not names


def test_forgetting_a_user_removes_the_graph(tmp_path: Path, embedder: Embedder) -> None:
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        _corpus(memory)
        memory.add({"role": "user", "content": "Project Falcon is mine too."}, user_id="other")
        memory.wait(timeout=60)
        assert memory.stats()["graph"] == {"entities": 3, "mentions": 4}
        memory.forget_user("dev")
        assert memory.stats()["graph"] == {"entities": 1, "mentions": 1}
        assert memory.graph("other", around="Project Falcon", depth=1)["nodes"]
        with pytest.raises(ValueError, match="no entity"):
            memory.graph("dev", around="Project Falcon")


def test_entities_merge_across_messages_and_aliases_resolve(
    tmp_path: Path, embedder: Embedder
) -> None:
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        memory.add(
            [
                {"role": "user", "content": "Ticket SR-2023-052 is about soul_server."},
                {"role": "user", "content": "Soul Server crashed again; see SR 2023 052."},
                {"role": "user", "content": "SR-2023-053 is a different ticket."},
                {"role": "user", "content": 'I met Robert Kim ("Bob") at the office.'},
                {"role": "user", "content": "Lunch with Bob tomorrow."},
            ],
            user_id="u",
        )
        memory.wait(timeout=120)
        around = memory.graph("u", around="soul_server", depth=1)
        assert len(_passages(around)) == 2
        ticket = memory.graph("u", around="sr2023052", depth=1)
        assert len(_passages(ticket)) == 2
        other = memory.graph("u", around="SR-2023-053", depth=1)
        assert len(_passages(other)) == 1
        bob = memory.graph("u", around="Bob", depth=1)
        assert bob["around"] == "entity:Robert Kim"
        assert len(_passages(bob)) == 2


def test_the_cached_graph_grows_with_new_messages_like_a_fresh_build(
    tmp_path: Path, embedder: Embedder
) -> None:
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        _corpus(memory)
        assert memory.search(QUERY, user_id="dev", channels=["graph"])  # builds the graph
        memory.add(
            [
                {"role": "user", "content": "gateway_v2 also needs a retry budget."},
                {"role": "user", "content": "Deploying Project Falcon to Orion-7 next week."},
            ],
            user_id="dev",
            session_id="later",
        )
        memory.wait(timeout=60)
        grown = memory.graph("dev", around="gateway_v2", depth=4)
        extended = memory._engine.searcher.graph_footprint("dev")
    with Memory(tmp_path / "m", embedder=embedder) as fresh:
        rebuilt = fresh.graph("dev", around="gateway_v2", depth=4)
        assert fresh._engine.searcher.graph_footprint("dev") == extended
    assert sorted(n["id"] for n in grown["nodes"]) == sorted(n["id"] for n in rebuilt["nodes"])
    assert "entity:Orion-7" in {n["id"] for n in grown["nodes"]}
    assert len(grown["edges"]) == len(rebuilt["edges"])


def test_an_llm_can_name_entities_the_rules_miss(
    tmp_path: Path, embedder: Embedder, fake_llm: FakeLLM
) -> None:
    def reply(request: dict[str, Any]) -> dict[str, Any]:
        system = str(request["messages"][0]["content"])
        if "memory graph" in system:
            return {
                "entities": [
                    {"turn": 0, "name": "the blue lagoon", "type": "place"},
                    {"turn": 0, "name": "Atlantis", "type": "place"},  # not in the turn
                    {"turn": 1, "name": "blue lagoon", "type": "place"},
                ]
            }
        return {"cards": []}  # the fact extractor's call

    fake_llm.script(reply, reply, reply)
    options: dict[str, Any] = {
        "llm_base_url": fake_llm.base_url,
        "llm_model": "m",
        "graph_llm_entities": True,
    }
    with Memory(tmp_path / "m", embedder=embedder, **options) as memory:
        memory.add(
            [
                {"role": "user", "content": "we swam in the blue lagoon"},
                {"role": "user", "content": "the blue lagoon was packed"},
            ],
            user_id="u",
        )
        memory.wait(timeout=60)
        view = memory.graph("u", around="blue lagoon", depth=1)
        assert len(_passages(view)) == 2
        kinds = {n["kind"] for n in view["nodes"] if n["type"] == "entity"}
        assert kinds == {"llm:place"}
        with pytest.raises(ValueError, match="no entity"):
            memory.graph("u", around="Atlantis")  # invented names are dropped

        fake_llm.script("not json", "still not json", "nope", "nope", "nope", "nope")
        memory.add({"role": "user", "content": "Dinner at Noma tonight."}, user_id="u")
        memory.wait(timeout=60)  # a failing model leaves the rules' entities
        assert memory.graph("u", around="Noma", depth=1)["nodes"]


SAID_BY_ANN = [
    "I spent the whole weekend repainting the fence.",
    "Rock climbing at the gym is my new thing.",
    "I finally finished that thousand-piece puzzle.",
    "Baking sourdough every Sunday keeps me sane.",
]
SAID_BY_BEN = [
    "My weekend was quiet, mostly reading.",
    "Ann, your fence looked great in the photo!",
    "I started learning the cello last month.",
    "The new bakery downtown is worth a visit.",
]


def test_a_named_speaker_leads_to_what_they_said(tmp_path: Path, embedder: Embedder) -> None:
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        turns = [
            {"role": "user", "name": name, "content": text, "id": f"{name}-{n}"}
            for n, pair in enumerate(zip(SAID_BY_ANN, SAID_BY_BEN, strict=True))
            for name, text in zip(("Ann", "Ben"), pair, strict=True)
        ]
        memory.add(turns, user_id="pair", session_id="s1", timestamp="2024-05-01T10:00:00Z")
        memory.add(
            {"role": "user", "content": "note to self: water the plants"},
            user_id="pair",
            session_id="s2",
        )
        memory.wait(timeout=60)
        hits = memory.search(
            "What does Ann do for fun?", user_id="pair", limit=4, channels=["graph"]
        )
        assert [h.speaker for h in hits] == ["Ann"] * 4
        explain = hits[0].explain["graph"]
        assert [(s["entity"], s["how"]) for s in explain["seeds"]][-1] == ("Ann", "speaker")
        assert explain["path"] == ["speaker:Ann", hits[0].id]
        # Ben's turn that names Ann is reached through the entity Ann, not as her words
        mentioned = next(t for t in SAID_BY_BEN if t.startswith("Ann"))
        view = memory.graph("pair", around="speaker:Ann", depth=1)
        assert view["around"] == "speaker:Ann"
        assert {e["type"] for e in view["edges"]} == {"said"}
        said = {n["label"] for n in view["nodes"] if n["type"] == "passage"}
        assert said == {f"Ann: {t}" for t in SAID_BY_ANN}
        assert all(mentioned not in label for label in said)
        # a bare role names nobody: no speaker node for "user"
        with pytest.raises(ValueError, match="no entity"):
            memory.graph("pair", around="speaker:user")
        # deleting what Ann said removes her speaker node with its last edge
        for n in range(len(SAID_BY_ANN)):
            assert memory.delete_message(f"Ann-{n}", user_id="pair")
        with pytest.raises(ValueError, match="no entity"):
            memory.graph("pair", around="speaker:Ann")


def test_current_facts_are_graph_nodes(tmp_path: Path, embedder: Embedder) -> None:
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        moved_from_beijing_to_shanghai(memory)
        facts = {f.statement: f for f in memory.facts("u", include_history=True)}
        current = next(f for s, f in facts.items() if "Shanghai" in s)
        old = next(f for s, f in facts.items() if "Beijing" in s)
        view = memory.graph("u", around=current.id, depth=1)
        assert view["around"] == current.id
        assert view["nodes"][0] == {"id": current.id, "type": "fact", "label": current.statement}
        kinds = {(e["source"], e["target"], e["type"]) for e in view["edges"]}
        source = next(n["id"] for n in view["nodes"] if n["type"] == "passage")
        assert (source, current.id, "source") in kinds
        assert ("entity:Shanghai", current.id, "mentions") in kinds
        # a superseded version is history, not a node of the current graph
        with pytest.raises(ValueError, match="no fact"):
            memory.graph("u", around=old.id)
        # the walk from Shanghai reaches the fact, which search scores with the graph's help
        hits = memory.search("Tell me about Shanghai", user_id="u", limit=5)
        fact = next(h for h in hits if h.id == current.id)
        assert fact.explain["channels"]["graph"]["calibrated"] > 0
        assert fact.explain["graph"]["path"] == ["entity:Shanghai", current.id]
