"""The backends every storage-level test runs against (the ``store`` fixture, registered in
tests/conftest.py).

Every test in tests/store takes the ``store`` fixture and talks to it only through the
port (``madeleine.store.ports.Store``), so each test runs once per backend. A new backend
joins by adding a factory ``(tmp_path) -> Store`` to ``BACKENDS`` and its name to the
fixture's ``params``; nothing else changes. A backend that needs a server (PostgreSQL)
should ``pytest.skip`` in its factory when the server is unavailable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from madeleine.store import open_store
from madeleine.store.ports import Store


def _sqlite(tmp_path: Path) -> Store:
    return open_store(tmp_path / "sqlite-store")


# A new backend: add its factory here and its name to the fixture's params below.
BACKENDS: dict[str, Callable[[Path], Store]] = {
    "sqlite": _sqlite,
}


@pytest.fixture(name="store", params=["sqlite"])
def store_fixture(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    backend = BACKENDS[request.param](tmp_path)
    yield backend
    backend.close()
