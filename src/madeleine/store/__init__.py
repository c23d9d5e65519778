"""Storage: the port (``ports``), its typed records (``records``) and the backends."""

from __future__ import annotations

from pathlib import Path

from madeleine.store.crypto import load_key
from madeleine.store.ports import Store


def open_store(
    directory: Path,
    *,
    vault_key: str | None = None,
    busy_timeout_ms: int = 30_000,
    ann_threshold: int = 20_000,
) -> Store:
    """The embedded backend in ``directory`` (created if missing)."""
    from madeleine.store.sqlite.store import SQLiteStore

    directory.mkdir(parents=True, exist_ok=True)
    return SQLiteStore(
        directory,
        vault_key=load_key(directory, vault_key),
        busy_timeout_ms=busy_timeout_ms,
        ann_threshold=ann_threshold,
    )
