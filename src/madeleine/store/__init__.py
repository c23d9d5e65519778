"""Storage: the port (``ports``), its typed records (``records``) and the backends."""

from __future__ import annotations

import os
from pathlib import Path

from cryptography.fernet import Fernet

from madeleine.store.crypto import KEY_FILE, load_key
from madeleine.store.ports import Store


def open_store(
    directory: Path,
    *,
    vault_key: str | None = None,
    busy_timeout_ms: int = 30_000,
    ann_threshold: int = 20_000,
    read_only: bool | None = None,
) -> Store:
    """The embedded backend in ``directory`` (created if missing). ``read_only``: None opens
    read-only exactly when the files cannot be written (a mounted snapshot, another user's
    store); such a store answers reads and refuses writes with ``StoreReadOnlyError``."""
    from madeleine.store.sqlite.store import DATABASE_FILE, SQLiteStore

    if read_only is None:
        database = directory / DATABASE_FILE
        read_only = directory.is_dir() and not (
            os.access(directory, os.W_OK)
            and (not database.exists() or os.access(database, os.W_OK))
        )
    if not read_only:
        directory.mkdir(parents=True, exist_ok=True)
        key = load_key(directory, vault_key)
    elif (vault_key and vault_key.strip()) or (directory / KEY_FILE).exists():
        key = load_key(directory, vault_key)
    else:  # nothing to read the vault with: an empty vault needs none, else check_key says so
        key = Fernet.generate_key()
    return SQLiteStore(
        directory,
        vault_key=key,
        busy_timeout_ms=busy_timeout_ms,
        ann_threshold=ann_threshold,
        read_only=read_only,
    )
