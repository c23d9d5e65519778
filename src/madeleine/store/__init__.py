"""Storage: the port (``ports``), its typed records (``records``) and the backends."""

from __future__ import annotations

import os
from pathlib import Path

from cryptography.fernet import Fernet

from madeleine.store.crypto import KEY_FILE, load_key
from madeleine.store.ports import Store
from madeleine.store.private import private_directory

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def is_postgres_url(location: object) -> bool:
    return isinstance(location, str) and location.startswith(POSTGRES_SCHEMES)


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
    """The embedded backend in ``directory`` (created if missing), or the PostgreSQL store
    when it is a ``postgresql://`` URL. ``read_only``: None opens read-only exactly when the
    files cannot be written (a mounted snapshot, another user's store); such a store answers
    reads and refuses writes with ``StoreReadOnlyError``. ``redis_url`` keeps short-term
    memory (conversation buffers, agent states) in Redis instead of the store; ``read_url``
    (PostgreSQL) sends searches and contexts to a read replica."""
    if is_postgres_url(directory):
        store = _open_postgres(
            str(directory), vault_key, ann_threshold, read_only, schema, pool_size, read_url
        )
        identity = _database_identity(str(directory), schema)
        return _with_redis(store, redis_url, redis_prefix, identity, schema, shared_cache=True)
    directory = Path(directory)
    from madeleine.store.sqlite.store import DATABASE_FILE, SQLiteStore

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
    return _with_redis(embedded, redis_url, redis_prefix, str(resolved), resolved.name or "store")


def _with_redis(
    store: Store,
    url: str | None,
    prefix: str,
    identity: str,
    readable: str,
    shared_cache: bool = False,
) -> Store:
    """Short-term memory in Redis; with ``shared_cache`` (PostgreSQL: the embedded store
    reads its own file faster than Redis) the read path's second cache level too."""
    if not url:
        return store
    from madeleine.store.redis import connect, namespace
    from madeleine.store.redis.cache import RedisCache
    from madeleine.store.redis.short_term import RedisShortTerm

    try:
        client = connect(url)
    except Exception:
        store.close()
        raise
    keys = namespace(prefix, identity, readable)
    store.short_term = RedisShortTerm(client, keys)  # closes the client with the store
    if shared_cache:
        store.cache = RedisCache(client, keys)
    return store


def _database_identity(url: str, schema: str) -> str:
    """Server, port, database and schema: what makes a PostgreSQL store this one (never the
    password, which may change)."""
    from psycopg.conninfo import conninfo_to_dict

    parts = conninfo_to_dict(url)
    return f"{parts.get('host', '')}:{parts.get('port', '')}/{parts.get('dbname', '')}/{schema}"


def _open_postgres(
    url: str,
    vault_key: str | None,
    ann_threshold: int,
    read_only: bool | None,
    schema: str,
    pool_size: int,
    read_url: str | None = None,
) -> Store:
    try:
        from madeleine.store.postgres.store import PostgresStore
    except ImportError as exc:
        raise ImportError(
            f"the PostgreSQL store needs psycopg and pgvector ({exc.name} is missing): "
            "pip install 'madeleine[postgres]'"
        ) from exc
    if read_only:
        raise ValueError(
            "a read-only PostgreSQL store is a matter of database roles: connect as a role "
            "that may only SELECT"
        )
    if vault_key is None or not vault_key.strip():
        raise ValueError(
            "a PostgreSQL store needs the vault key every process of the deployment shares: "
            "set MADELEINE_VAULT_KEY to a Fernet key (python -c 'from cryptography.fernet "
            "import Fernet; print(Fernet.generate_key().decode())'); keep it out of the "
            "database and back it up"
        )
    key = load_key(Path("."), vault_key)  # validates the configured key; no file is used
    if read_url is not None and not is_postgres_url(read_url):
        raise ValueError(f"the read replica's URL must be postgresql://…, got {read_url!r}")
    return PostgresStore(
        url,
        vault_key=key,
        schema=schema,
        ann_threshold=ann_threshold,
        pool_size=pool_size,
        read_url=read_url,
    )
