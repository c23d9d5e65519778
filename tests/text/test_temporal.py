from __future__ import annotations

from datetime import UTC, datetime

import pytest

from madeleine import Memory
from madeleine.text.temporal import parse_time_hint

NOW = datetime(2024, 9, 18, 15, 0, tzinfo=UTC)  # a Wednesday


def _range(query: str) -> tuple[str, str]:
    hint = parse_time_hint(query, NOW)
    assert hint is not None and hint.start is not None and hint.end is not None, query
    return hint.start.date().isoformat(), hint.end.date().isoformat()


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("what did I eat yesterday", ("2024-09-17", "2024-09-17")),
        ("what did we do last Tuesday?", ("2024-09-17", "2024-09-17")),
        ("on Monday I", ("2024-09-16", "2024-09-16")),
        ("the concert in May 2023", ("2023-05-01", "2023-05-31")),
        ("what happened in March", ("2024-03-01", "2024-03-31")),
        ("what happened in October", ("2023-10-01", "2023-10-31")),  # the most recent October
        ("three weeks ago", ("2024-08-25", "2024-08-31")),
        ("2 days ago", ("2024-09-15", "2024-09-17")),
        ("last week", ("2024-09-09", "2024-09-15")),
        ("last month", ("2024-08-01", "2024-08-31")),
        ("in 2022", ("2022-01-01", "2022-12-31")),
        ("지난주에 뭐 했어?", ("2024-09-09", "2024-09-15")),
        ("작년 5월에 간 식당", ("2023-05-01", "2023-05-31")),
        ("3일 전에 산 책", ("2024-09-14", "2024-09-16")),
        ("어제 본 영화", ("2024-09-17", "2024-09-17")),
        ("2023년 12월 여행", ("2023-12-01", "2023-12-31")),
    ],
)
def test_expressions_resolve_to_ranges(query: str, expected: tuple[str, str]) -> None:
    assert _range(query) == expected


def test_recency_and_anchors() -> None:
    assert parse_time_hint("what have I been reading recently?", NOW).recency  # type: ignore[union-attr]
    assert parse_time_hint("요즘 뭐 해?", NOW).recency  # type: ignore[union-attr]
    anchored = parse_time_hint("what did we buy before the wedding?", NOW)
    assert anchored is not None
    assert (anchored.anchor, anchored.anchor_direction) == ("the wedding", "before")
    korean = parse_time_hint("결혼식 전에 뭐 샀지", NOW)
    assert korean is not None and korean.anchor == "결혼식"
    assert parse_time_hint("what is my favourite food", NOW) is None


def _diary(memory: Memory) -> None:
    entries = [
        ("2024-09-17T19:00:00", "d1", "I cooked a spicy tofu stew for dinner"),
        ("2024-08-28T19:00:00", "d2", "I cooked pasta with clams for dinner"),
        ("2024-05-02T19:00:00", "d3", "I cooked a mushroom risotto for dinner"),
        ("2024-06-01T10:00:00", "w1", "Our wedding was wonderful, everyone danced"),
    ]
    for when, note_id, text in entries:
        memory.add(
            [{"content": text, "id": note_id}], user_id="u", session_id=note_id, timestamp=when
        )
    assert memory.wait(timeout=60)


def test_time_expressions_steer_search(memory: Memory) -> None:
    _diary(memory)
    for query, expected in [
        ("what did I cook yesterday?", "d1"),
        ("what did I cook three weeks ago?", "d2"),
        ("what did I cook in May?", "d3"),
        ("어제 저녁에 뭐 요리했지?", "d1"),
        ("what did I cook before the wedding?", "d3"),
        ("what have I cooked recently?", "d1"),
    ]:
        hits = memory.search(query, user_id="u", limit=3, now=NOW)
        assert hits[0].source_ids == [expected], (query, [h.text for h in hits])
        assert "time" in hits[0].explain
    off = memory.search("what did I cook in May?", user_id="u", now=NOW, stages={"time": False})
    assert all("time" not in h.explain for h in off)


def test_decay_is_off_by_default_and_applies_when_configured(tmp_path, embedder) -> None:  # type: ignore[no-untyped-def]
    with Memory(tmp_path / "m", embedder=embedder, half_life_days={"turn": 30}) as memory:
        _diary(memory)
        hits = memory.search("what did I cook for dinner", user_id="u", now=NOW, limit=8)
        assert hits[0].source_ids == ["d1"]
        turns = [h for h in hits if h.kind == "turn"][:3]  # their open cards decay as facts
        factors = {h.source_ids[0]: h.explain["decay"]["factor"] for h in turns}
        assert factors["d1"] > 0.9 and min(factors.values()) < 0.5
