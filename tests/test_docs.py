"""The README is part of the product: its settings table and its example must stay true."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from madeleine.config import setting_docs
from tests.postgres import BACKEND

README = Path(__file__).resolve().parents[1] / "README.md"
# | `graph_damping` | `graph.damping` | 0.85 | PageRank damping d |
_ROW = re.compile(r"^\| `(\w+)` \| `(\w+\.\w+)` \| ([^|]*?) \|", flags=re.MULTILINE)


def _cell(default: object) -> str:
    return "`{}`" if default == {} else str(default)


def test_every_setting_is_documented_by_both_names_with_its_default() -> None:
    rows = {
        (flat, path): default
        for flat, path, default in _ROW.findall(README.read_text(encoding="utf-8"))
    }
    expected = {(doc.name, doc.path): _cell(doc.default) for doc in setting_docs()}
    missing = sorted(f"{flat} / {path}" for flat, path in expected.keys() - rows.keys())
    assert not missing, f"settings missing from the README table: {missing}"
    unknown = sorted(f"{flat} / {path}" for flat, path in rows.keys() - expected.keys())
    assert not unknown, f"README rows that are no setting: {unknown}"
    stale = {key: (rows[key], cell) for key, cell in expected.items() if rows[key] != cell}
    assert not stale, f"README defaults (documented, actual) out of date: {stale}"


def test_readme_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = README.read_text(encoding="utf-8")
    example = re.search(r"```python\n(.*?)```", text, flags=re.DOTALL)
    assert example is not None
    monkeypatch.chdir(tmp_path)
    exec(compile(example.group(1), "README.md", "exec"), {})
    if BACKEND == "sqlite":  # on PostgreSQL the tests keep ./memory-data in a schema
        assert (tmp_path / "memory-data" / "memory.db").exists()


def test_the_architecture_names_every_module() -> None:
    """docs/architecture.md's module index holds every module of the package (issue 33): a
    new module is named there, with what it is for, in the commit that adds it."""
    root = README.parent
    text = (root / "docs" / "architecture.md").read_text(encoding="utf-8")
    package = root / "src" / "madeleine"
    missing = [
        path.relative_to(package).as_posix()
        for path in sorted(package.rglob("*.py"))
        if f"`{path.relative_to(package).as_posix()}`" not in text
    ]
    assert not missing, f"docs/architecture.md does not name {missing}"
