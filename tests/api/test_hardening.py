"""Issue 13: what an attacker or a careless client sends must fail clearly and break nothing.

Each test reproduces one reported failure. They use the instant hashing embedder: what is
checked is the input handling, not the meaning of a search.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from madeleine import Memory
from tests.fakes import HashingEmbedder


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    with Memory(tmp_path / "m", embedder=HashingEmbedder(), background=False) as memory:
        memory.add([{"role": "user", "content": "I live in Lisbon."}], user_id="u")
        memory.wait()
        yield memory


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_a_non_finite_metadata_value_is_refused_and_poisons_nothing(
    mem: Memory, value: float
) -> None:
    with pytest.raises(ValueError, match=r"messages\[0\]\['metadata'\].*finite"):
        mem.add([{"content": "hello", "metadata": {"t": value}}], user_id="u")
    with pytest.raises(ValueError, match="finite"):
        mem.add_event(user_id="u", type="purchase", data={"price": value})
    assert mem.search("Lisbon", user_id="u")
    assert mem.context("Lisbon", user_id="u").text


def test_huge_metadata_is_refused(mem: Memory) -> None:
    with pytest.raises(ValueError, match="larger than 64 KiB"):
        mem.add([{"content": "hi", "metadata": {"blob": "x" * 70_000}}], user_id="u")


@pytest.mark.parametrize(
    ("field", "message"),
    [
        ("messages[0]['content']", {"content": "bad \ud800 text"}),
        ("messages[0]['name']", {"content": "ok", "name": "Mi\udc00na"}),
        ("messages[0]['id']", {"content": "ok", "id": "m\ud83d"}),
        ("messages[0]['metadata']", {"content": "ok", "metadata": {"k": "\udfff"}}),
    ],
)
def test_a_lone_surrogate_is_refused_naming_the_field(
    mem: Memory, field: str, message: dict[str, object]
) -> None:
    with pytest.raises(ValueError, match=re.escape(field) + " is not valid Unicode"):
        mem.add([message], user_id="u")
    with pytest.raises(ValueError, match="user_id is not valid Unicode"):
        mem.add([{"content": "ok"}], user_id="u\ud800")


def test_a_query_with_a_lone_surrogate_is_refused_at_once(mem: Memory) -> None:
    with pytest.raises(ValueError, match="query is not valid Unicode"):
        mem.search("where do I live \ud800", user_id="u")
    with pytest.raises(ValueError, match="query is not valid Unicode"):
        mem.context("\udfff" * 5_000, user_id="u")


def test_the_korean_anchor_rule_is_linear_on_a_long_run_without_spaces() -> None:
    """ "X 전에" (before X) was found by a pattern that backtracked over every start position:
    2.5 s on 10,000 characters without a space. A guard against that blow-up, not a timing."""
    import time
    from datetime import UTC, datetime

    from madeleine.text.temporal import parse_time_hint

    now = datetime(2024, 5, 1, tzinfo=UTC)
    started = time.perf_counter()
    assert parse_time_hint("가" * 10_000, now) is None
    assert parse_time_hint("a" * 10_000 + " 전에", now) is not None
    assert time.perf_counter() - started < 0.5  # milliseconds once linear
    hint = parse_time_hint("어제 결혼식 전에 뭐 했어?", now)
    assert hint is not None and hint.expression == "어제"
    hint = parse_time_hint("결혼식 전에 뭐 했어?", now)
    assert hint is not None and hint.anchor == "결혼식" and hint.anchor_direction == "before"
