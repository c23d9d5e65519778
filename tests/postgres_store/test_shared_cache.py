"""The read path's shared cache level in Redis (PostgreSQL + Redis): a second API process
reads a user's fact vectors and row metadata from Redis instead of rebuilding them; a new
version is rebuilt; and after ``forget_user`` nothing cached before is served again, even
when the recreated user's generation counters reach the same values."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from cryptography.fernet import Fernet

from madeleine import Memory
from tests.fakes import HashingEmbedder

TALK = [
    {"content": "My name is Ana and I live in Lisbon.", "id": "m1"},
    {"content": "I am allergic to peanuts.", "id": "m2"},
    {"content": "I play the piano every evening.", "id": "m3"},
]


@pytest.fixture
def open_process(
    pg_url: str, pg_schema: str, redis_url: str, redis_prefix: str
) -> Iterator[Callable[[], tuple[Memory, Counter[str]]]]:
    """A new 'API process': a Memory of its own, counting what it loads from PostgreSQL."""
    key = Fernet.generate_key().decode()
    opened: list[Memory] = []

    def open_one() -> tuple[Memory, Counter[str]]:
        memory = Memory(
            pg_url,
            embedder=HashingEmbedder(),
            store_schema=pg_schema,
            vault_key=key,
            redis_url=redis_url,
            redis_prefix=redis_prefix,
            background=False,
        )
        opened.append(memory)
        loads: Counter[str] = Counter()
        store: Any = memory._engine.store
        for owner, name in ((store.facts, "search_rows"), (store, "user_vectors")):
            original = getattr(owner, name)

            def counted(*args: Any, _original: Any = original, _name: str = name, **kw: Any) -> Any:
                loads[_name] += 1
                return _original(*args, **kw)

            setattr(owner, name, counted)
        return memory, loads

    yield open_one
    for memory in opened:
        memory.close()


def _ids(memory: Memory, query: str) -> list[str]:
    return [h.id for h in memory.search(query, user_id="u")]


def test_a_second_process_reads_the_shared_level(
    open_process: Callable[[], tuple[Memory, Counter[str]]],
) -> None:
    first, first_loads = open_process()
    first.add(TALK, user_id="u", session_id="s")
    assert first.wait()
    expected = _ids(first, "what am I allergic to?")
    assert first_loads["search_rows"] == 1 and first_loads["user_vectors"] == 1
    assert first.facts("u")  # the facts the cache holds exist

    second, second_loads = open_process()
    assert _ids(second, "what am I allergic to?") == expected
    assert second_loads == Counter()  # both came from Redis

    first.add([{"content": "I moved to Porto.", "id": "m4"}], user_id="u", session_id="s")
    assert first.wait()
    third, third_loads = open_process()
    assert "Porto" in " ".join(h.text for h in third.search("where do I live", user_id="u"))
    assert third_loads["user_vectors"] == 1  # a new version: rebuilt, not served stale


def test_nothing_cached_before_a_forget_is_served_after_it(
    open_process: Callable[[], tuple[Memory, Counter[str]]],
) -> None:
    first, _ = open_process()
    first.add(TALK, user_id="u", session_id="s")
    assert first.wait()
    _ids(first, "what am I allergic to?")  # fills the shared level
    first.forget_user("u")
    # the same number of messages again: the restarted counters reach the same values
    first.add(
        [
            {"content": "My name is Bea and I live in Oslo.", "id": "n1"},
            {"content": "I am allergic to cats.", "id": "n2"},
            {"content": "I play the violin on Sundays.", "id": "n3"},
        ],
        user_id="u",
        session_id="s",
    )
    assert first.wait()
    later, _ = open_process()
    hits = later.search("what am I allergic to?", user_id="u")
    assert all("peanut" not in h.text for h in hits) and any("cats" in h.text for h in hits)
    # whatever the new process took from Redis was built after the erasure
    current = sorted(int(e["id"][3:]) for e in later.export_user("u")["episodes"])
    rows = later._engine.searcher._dense.rows("u")
    assert sorted(int(i) for i in rows.ids) == current
    facts = later._engine.store.facts.search_rows("u")
    channel: Any = later._engine.searcher._merged["facts"]
    assert facts.ids.tolist() == channel._index.rows("u").ids.tolist()
