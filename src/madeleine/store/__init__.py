"""Storage: the port (``ports``), its typed records (``records``), the backends, and
``backends``: which one a location names."""

from __future__ import annotations

from pathlib import Path

from madeleine.store import backends
from madeleine.store.ports import Store


def open_store(
    directory: Path | str,
    *,
    vault_key: str | None = None,
    busy_timeout_ms: int = 30_000,
    ann_threshold: int = 20_000,
    read_only: bool | None = None,
    schema: str = "madeleine",
    pool_size: int = 8,
    redis_url: str | None = None,
    redis_prefix: str = "madeleine",
    read_url: str | None = None,
) -> Store:
    """The store at ``directory``: the embedded backend in a directory (created if
    missing), or the backend whose URL scheme it starts with (``postgresql://``).
    ``read_only``: None opens read-only exactly when the files cannot be written (a mounted
    snapshot, another user's store); such a store answers reads and refuses writes with
    ``StoreReadOnlyError``. ``redis_url`` keeps short-term memory (conversation buffers,
    agent states) in Redis instead of the store; ``read_url`` (PostgreSQL) sends searches
    and contexts to a read replica."""
    return backends.open_store(
        directory,
        vault_key=vault_key,
        busy_timeout_ms=busy_timeout_ms,
        ann_threshold=ann_threshold,
        read_only=read_only,
        schema=schema,
        pool_size=pool_size,
        redis_url=redis_url,
        redis_prefix=redis_prefix,
        read_url=read_url,
    )
