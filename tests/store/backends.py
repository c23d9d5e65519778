"""The backends every storage-level test runs against (the ``store`` fixture, registered in
tests/conftest.py).

Every test in tests/store takes the ``store`` fixture and talks to it only through the
port (``madeleine.store.ports.Store``), so each test runs once per backend. A new backend
joins by adding a factory ``(request, tmp_path) -> Store`` to ``BACKENDS`` and its name to the
fixture's ``params``; nothing else changes. A backend that needs a server (PostgreSQL)
should ``pytest.skip`` in its factory when the server is unavailable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from madeleine.store import open_store
from madeleine.store.ports import Store


def _sqlite(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    return open_store(tmp_path / "sqlite-store")


def _postgres(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    """A fresh schema on the tests' PostgreSQL server (tests/postgres.py)."""
    from cryptography.fernet import Fernet

    from madeleine.store.postgres.store import PostgresStore

    url = request.getfixturevalue("pg_url")
    schema = request.getfixturevalue("pg_schema")
    return PostgresStore(url, schema=schema, vault_key=Fernet.generate_key())


# A new backend: add its factory here and its name to the fixture's params below.
BACKENDS: dict[str, Callable[[pytest.FixtureRequest, Path], Store]] = {
    "sqlite": _sqlite,
    "postgres": _postgres,
}


@pytest.fixture(name="store", params=["sqlite", "postgres"])
def store_fixture(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    backend = BACKENDS[request.param](request, tmp_path)
    yield backend
    backend.close()
