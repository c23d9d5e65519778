"""``store.read_url``: searches and contexts read from a replica. Here the "replica" is the
same server reached through a second pool whose transactions are read-only, so a write
slipped into the read path fails loudly instead of passing unnoticed."""

from __future__ import annotations

from typing import Any

import psycopg
import pytest
from cryptography.fernet import Fernet

from madeleine import Memory
from tests.fakes import HashingEmbedder


def test_searches_and_contexts_read_from_the_replica(pg_url: str, pg_schema: str) -> None:
    key = Fernet.generate_key().decode()
    common: dict[str, Any] = {"store_schema": pg_schema, "vault_key": key, "background": False}
    with Memory(pg_url, embedder=HashingEmbedder(), **common) as primary:
        primary.add(
            [
                {"content": "I moved to Lisbon in May", "id": "m1"},
                {"content": "My sister Ana teaches piano", "id": "m2"},
            ],
            user_id="u",
            session_id="s",
        )
        assert primary.wait()
        expected = [h.id for h in primary.search("where do I live", user_id="u")]
    with Memory(pg_url, embedder=HashingEmbedder(), store_read_url=pg_url, **common) as memory:
        assert [h.id for h in memory.search("where do I live", user_id="u")] == expected
        context = memory.context("who teaches piano?", user_id="u")
        assert "Ana" in context.text
        assert memory.search("anything", user_id="nobody") == []
        store = memory._engine.store
        with store.reading(), pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            store.set_meta("written", "on the replica")  # proves reads went there
        memory.add([{"content": "writes still go to the primary"}], user_id="u")
        assert memory.wait()


def test_a_replica_url_must_be_postgresql(pg_url: str, pg_schema: str) -> None:
    with pytest.raises(ValueError, match="read replica"):
        Memory(
            pg_url,
            embedder=HashingEmbedder(),
            store_schema=pg_schema,
            vault_key=Fernet.generate_key().decode(),
            store_read_url="mysql://replica",
        )
