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


def _files_text(path: Path) -> bytes:
    return b"".join(f.read_bytes() for f in path.rglob("*") if f.is_file())


@pytest.mark.parametrize("how", ["message", "episode"])
def test_a_deleted_message_leaves_no_alert_log_entry_or_byte_behind(
    tmp_path: Path, how: str
) -> None:
    path = tmp_path / "m"
    with Memory(path, embedder=HashingEmbedder(), background=False) as memory:
        memory.add(
            [
                {"content": "I'm allergic to penicillin.", "id": "allergy"},
                {"content": "My doctor put me on amoxicillin.", "id": "drug"},
            ],
            user_id="u",
        )
        memory.wait()
        assert memory.alerts("u"), "the drug-class check should fire"
        if how == "message":
            assert memory.delete_message("drug", user_id="u")
        else:
            (hit,) = [h for h in memory.search("amoxicillin", user_id="u") if h.kind == "turn"][:1]
            assert memory.delete(hit.id, user_id="u")
        memory.wait()
        assert memory.alerts("u") == []
        assert not any("amoxicillin" in str(entry) for entry in memory.routing_log("u"))
        assert "amoxicillin" not in memory.context("medication allergy", user_id="u").text
        assert [c.statement for c in memory.facts("u")] == ["The user is allergic to penicillin."]
        assert b"amoxicillin" not in _files_text(path)  # database, WAL and index files
    assert b"amoxicillin" not in _files_text(path)


def test_a_deleted_duplicate_takes_its_routing_entry_and_citation_along(mem: Memory) -> None:
    mem.add([{"content": "I am vegetarian.", "id": "v1"}], user_id="u")
    mem.add([{"content": "As I said, I am vegetarian.", "id": "v2"}], user_id="u")
    mem.wait()
    (card,) = [c for c in mem.facts("u") if "vegetarian" in c.statement]
    assert len(card.sources) == 2, "a reinforcing message is a source of the card"
    assert mem.delete_message("v2", user_id="u")
    (card,) = [c for c in mem.facts("u") if "vegetarian" in c.statement]
    assert len(card.sources) == 1
    assert not any(e["decision"] == "duplicate" for e in mem.routing_log("u"))


@pytest.mark.parametrize(
    "moment", ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00", "1066-10-14"]
)
def test_a_timestamp_at_the_edge_of_the_calendar_is_a_clear_error(mem: Memory, moment: str) -> None:
    with pytest.raises(ValueError, match=r"timestamp is out of range"):
        mem.add([{"content": "hello"}], user_id="u", timestamp=moment)
    with pytest.raises(ValueError, match=r"messages\[0\]\['timestamp'\] is out of range"):
        mem.add([{"content": "hello", "timestamp": moment}], user_id="u")
    with pytest.raises(ValueError, match="as_of is out of range"):
        mem.search("Lisbon", user_id="u", as_of=moment)


def test_a_huge_id_names_nothing(mem: Memory) -> None:
    assert mem.delete("ep_99999999999999999999", user_id="u") is False
    assert mem.delete("fact_99999999999999999999", user_id="u") is False
    assert mem.history("fact_99999999999999999999", user_id="u") == []


@pytest.mark.parametrize(("limit", "error"), [("x", TypeError), (-5, ValueError), (0, ValueError)])
def test_routing_log_limit_is_checked(mem: Memory, limit: object, error: type[Exception]) -> None:
    with pytest.raises(error, match="limit"):
        mem.routing_log("u", limit=limit)  # type: ignore[arg-type]


def test_history_is_scoped_to_its_user(tmp_path: Path) -> None:
    with Memory(tmp_path / "m", embedder=HashingEmbedder(), background=False) as memory:
        memory.add(
            [{"content": "My email is mina@example.com and I live in Seoul."}], user_id="mina"
        )
        memory.wait()
        (card, *_) = memory.facts("mina")
        assert memory.history(card.id, user_id="mina")
        assert memory.history(card.id, user_id="eve") == []  # not found, never data
        assert memory.delete(card.id, user_id="eve") is False
