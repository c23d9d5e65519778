"""Opening the embedded store: a directory, created private, its vault key beside it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from cryptography.fernet import Fernet

from madeleine.store.crypto import KEY_FILE, load_key
from madeleine.store.ports import Store
from madeleine.store.private import private_directory
from madeleine.store.redis import attach
from madeleine.store.sqlite.store import DATABASE_FILE, SQLiteStore


def open_store(
    location: str | Path,
    *,
    vault_key: str | None = None,
    busy_timeout_ms: int = 30_000,
    ann_threshold: int = 20_000,
    read_only: bool | None = None,
    redis_url: str | None = None,
    redis_prefix: str = "madeleine",
    **_server_options: Any,  # schema, pool size, read replica: a server's, not a file's
) -> Store:
    """The store in the directory ``location`` (created if missing). ``read_only``: None
    opens read-only exactly when the files cannot be written (a mounted snapshot, another
    user's store)."""
    directory = Path(location)
    if read_only is None:
        database = directory / DATABASE_FILE
        read_only = directory.is_dir() and not (
            os.access(directory, os.W_OK)
            and (not database.exists() or os.access(database, os.W_OK))
        )
    if not read_only:
        private_directory(directory)
        key = load_key(directory, vault_key)
    elif (vault_key and vault_key.strip()) or (directory / KEY_FILE).exists():
        key = load_key(directory, vault_key)
    else:  # nothing to read the vault with: an empty vault needs none, else check_key says so
        key = Fernet.generate_key()
    embedded = SQLiteStore(
        directory,
        vault_key=key,
        busy_timeout_ms=busy_timeout_ms,
        ann_threshold=ann_threshold,
        read_only=read_only,
    )
    resolved = directory.resolve()
    return attach(embedded, redis_url, redis_prefix, str(resolved), resolved.name or "store")


def exists(location: str | Path) -> bool:
    return (Path(location) / DATABASE_FILE).is_file()
