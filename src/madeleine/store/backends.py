"""Which backend a store location names, and what to do with it.

A location is a directory (the embedded SQLite store, the default) or a URL whose scheme a
registered backend claims (``postgresql://``). Code outside ``store/`` asks this module —
is the location a URL, which namespaces (a server's tenant schemas) it holds, migrate or
drop one — and never names a backend. A third backend is one package whose ``backend``
module has ``open_store`` and ``exists`` (and, for a URL, ``namespaces``, ``drop`` and
``migrate``), plus one line in ``REGISTRY``.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from madeleine.store.ports import Store


@dataclass(frozen=True, slots=True)
class Backend:
    name: str
    module: str  # imported on first use: an optional backend's driver is needed only there
    schemes: tuple[str, ...] = ()  # URL prefixes it claims; none: the default, a directory

    def load(self) -> ModuleType:
        return importlib.import_module(self.module)


EMBEDDED = Backend("sqlite", "madeleine.store.sqlite.backend")
REGISTRY: tuple[Backend, ...] = (
    Backend("postgres", "madeleine.store.postgres.backend", ("postgresql://", "postgres://")),
)


def backend_of(location: object) -> Backend:
    """The backend whose scheme ``location`` starts with, else the embedded one."""
    if isinstance(location, str):
        for backend in REGISTRY:
            if location.startswith(backend.schemes):
                return backend
    return EMBEDDED


def is_url(location: object) -> bool:
    """A server's store (a URL), not a directory of the embedded one."""
    return backend_of(location) is not EMBEDDED


def as_location(raw: str | os.PathLike[str]) -> str | Path:
    """A URL stays a string; anything else is a directory."""
    return str(raw) if is_url(str(raw)) else Path(raw)


def open_store(location: str | Path, **options: Any) -> Store:
    """Open (creating if needed) the store at ``location`` with the backend it names."""
    opened: Store = backend_of(location).load().open_store(location, **options)
    return opened


def exists(location: str | Path) -> bool:
    """Whether a store is there already (commands that only read must not create one); a
    server's store is taken to exist (its schema is created when first opened)."""
    return bool(backend_of(location).load().exists(location))


def namespaces(url: str, base: str) -> list[str]:
    """The stores named ``<base>_…`` beside the main one at ``url`` (a server's tenants)."""
    return list(_url_backend(url).namespaces(url, base))


def drop_namespace(url: str, namespace: str) -> None:
    """Remove one namespace and everything in it (a benchmark's scratch store)."""
    _url_backend(url).drop(url, namespace)


def migrate(url: str, namespace: str) -> tuple[list[str], int]:
    """Bring ``namespace`` up to date: the migrations applied, and the latest version."""
    applied, latest = _url_backend(url).migrate(url, namespace)
    return list(applied), int(latest)


def tenant_namespace(url: str, base: str, tenant: str) -> str:
    """The namespace (schema) a server keeps ``tenant``'s store in, beside ``base``."""
    return str(_url_backend(url).tenant_namespace(base, tenant))


def require_url(location: object, option: str) -> str:
    if not is_url(location):
        schemes = ", ".join(s for b in REGISTRY for s in b.schemes)
        raise ValueError(f"{option} takes a store URL ({schemes}), got {location!r}")
    return str(location)


def _url_backend(url: str) -> ModuleType:
    return backend_of(require_url(url, "this operation")).load()
