from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from madeleine import Memory
from madeleine.embed.base import Embedder
from madeleine.embed.factory import load_embedder
from tests.postgres import (  # noqa: F401  (a real PostgreSQL server; the backend switch)
    _store_backend,
    pg_schema,
    pg_url,
    store_location,
    stored_text,
)
from tests.redis_server import redis_prefix, redis_url  # noqa: F401  (a real Redis server)
from tests.store.backends import store_fixture  # noqa: F401  (the ``store`` fixture, per backend)


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The real default embedder, loaded once for the whole run."""
    return load_embedder("auto")


@pytest.fixture
def memory(tmp_path: Path, embedder: Embedder) -> Iterator[Memory]:
    mem = Memory(tmp_path / "memory", embedder=embedder)
    yield mem
    mem.close()


def trip_conversation() -> list[dict[str, str]]:
    return [
        {
            "role": "user",
            "name": "Alice",
            "id": "t1",
            "content": "Can you find me a flight to Tokyo next Friday? I prefer window seats.",
        },
        {
            "role": "assistant",
            "id": "t2",
            "content": "I found two options: Japan Airlines at 9am and ANA at 1pm.",
        },
        {
            "role": "user",
            "name": "Alice",
            "id": "t3",
            "content": "ok, book that one in the morning",
        },
        {
            "role": "user",
            "name": "Alice",
            "id": "t4",
            "content": "Also my daughter Sarah started violin lessons this week.",
        },
    ]
