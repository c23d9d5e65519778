"""The one validator of what callers hand in: text, ids, numbers of seconds, and JSON-like
values (message metadata, event data, agent data, KB metadata, JSON settings).

Every entry point (Python, REST, MCP, CLI) reaches the ``Memory`` facade, and the facade
calls these before anything is written. A refusal is a ``ValueError`` (a bad value) or a
``TypeError`` (a wrong type) whose message starts with the field's name; what is accepted can
be stored on every backend, read back, served and exported, by this process and by any
other JSON reader: no NaN, no integer beyond 64 bits, nothing nested deeper than a reader's
stack, no text PostgreSQL cannot hold.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

MAX_ID_CHARS = 512
RESERVED_ID_PREFIX = "\x1f"  # vault owners that are not users (a KB collection's): no user may
_MAX_INT = 2**63  # JSON readers elsewhere (Go, Java, Rust) stop at 64 bits, and PostgreSQL's
# jsonb writes a float of 1e300 back as a 301-digit integer


@dataclass(frozen=True, slots=True)
class JsonLimits:
    """Bounds of one kind of JSON value. ``max_depth`` counts nested objects and lists, the
    value itself being level 1; ``max_entries`` counts keys and list items at every level."""

    max_bytes: int
    max_depth: int = 32
    max_entries: int = 10_000
    max_key_chars: int = 256

    def nested(self, overhead_bytes: int = 256) -> JsonLimits:
        """The bounds of a value stored one level down inside a value bounded by these (event
        data inside a message's metadata), so that the outer check cannot fail later."""
        return replace(
            self, max_depth=self.max_depth - 1, max_bytes=self.max_bytes - overhead_bytes
        )


METADATA = JsonLimits(max_bytes=64 * 1024)
"""A message's metadata, and a KB document's."""
EVENT_DATA = METADATA.nested()
"""A behavioural event's data: stored as ``{"event_type": ..., "data": ...}`` in metadata."""
AGENT_DATA = JsonLimits(max_bytes=1024 * 1024)
"""An agent state's data (its working state: plans, tool results)."""
SETTING = JsonLimits(max_bytes=64 * 1024)
"""A dict setting given as JSON (``MADELEINE_KB__SOURCE_WEIGHTS='{"faq": 1.2}'``)."""

MAX_TTL_SECONDS = 10 * 366 * 86_400.0  # ten years: beyond that, say None (never expires)
MIN_TTL_SECONDS = 1.0  # Redis expires keys by the millisecond; a shorter buffer is no buffer


def require_text(value: str, field: str) -> str:
    """Text must be encodable: a lone surrogate (half of a UTF-16 pair, e.g. from a broken
    JSON decoder) cannot be stored, indexed or hashed, and PostgreSQL's text holds no NUL."""
    if "\x00" in value:
        raise ValueError(
            f"{field} contains a NUL character (\\x00) at position {value.index(chr(0))}"
        )
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"{field} is not valid Unicode: a lone surrogate {value[exc.start]!r} at "
            f"position {exc.start}"
        ) from None
    return value


def require_id(value: object, argument: str) -> str:
    """User, session and agent ids: non-empty strings of reasonable length."""
    if not isinstance(value, str):
        raise TypeError(f"{argument} must be a str, got {type(value).__name__}")
    if not value.strip():
        raise ValueError(f"{argument} must be a non-empty string")
    if len(value) > MAX_ID_CHARS:
        raise ValueError(f"{argument} is longer than {MAX_ID_CHARS} characters")
    if value.startswith(RESERVED_ID_PREFIX):
        raise ValueError(f"{argument} must not start with \\x1f (reserved for collections)")
    return require_text(value, argument)


def require_short_text(value: object, field: str, max_chars: int) -> str:
    """A free-text argument that is stored as given (a reason, a title): a str, valid
    Unicode, at most ``max_chars`` characters."""
    if not isinstance(value, str):
        raise TypeError(f"{field} must be a str, got {type(value).__name__}")
    if len(value) > max_chars:
        raise ValueError(f"{field} has {len(value):,} characters; at most {max_chars:,}")
    return require_text(value, field)


def require_seconds(
    value: object,
    field: str,
    *,
    minimum: float = 0.0,
    maximum: float = MAX_TTL_SECONDS,
    zero: bool = False,
) -> float:
    """A finite duration in seconds, from ``minimum`` to ``maximum``, positive unless
    ``zero`` (a timeout of 0 polls): NaN compares false with everything, so a check written
    as ``value <= 0`` lets it through, and ``float(10**400)`` overflows."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{field} must be a number of seconds, got {type(value).__name__}")
    sane = minimum <= value <= maximum and (value > 0 or (zero and value == 0))
    if not sane:  # NaN included
        low = f"at least {minimum:g} and " if minimum > 0 else ""
        raise ValueError(
            f"{field} must be a {'non-negative' if zero else 'positive'}, finite number of "
            f"seconds, {low}at most {maximum:,.0f}; got {shown_number(value)}"
        )
    return float(value)


def shown_number(value: float) -> str:
    """A number for an error message: 10**4000 would fill it (or fail to print at all)."""
    return repr(value) if isinstance(value, float) or abs(value) < 10**20 else "a huge int"


def require_json_object(value: object, field: str, limits: JsonLimits) -> dict[str, Any]:
    """``value`` as a plain JSON object within ``limits`` (a fresh copy: tuples become lists,
    mappings dicts), or a ``TypeError``/``ValueError`` naming ``field`` and where inside it
    the problem is."""
    if not isinstance(value, Mapping):
        raise TypeError(f"{field} must be a dict, got {type(value).__name__}")
    checked: dict[str, Any] = require_json(value, field, limits)
    return checked


def require_json(value: object, field: str, limits: JsonLimits) -> Any:
    """Any JSON value (object, list, str, finite number, bool, None) within ``limits``, as a
    plain copy. The walk is iterative and stops at ``max_depth``, so a value nested a
    million levels deep (or one that contains itself) costs nothing and raises no
    ``RecursionError``."""
    _walk(value, field, limits)
    encoded = json.dumps(_plain(value), ensure_ascii=False)  # recursion bounded: checked above
    size = len(encoded.encode("utf-8"))
    if size > limits.max_bytes:
        raise ValueError(
            f"{field} is larger than {_size(limits.max_bytes)} as JSON ({size:,} bytes)"
        )
    return json.loads(encoded)


def parse_json(text: str | bytes, field: str, limits: JsonLimits | None = None) -> Any:
    """JSON text as a value: the strict grammar (no NaN or Infinity literals), a
    ``ValueError`` naming ``field`` for text nested too deep to parse, and ``limits`` (when
    given) applied to the result."""
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise ValueError(f"{field} is nested too deeply to read as JSON") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{field} is not valid JSON: {exc}") from None
    except ValueError as exc:  # a constant, or an integer longer than Python will parse
        raise ValueError(f"{field} is not valid JSON: {exc}") from None
    return value if limits is None else require_json(value, field, limits)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number (finite numbers only)")


def _walk(root: object, field: str, limits: JsonLimits) -> None:
    entries = 0
    stack: list[tuple[object, str, int]] = [(root, "", 1)]
    while stack:
        value, where, depth = stack.pop()
        if isinstance(value, str):
            _text(value, field, where, limits)
        elif value is None or isinstance(value, bool):
            continue
        elif isinstance(value, int | float):
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(
                    f"{field} must hold finite numbers only (no NaN or infinity){_at(field, where)}"
                )
            if not -_MAX_INT <= value < _MAX_INT:
                raise ValueError(
                    f"{field} holds a number beyond ±2**63 (64 bits){_at(field, where)}; "
                    "give it as a string"
                )
        elif isinstance(value, Mapping | list | tuple):
            if depth > limits.max_depth:
                raise ValueError(
                    f"{field} is nested deeper than {limits.max_depth} levels"
                    f"{_at(field, _short(where))}"
                )
            entries += len(value)
            if entries > limits.max_entries:
                raise ValueError(
                    f"{field} has more than {limits.max_entries:,} keys and items in all"
                )
            if isinstance(value, Mapping):
                for key, item in value.items():
                    if not isinstance(key, str):
                        raise TypeError(
                            f"{field} has a key that is not a str: {type(key).__name__}"
                            f"{_at(field, where)}"
                        )
                    if len(key) > limits.max_key_chars:
                        raise ValueError(
                            f"{field} has a key longer than {limits.max_key_chars} characters"
                            f"{_at(field, where)}"
                        )
                    _text(key, field, where, limits)
                    stack.append((item, f"{where}[{key[:40]!r}]", depth + 1))
            else:
                stack.extend((item, f"{where}[{i}]", depth + 1) for i, item in enumerate(value))
        else:
            raise TypeError(
                f"{field} must be JSON (dicts, lists, str, finite numbers, bool, None), "
                f"got {type(value).__name__}{_at(field, where)}"
            )


def _plain(value: object) -> Any:
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def _text(value: str, field: str, where: str, limits: JsonLimits) -> None:
    if len(value) > limits.max_bytes:
        raise ValueError(f"{field} is larger than {_size(limits.max_bytes)} as JSON")
    try:
        require_text(value, field)
    except ValueError as exc:
        raise ValueError(f"{exc}{_at(field, where)}") from None


def _at(field: str, where: str) -> str:
    return f" (at {field}{where})" if where else ""


def _short(where: str) -> str:
    """A path to a deep value, cut to its first steps: the point is where it starts."""
    return where if len(where) <= 120 else where[:120] + "…"


def _size(limit: int) -> str:
    return f"{limit // 1024} KiB" if limit % 1024 == 0 else f"{limit:,} bytes"
