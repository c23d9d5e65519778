from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from madeleine import Memory
from madeleine.embed.base import Embedder
from madeleine.read.query import query_entities
from madeleine.text.analyzer import MultilingualAnalyzer

NOW = datetime(2024, 9, 18, 15, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What did Caroline research in Sweden last May?", ["Caroline", "Sweden"]),
        ("status of SR-2023-052 and soul_server?", ["SR-2023-052", "soul_server"]),
        ("my MileagePlus number 12345678", ["12345678", "MileagePlus"]),
        ('what did "the blue door" mean', ["the blue door"]),
        ("When did Melanie visit New York?", ["Melanie", "New York"]),
        ("I moved to Shanghai. Anna said hi", ["Shanghai", "Anna"]),
        ("3일 전에 민수가 보낸 주문번호 A-1234", ["A-1234", "민수"]),
        ("what did I eat in 2023?", []),
    ],
)
def test_query_entities(query: str, expected: list[str]) -> None:
    assert query_entities(query, MultilingualAnalyzer()) == expected


def _tickets(memory: Memory) -> None:
    lines = [
        ("a1", "Ticket SR-2023-053 is about the login page timing out for some users."),
        ("a2", "Ticket SR-2023-052 is waiting for a refund approval from finance."),
        ("a3", "The SR-2023-054 issue about login timeouts was closed yesterday."),
        ("a4", "Login problems again today, users are timing out on the page."),
    ]
    filler = [
        (f"f{i}", f"We talked about the weather and lunch plans, note {i}.") for i in range(30)
    ]
    memory.add(
        [{"role": "user", "name": "Dana", "id": i, "content": c} for i, c in lines + filler],
        user_id="u",
        timestamp=NOW - timedelta(days=3),
    )
    memory.wait()


def test_exact_identifier_wins_over_lookalikes(tmp_path: Path, embedder: Embedder) -> None:
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        _tickets(memory)
        hits = memory.search("what is going on with SR-2023-052 login timeout?", user_id="u")
        assert hits[0].source_ids == ["a2"], [h.text for h in hits[:3]]
        assert hits[0].explain["entities"]["matched"]["SR-2023-052"]["passages"] == 1
        assert hits[0].explain["query"]["entities"] == ["SR-2023-052"]
        off = memory.search(
            "what is going on with SR-2023-052 login timeout?",
            user_id="u",
            stages={"entities": False},
        )
        assert all("entities" not in h.explain for h in off)


def test_entities_everywhere_lift_nothing(tmp_path: Path, embedder: Embedder) -> None:
    """The speaker's own name is in every passage: it is not specific, so it adds no lift."""
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        _tickets(memory)
        hits = memory.search("what did Dana say about lunch?", user_id="u")
        assert hits and all("entities" not in h.explain for h in hits)


def test_decay_per_kind_spares_pinned_memories(tmp_path: Path, embedder: Embedder) -> None:
    old = NOW - timedelta(days=365)
    with Memory(tmp_path / "m", embedder=embedder, half_life_days={"turn": 30}) as memory:
        memory.add(
            [
                {
                    "role": "user",
                    "id": "pin",
                    "content": "My blood type is O negative.",
                    "metadata": {"pinned": True},
                },
                {"role": "user", "id": "old", "content": "My favourite blood orange juice brand."},
            ],
            user_id="u",
            timestamp=old,
        )
        memory.wait()
        hits = memory.search("blood", user_id="u", now=NOW)
        factors = {h.source_ids[0]: h.explain["decay"]["factor"] for h in hits if h.kind == "turn"}
        assert factors["pin"] == 1.0
        assert factors["old"] < 0.001
    with pytest.raises(ValueError, match="positive"):
        Memory(tmp_path / "bad", embedder=embedder, half_life_days={"turn": 0})


def test_half_lives_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from madeleine.config import Settings

    settings = Settings.from_env({"MADELEINE_HALF_LIFE_DAYS": '{"turn": 90}'})
    assert settings.stages.half_life_days == {"turn": 90.0}
    with pytest.raises(ValueError, match="JSON"):
        Settings.from_env({"MADELEINE_HALF_LIFE_DAYS": "ninety"})
