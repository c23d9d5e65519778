"""The backend registry: a location names its backend, and code outside ``store/`` never
does (issue 33)."""

from __future__ import annotations

import ast
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from madeleine import Memory
from madeleine.store import backends
from madeleine.store.ports import Store

SOURCE = Path(__file__).resolve().parents[2] / "src" / "madeleine"
# the registry is the same whatever backend the suite runs on: the first run only (the
# PostgreSQL run redirects every directory to a schema, which is not what these look at)
pytestmark = pytest.mark.sqlite_only


@pytest.mark.parametrize(
    ("location", "name"),
    [
        ("postgresql://me@db/memory", "postgres"),
        ("postgres://me@db/memory", "postgres"),
        ("/var/lib/madeleine", "sqlite"),
        (Path("relative/dir"), "sqlite"),
        ("postgresql", "sqlite"),  # a directory called that, not a URL
    ],
)
def test_a_location_names_its_backend(location: str | Path, name: str) -> None:
    assert backends.backend_of(location).name == name
    assert backends.is_url(location) == (name != "sqlite")
    kept = backends.as_location(location)
    assert isinstance(kept, str if name != "sqlite" else Path)


def test_only_an_existing_store_exists(tmp_path: Path) -> None:
    assert not backends.exists(tmp_path / "nothing")
    with Memory(tmp_path / "m", background=False):
        pass
    assert backends.exists(tmp_path / "m")


def test_url_operations_refuse_a_directory_by_name(tmp_path: Path) -> None:
    for operation in (
        lambda: backends.namespaces(str(tmp_path), "madeleine"),
        lambda: backends.drop_namespace(str(tmp_path), "scratch"),
        lambda: backends.migrate(str(tmp_path), "madeleine"),
    ):
        with pytest.raises(ValueError, match="takes a store URL"):
            operation()
    with pytest.raises(ValueError, match=r"--store takes a store URL .*postgresql://"):
        backends.require_url("/tmp/x", "--store")


def test_a_third_backend_is_one_module_and_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``memtest://name`` backend that keeps each store in a directory of its own: the
    facade, the engine and the CLI helpers use it without knowing it."""
    opened: list[str] = []

    def open_store(location: str | Path, **options: Any) -> Store:
        from madeleine.store.sqlite.backend import open_store as embedded

        opened.append(str(location))
        return embedded(tmp_path / str(location).removeprefix("memtest://"), **options)

    module = types.ModuleType("memtest_backend")
    module.open_store = open_store  # type: ignore[attr-defined]
    module.exists = lambda location: True  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "memtest_backend", module)
    monkeypatch.setattr(
        backends,
        "REGISTRY",
        (*backends.REGISTRY, backends.Backend("memtest", "memtest_backend", ("memtest://",))),
    )
    with Memory("memtest://alpha", background=False) as memory:
        memory.add([{"role": "user", "content": "I keep bees on the roof."}], user_id="u")
        memory.index_pending()
        assert memory.search("bees", user_id="u")[0].text.endswith("I keep bees on the roof.")
    assert opened == ["memtest://alpha"]
    assert (tmp_path / "alpha" / "memory.db").is_file()


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_nothing_outside_the_store_imports_a_backend() -> None:
    """Code above ``store/`` asks ``store.backends`` about a location; only the store's own
    packages import ``store.sqlite`` or ``store.postgres``."""
    offenders = []
    for path in SOURCE.rglob("*.py"):
        if (SOURCE / "store") in path.parents:
            continue
        for module in _imports(path):
            if module.startswith(("madeleine.store.sqlite", "madeleine.store.postgres")):
                offenders.append(f"{path.relative_to(SOURCE)}: {module}")
    assert not offenders, offenders


def test_a_tenant_namespace_is_readable_and_tells_names_apart() -> None:
    url = "postgresql://me@db/memory"
    acme, upper = (backends.tenant_namespace(url, "madeleine", t) for t in ("acme", "ACME"))
    assert acme.startswith("madeleine_acme_") and upper.startswith("madeleine_acme_")
    assert acme != upper  # the hash of the exact name
    assert backends.tenant_namespace(url, "madeleine", "acme") == acme  # stable
    with pytest.raises(ValueError, match="takes a store URL"):
        backends.tenant_namespace("/srv/data", "madeleine", "acme")
