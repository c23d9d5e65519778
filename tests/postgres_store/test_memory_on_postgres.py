"""The public API end to end on PostgreSQL: the same calls, the same answers as embedded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

from madeleine import Memory, Principal
from tests.fakes import HashingEmbedder

TURNS = [
    {"role": "user", "id": "m1", "content": "I moved to Lisbon last spring with my cat Dubu."},
    {"role": "assistant", "id": "m2", "content": "Lisbon is lovely. How is Dubu settling in?"},
    {"role": "user", "id": "m4", "content": "Actually I moved to Porto in June."},
]


def _open(location: str | Path, schema: str, key: str) -> Memory:
    return Memory(
        location, embedder=HashingEmbedder(), store_schema=schema, vault_key=key, background=False
    )


def test_memory_answers_the_same_on_postgres_and_embedded(
    tmp_path: Path, pg_url: str, pg_schema: str
) -> None:
    key = Fernet.generate_key().decode()
    with _open(pg_url, pg_schema, key) as pg, _open(tmp_path / "m", "unused", key) as local:
        for memory in (pg, local):
            memory.add(TURNS, user_id="mina", session_id="s1", timestamp="2026-06-01T10:00:00Z")
            assert memory.wait(60)
        for query in ("where does Mina live now?", "what is the cat called", "Lisbon Porto"):
            a = [(h.kind, h.text, h.score) for h in pg.search(query, user_id="mina")]
            b = [(h.kind, h.text, h.score) for h in local.search(query, user_id="mina")]
            # the same hits with the same scores (to 1e-4: pgvector sums in another order, so
            # hits tied to ~1e-6 may swap places)
            assert sorted(x[:2] for x in a) == sorted(x[:2] for x in b), query
            assert [round(x[2], 4) for x in a] == pytest.approx([round(x[2], 4) for x in b])
        assert [c.statement for c in pg.facts("mina")] == [c.statement for c in local.facts("mina")]
        assert (
            pg.context("plan my week", user_id="mina").text
            == local.context("plan my week", user_id="mina").text
        )
        # vaulted PII (its random token differs per store, so it is left out of the above)
        email = "My email is mina@example.com, send the plan there."
        pg.add({"role": "user", "id": "m3", "content": email}, user_id="mina", session_id="s1")
        assert pg.wait(60)
        exported = pg.export_user("mina")
        assert exported["vault"][0]["category"] == "email"
        assert "mina@example.com" in json.dumps(exported)  # the owner's export restores it
        assert "mina@example.com" not in str(pg.search("email", user_id="mina")[0].explain)
        assert pg.stats()["path"].endswith(f"#{pg_schema}") and ":***@" not in pg_url
        for memory in (pg, local):
            memory.kb("hr").add_document("Employees get 25 days of leave.", doc_id="leave")
            assert memory.wait(60)
        assert [h.doc_id for h in pg.search_kb("days of leave", principal=Principal("u1"))] == [
            "leave"
        ]
        assert pg.forget_user("mina")["events"] == 4
        assert pg.search("Lisbon", user_id="mina") == []


def test_a_postgres_store_needs_the_shared_vault_key(pg_url: str, pg_schema: str) -> None:
    with pytest.raises(ValueError, match="MADELEINE_VAULT_KEY"):
        Memory(pg_url, embedder=HashingEmbedder(), store_schema=pg_schema)
    with pytest.raises(ValueError, match="schema"):
        Memory(pg_url, embedder=HashingEmbedder(), store_schema="Bad-Name", vault_key="x")


def test_the_store_url_setting_opens_postgres(
    pg_url: str, pg_schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MADELEINE_STORE", pg_url)
    monkeypatch.setenv("MADELEINE_STORE_SCHEMA", pg_schema)
    monkeypatch.setenv("MADELEINE_VAULT_KEY", Fernet.generate_key().decode())
    with Memory(embedder=HashingEmbedder()) as memory:
        memory.add({"role": "user", "content": "hello from the environment"}, user_id="u")
        assert memory.wait(60)
        assert memory.stats()["events"] == 1 and memory.path == pg_url
