"""Hostile JSON-like values for property tests of every entry point: deep nesting (far past
any stack), NaN and infinities, integers past 64 bits, thousands of keys, long keys and
strings, non-str keys, NUL, lone surrogates and other odd Unicode, and plain values that
should be accepted. Each comes with its JSON text, where JSON can say it, for the servers."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from madeleine.inputs import JsonLimits, require_json


@dataclass(frozen=True)
class Hostile:
    value: Any
    text: str | None  # the value as JSON text (NaN as the NaN literal), None if JSON cannot
    shape: str  # what kind of hostile it is, for Hypothesis' statistics

    def __repr__(self) -> str:  # a 5,000-level value would fill the failure report
        return f"Hostile({(self.text or repr(self.value))[:200]!r}…)"


def _dumps(value: Any) -> str | None:
    try:
        return json.dumps(value)  # ensure_ascii: a lone surrogate travels as a \\udXXX escape
    except (TypeError, ValueError, RecursionError):
        return None


_ODD_TEXT = st.text(
    st.characters(codec=None, exclude_categories=()),  # surrogates, NUL, controls, RTL marks
    max_size=12,
) | st.sampled_from(
    ["", "\x00", "\ud800", "a\udfffb", "\u2028\u2029", "\ufeff", "🦄" * 3, "\\u0000"]
)
_NUMBERS = (
    st.integers(min_value=-(2**70), max_value=2**70)
    | st.sampled_from([2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 10**100])
    | st.floats(allow_nan=True, allow_infinity=True)
)
_LEAF = st.none() | st.booleans() | _NUMBERS | _ODD_TEXT
_KEY = st.one_of(
    st.text("abcdefghij_", max_size=8),
    st.text(max_size=8),
    _ODD_TEXT,
    st.integers(-3, 3) | st.none() | st.booleans() | st.tuples(st.integers(0, 2)),
)
_TREE = st.recursive(
    st.one_of(st.none() | st.booleans(), st.integers(-1000, 1000), st.text(max_size=12), _LEAF),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEY, inner, max_size=4),
    max_leaves=12,
)


def _nested(depth: int, kind: str, leaf: int) -> Hostile:
    """``depth`` levels of ``{"a": ...}`` or ``[...]`` around ``leaf``, built without
    recursion (the value and its text alike)."""
    value: Any = leaf
    for _ in range(depth):
        value = {"a": value} if kind == "dict" else [value]
    opening, closing = ('{"a":', "}") if kind == "dict" else ("[", "]")
    text = '{"top":' + opening * depth + str(leaf) + closing * depth + "}"
    return Hostile({"top": value}, text, f"nested {depth} {kind}s")


def _wide(count: int) -> Hostile:
    value = {f"k{i}": i for i in range(count)}
    return Hostile(value, json.dumps(value), f"{count} keys")


def _long(chars: int, in_key: bool) -> Hostile:
    value = {"k" * chars: 1} if in_key else {"blob": "x" * chars}
    return Hostile(value, json.dumps(value), f"a {chars}-character {'key' if in_key else 'str'}")


def _tree(value: Any) -> Hostile:
    return Hostile(value, _dumps(value), f"a random {type(value).__name__}")


HOSTILE_OBJECTS: st.SearchStrategy[Hostile] = st.one_of(
    st.dictionaries(_KEY, _TREE, max_size=5).map(_tree),
    st.builds(
        _nested,
        st.sampled_from([1, 30, 31, 32, 33, 100, 500, 900, 5_000]),
        st.sampled_from(["dict", "list"]),
        st.integers(0, 9),
    ),
    st.sampled_from([10, 9_999, 10_001, 20_000]).map(_wide),
    st.builds(_long, st.sampled_from([255, 257, 70_000, 2_000_000]), st.booleans()),
)
"""Top-level dicts (metadata, data) of every hostile shape."""

HOSTILE_ANY: st.SearchStrategy[Hostile] = st.one_of(
    HOSTILE_OBJECTS, st.one_of(_LEAF, st.lists(_TREE, max_size=3)).map(_tree)
)
"""Also what is not a dict at all (a list, a str, a number, None)."""

HOSTILE_SECONDS = ["NaN", "Infinity", "-Infinity", "1e300", "-1", "0", "1e-300", "60", "86400"]
HOSTILE_SECONDS += ['"60"', "true", "0.5"]
"""Durations as JSON text: only 60 and 86400 (finite, from 1 s to ten years) are sane."""


_READ_BACK = JsonLimits(
    max_bytes=64 * 1024 * 1024, max_depth=40, max_entries=10_000_000, max_key_chars=10_000
)
RUN = settings(
    max_examples=50,
    deadline=None,
    derandomize=True,  # the same examples on every run: CI is reproducible
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
        HealthCheck.function_scoped_fixture,  # one store per test, shared by its examples
    ],
)


def readable(value: Any) -> None:
    """What a read route returned is itself within the limits: strict JSON (no NaN), not
    nested past 32 levels, so whatever reads it next (an export, a dashboard) reads it."""
    json.dumps(value, allow_nan=False)
    require_json(value, "read back", _READ_BACK)


def refused_cleanly(exc: BaseException, field: str) -> None:
    """A refusal is a ValueError/TypeError that names the field (its message starts with
    it or mentions it), never a RecursionError or anything else."""
    assert isinstance(exc, ValueError | TypeError), repr(exc)
    assert field in str(exc), (field, str(exc)[:300])
