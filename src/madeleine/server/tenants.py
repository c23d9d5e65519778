"""One ``Memory`` per tenant, each in its own directory under ``<data>/tenants/`` — or, with
the PostgreSQL store (``MADELEINE_STORE=postgresql://…``), in its own schema of that
database (``<store.schema_name>_<tenant>_<hash>``).

Separate stores make isolation structural: a tenant's key opens only its own store, so no
id guessed from another tenant can name anything there. All tenants share one embedder
(the model is loaded once per process)."""

from __future__ import annotations

import hashlib
import re
import threading
from pathlib import Path

from madeleine.api import Memory
from madeleine.config import Settings
from madeleine.embed.base import Embedder
from madeleine.server.keys import require_tenant
from madeleine.store import is_postgres_url


class Tenants:
    def __init__(self, data: Path, settings: Settings, embedder: Embedder) -> None:
        self._root = data / "tenants"
        self._settings = settings
        self._embedder = embedder
        self._open: dict[str, Memory] = {}
        self._lock = threading.Lock()
        self._closed = False

    def memory(self, tenant: str) -> Memory:
        """The tenant's store, opened on first use (created when new)."""
        found = self._open.get(tenant)
        if found is not None:
            return found
        require_tenant(tenant)
        with self._lock:
            if self._closed:
                raise RuntimeError("the server is shutting down")
            found = self._open.get(tenant)
            if found is None:
                url = self._settings.store.url
                if is_postgres_url(url):
                    schema = tenant_schema(self._settings.store.schema_name, tenant)
                    settings = self._settings.model_copy(deep=True)
                    settings.store.schema_name = schema
                    found = Memory(url, embedder=self._embedder, settings=settings)
                else:
                    found = Memory(
                        self._root / tenant, embedder=self._embedder, settings=self._settings
                    )
                self._open[tenant] = found
        return found

    def known(self) -> list[str]:
        """Tenants with a store on disk, opened or not (with PostgreSQL: opened ones)."""
        if is_postgres_url(self._settings.store.url):
            return sorted(self._open)
        if not self._root.is_dir():
            return []
        return sorted(p.name for p in self._root.iterdir() if p.is_dir())

    def opened(self) -> int:
        return len(self._open)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            memories, self._open = list(self._open.values()), {}
        for memory in memories:
            memory.close()


def tenant_schema(base: str, tenant: str) -> str:
    """The PostgreSQL schema of a tenant: readable, and distinct for names that differ only
    in case or punctuation (a short hash of the exact name)."""
    slug = re.sub(r"[^a-z0-9_]", "_", tenant.lower())[:40]
    digest = hashlib.sha256(tenant.encode("utf-8")).hexdigest()[:8]
    return f"{base[:12]}_{slug}_{digest}"
