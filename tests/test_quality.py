"""The codebase stays ruff- and mypy-clean: checked as part of the test run."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "command",
    [
        ["ruff", "check", "src", "tests"],
        ["ruff", "format", "--check", "src", "tests"],
        ["mypy", "src", "tests"],
    ],
    ids=["ruff-check", "ruff-format", "mypy"],
)
def test_static_checks(command: list[str]) -> None:
    tool = Path(sys.executable).parent / command[0]
    executable = str(tool) if tool.exists() else shutil.which(command[0])
    if executable is None:
        pytest.skip(f"{command[0]} is not installed (pip install -e '.[dev]')")
    result = subprocess.run(
        [executable, *command[1:]], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stdout + result.stderr
