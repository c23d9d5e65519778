"""The async twin (and later the HTTP client) must stay in step with ``Memory``."""

from __future__ import annotations

import inspect

from madeleine import AsyncMemory, Memory

_LIFECYCLE = {"close"}  # async too, but with no arguments to compare beyond self


def _public(cls: type) -> dict[str, object]:
    """Every public method a caller reaches on ``cls``, wherever in its hierarchy it is
    defined (``Memory``'s lifecycle and audit methods live in mixins)."""
    found: dict[str, object] = {}
    for klass in cls.__mro__:
        if klass is object:
            continue
        for name, member in vars(klass).items():
            if not name.startswith("_") and callable(member):
                found.setdefault(name, member)
    return found


def test_the_surface_walk_sees_the_mixins() -> None:
    assert {"lifecycle", "consolidate", "maintain", "audit_log"} <= set(_public(Memory))


def test_async_memory_covers_every_public_method_with_the_same_signature() -> None:
    sync, twin = _public(Memory), _public(AsyncMemory)
    missing = set(sync) - set(twin)
    assert not missing, f"AsyncMemory lacks {sorted(missing)}"
    for name, method in sync.items():
        mirrored = twin[name]
        assert inspect.iscoroutinefunction(mirrored), f"AsyncMemory.{name} must be async"
        if name in _LIFECYCLE:
            continue
        expected = inspect.signature(method)  # type: ignore[arg-type]
        got = inspect.signature(mirrored)
        assert list(got.parameters.values()) == list(expected.parameters.values()), name
        assert got.return_annotation == expected.return_annotation, name


def test_async_memory_takes_the_same_constructor_arguments() -> None:
    expected = inspect.signature(Memory.__init__).parameters
    got = inspect.signature(AsyncMemory.__init__).parameters
    assert list(got.values()) == list(expected.values())
