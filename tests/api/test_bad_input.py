from __future__ import annotations

from typing import Any

import pytest

from madeleine import Memory


def _snapshot(memory: Memory) -> tuple[int, int]:
    stats = memory.stats()
    return stats["events"], stats["pending_jobs"]


@pytest.mark.parametrize(
    ("messages", "kwargs", "error", "needle"),
    [
        ([{"role": "user"}], {}, ValueError, "messages[0] is missing 'content'"),
        ([{"content": 42}], {}, TypeError, "messages[0]['content']"),
        ([{"content": ""}], {}, ValueError, "messages[0]['content'] is empty"),
        ([{"content": "x" * 10_000_000}], {}, ValueError, "limit is 100,000"),
        (
            [{"content": "hi", "timestamp": "yesterday-ish"}],
            {},
            ValueError,
            "messages[0]['timestamp']",
        ),
        ([{"content": "hi"}], {"timestamp": "not a date"}, ValueError, "timestamp"),
        ([{"content": "hi"}], {"timestamp": [2024]}, TypeError, "timestamp"),
        ([{"content": "hi", "id": 1.5}], {}, TypeError, "messages[0]['id']"),
        ([{"content": "hi", "colour": "red"}], {}, ValueError, "unknown keys ['colour']"),
        ([{"content": "hi", "metadata": {"x": object()}}], {}, TypeError, "metadata"),
        ("just a string", {}, TypeError, "messages must be a list"),
        ([["content", "hi"]], {}, TypeError, "messages[0] must be a dict"),
        ([{"content": "hi"}], {"user_id": ""}, ValueError, "user_id"),
        ([{"content": "hi"}], {"user_id": 7}, TypeError, "user_id"),
        ([{"content": "hi"}], {"session_id": None}, TypeError, "session_id"),
    ],
)
def test_bad_messages_are_rejected_and_write_nothing(
    memory: Memory, messages: Any, kwargs: dict[str, Any], error: type[Exception], needle: str
) -> None:
    memory.add([{"content": "a valid earlier message", "id": "ok"}], user_id="u1")
    assert memory.wait(60)  # the worker would otherwise change the queue between snapshots
    before = _snapshot(memory)
    call = {"user_id": "u1", **kwargs}
    # a good message in front of the bad one must not be written either
    batch = [{"content": "good one"}, *messages] if isinstance(messages, list) else messages
    if isinstance(messages, list):
        needle = needle.replace("messages[0]", "messages[1]")
    with pytest.raises(error) as caught:
        memory.add(batch, **call)
    assert needle in str(caught.value)
    assert _snapshot(memory) == before
    memory.wait(timeout=60)
    assert memory.search("valid earlier message", user_id="u1")[0].source_ids == ["ok"]


@pytest.mark.parametrize(
    ("kwargs", "error", "needle"),
    [
        ({"query": ""}, ValueError, "query"),
        ({"query": 5}, TypeError, "query"),
        ({"limit": 0}, ValueError, "limit"),
        ({"limit": "10"}, TypeError, "limit"),
        ({"channels": ["dense", "telepathy"]}, ValueError, "telepathy"),
        ({"channels": "dense"}, TypeError, "channels"),
        ({"channels": []}, ValueError, "channels"),
        ({"time_range": ("2024-01-01",)}, TypeError, "time_range"),
        ({"time_range": ("2024-02-01", "2024-01-01")}, ValueError, "time_range"),
        ({"time_range": ("garbage", None)}, ValueError, "time_range[0]"),
        ({"user_id": None}, TypeError, "user_id"),
    ],
)
def test_bad_search_arguments_name_the_argument(
    memory: Memory, kwargs: dict[str, Any], error: type[Exception], needle: str
) -> None:
    call: dict[str, Any] = {"query": "hello", "user_id": "u1", **kwargs}
    query = call.pop("query")
    with pytest.raises(error) as caught:
        memory.search(query, **call)
    assert needle in str(caught.value)


def test_bad_context_budget(memory: Memory) -> None:
    with pytest.raises(ValueError, match="budget_tokens"):
        memory.context("hi", user_id="u1", budget_tokens=0)
    with pytest.raises(TypeError, match="budget_tokens"):
        memory.context("hi", user_id="u1", budget_tokens=12.5)  # type: ignore[arg-type]


def test_bad_delete_ids(memory: Memory) -> None:
    with pytest.raises(ValueError, match="memory_id"):
        memory.delete("42", user_id="u1")
    with pytest.raises(TypeError, match="memory_id"):
        memory.delete(42, user_id="u1")  # type: ignore[arg-type]
    assert memory.delete("ep_999999", user_id="u1") is False


def test_path_that_is_a_file_is_refused(tmp_path, embedder) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "file"
    target.write_text("not a directory")
    with pytest.raises(ValueError, match="directory"):
        Memory(target, embedder=embedder)


def test_unknown_setting_is_refused(tmp_path, embedder) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="rrf_kk"):
        Memory(tmp_path / "m", embedder=embedder, rrf_kk=3)
