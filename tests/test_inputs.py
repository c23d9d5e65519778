"""The one input validator (``madeleine.inputs``) and the entry points that reach it without
a store: its bounds exactly at their edges, no recursion on any depth, errors that name the
field and where inside it, and JSON text (CLI files, settings, tool calls) parsed safely."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from pydantic import ValidationError

from madeleine import cli
from madeleine.config import Settings
from madeleine.inputs import (
    AGENT_DATA,
    EVENT_DATA,
    METADATA,
    parse_json,
    require_json,
    require_json_object,
    require_seconds,
)
from madeleine.kb.records import normalize_acl


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


def test_depth_is_bounded_at_32_levels_counting_the_object_itself() -> None:
    assert require_json_object(_nested(32), "metadata", METADATA)
    with pytest.raises(ValueError, match=r"^metadata is nested deeper than 32 levels"):
        require_json_object(_nested(33), "metadata", METADATA)
    lists = json.loads("[" * 32 + "]" * 32)  # 32 lists inside the object: 33 levels
    with pytest.raises(ValueError, match="deeper than 32"):
        require_json_object({"a": lists}, "m", METADATA)
    assert require_json_object({"a": lists[0]}, "m", METADATA)
    assert require_json_object(_nested(31), "data", EVENT_DATA)  # one level inside metadata
    with pytest.raises(ValueError, match="deeper than 31"):
        require_json_object(_nested(32), "data", EVENT_DATA)


def test_a_million_levels_or_a_cycle_cost_no_recursion() -> None:
    deep = _nested(1_000_000)
    start = time.perf_counter()
    with pytest.raises(ValueError, match="nested deeper"):
        require_json_object(deep, "data", AGENT_DATA)
    assert time.perf_counter() - start < 1.0
    cycle: dict[str, Any] = {}
    cycle["self"] = cycle
    with pytest.raises(ValueError, match="nested deeper"):
        require_json_object(cycle, "data", AGENT_DATA)


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        ({"x": math.nan}, ValueError, r"finite numbers only .*\(at m\['x'\]\)"),
        ({"x": [1, -math.inf]}, ValueError, r"finite .*\(at m\['x'\]\[1\]\)"),
        ({"x": 2**63}, ValueError, "beyond"),
        ({"x": -(2**63) - 1}, ValueError, "beyond"),
        ({"x": 1e300}, ValueError, "beyond"),  # PostgreSQL would give it back as an integer
        ({1: "a"}, TypeError, "key that is not a str: int"),
        ({(1, 2): "a"}, TypeError, "key that is not a str: tuple"),
        ({"k" * 257: 1}, ValueError, "key longer than 256"),
        ({"k\x00": 1}, ValueError, "NUL"),
        ({"k": "a\ud800"}, ValueError, r"m is not valid Unicode.*\(at m\['k'\]\)"),
        ({"k": {1, 2}}, TypeError, r"must be JSON .*got set \(at m\['k'\]\)"),
        ({"k": b"bytes"}, TypeError, "got bytes"),
        ({f"k{i}": i for i in range(10_001)}, ValueError, "more than 10,000 keys"),
        ({"blob": "x" * 70_000}, ValueError, "larger than 64 KiB"),
        ([1, 2], TypeError, "m must be a dict, got list"),
    ],
)
def test_what_is_refused_and_how_it_is_named(value: Any, error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        require_json_object(value, "m", METADATA)


def test_what_is_accepted_comes_back_as_plain_json() -> None:
    given = MappingProxyType({"t": (1, 2.5, "x"), "n": None, "b": True, "edge": 2**63 - 1})
    checked = require_json_object(given, "m", METADATA)
    assert checked == {"t": [1, 2.5, "x"], "n": None, "b": True, "edge": 2**63 - 1}
    assert type(checked) is dict and type(checked["t"]) is list
    assert require_json("the \\u0000 six characters", "m", METADATA) == "the \\u0000 six characters"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"x": NaN}', "NaN is not a JSON number"),
        ("[Infinity]", "Infinity is not a JSON number"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ("[" + "9" * 5_000 + "]", "not valid JSON"),  # longer than Python parses an int
        ("{", "not valid JSON"),
    ],
)
def test_json_text_is_parsed_strictly_and_without_recursion(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=f"file.json .*{message}|file.json {message}"):
        parse_json(text, "file.json")


@pytest.mark.parametrize(
    "value", [math.nan, math.inf, -math.inf, 1e300, -1, 0, 1e-300, 0.5, 400 * 365 * 86_400.0]
)
def test_a_ttl_is_finite_and_sane(value: float) -> None:
    with pytest.raises(ValueError, match="ttl_seconds must be a positive, finite number"):
        require_seconds(value, "ttl_seconds", minimum=1)


@pytest.mark.parametrize("value", ["60", True, None, [60]])
def test_a_ttl_is_a_number(value: object) -> None:
    with pytest.raises(TypeError, match="ttl_seconds must be a number of seconds"):
        require_seconds(value, "ttl_seconds")


@pytest.mark.parametrize(
    ("environ", "field"),
    [
        ({"MADELEINE_KB__SOURCE_WEIGHTS": '{"faq": NaN}'}, "source_weights"),
        ({"MADELEINE_KB__SOURCE_WEIGHTS": '{"faq": 1e400}'}, "source_weights"),
        ({"MADELEINE_HALF_LIFE_DAYS": '{"a":' * 40 + "1" + "}" * 40}, "half_life_days"),
        ({"MADELEINE_HALF_LIFE_DAYS": "[" * 100_000}, "half_life_days"),
        ({"MADELEINE_LIFECYCLE__EXEMPT_KEYS": "[" * 100_000}, "exempt_keys"),
        ({"MADELEINE_GRAPH_DAMPING": "nan"}, "damping"),
        ({"MADELEINE_FUSION__DENSE_WEIGHT": "inf"}, "dense_weight"),
        ({"MADELEINE_WORKER__LEASE_SECONDS": "Infinity"}, "lease_seconds"),
    ],
)
def test_settings_go_through_the_same_checks(environ: dict[str, str], field: str) -> None:
    with pytest.raises(ValidationError, match=field):
        Settings.from_env(environ)


def test_settings_given_as_dicts_are_checked_too() -> None:
    with pytest.raises(ValidationError, match="finite numbers only"):
        Settings(kb={"source_weights": {"faq": math.nan}})
    with pytest.raises(ValidationError, match="finite number"):
        Settings(graph_damping=math.nan)


def test_the_cli_refuses_a_file_too_deep_to_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "messages.json"
    file.write_text("[" * 100_000 + "]" * 100_000)
    code = cli.main(["add", str(file), "--user", "u", "--data", str(tmp_path / "d")])
    assert code == 2
    assert "nested too deeply" in capsys.readouterr().err
    file.write_text(json.dumps([{"content": "hi", "metadata": {"x": 1}}]).replace("1", "NaN"))
    assert cli.main(["add", str(file), "--user", "u", "--data", str(tmp_path / "d")]) == 2
    assert "NaN is not a JSON number" in capsys.readouterr().err


def test_acl_entries_are_bounded() -> None:
    with pytest.raises(ValueError, match="at most 1,000"):
        normalize_acl([f"user:u{i}" for i in range(1_001)])
    with pytest.raises(ValueError, match="an acl entry has 10,000 characters"):
        normalize_acl(["group:" + "x" * 9_994])
    with pytest.raises(ValueError, match="an acl entry contains a NUL"):
        normalize_acl(["group:a\x00"])
