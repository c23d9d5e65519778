"""The README is part of the product: its settings table and its example must stay true."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from madeleine.config import Settings

README = Path(__file__).resolve().parents[1] / "README.md"


def test_every_setting_is_documented() -> None:
    text = README.read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `(\w+)` \|", text, flags=re.MULTILINE))
    missing = set(Settings.model_fields) - documented
    assert not missing, f"settings missing from the README table: {sorted(missing)}"


def test_readme_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = README.read_text(encoding="utf-8")
    example = re.search(r"```python\n(.*?)```", text, flags=re.DOTALL)
    assert example is not None
    monkeypatch.chdir(tmp_path)
    exec(compile(example.group(1), "README.md", "exec"), {})
    assert (tmp_path / "memory-data" / "memory.db").exists()
