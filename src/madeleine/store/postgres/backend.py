"""Opening a PostgreSQL store, and what a database holds beside it: the schemas of a
server's tenants, migrations, scratch schemas to drop."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from madeleine.store.backends import backend_of
from madeleine.store.crypto import load_key
from madeleine.store.ports import Store
from madeleine.store.postgres.tenants import drop_schema, tenant_schemas
from madeleine.store.postgres.tenants import tenant_namespace as tenant_namespace  # the backend's
from madeleine.store.redis import attach


def open_store(
    location: str | Path,
    *,
    vault_key: str | None = None,
    ann_threshold: int = 20_000,
    read_only: bool | None = None,
    schema: str = "madeleine",
    pool_size: int = 8,
    redis_url: str | None = None,
    redis_prefix: str = "madeleine",
    read_url: str | None = None,
    **_file_options: Any,  # a busy timeout is a file's, not a server's
) -> Store:
    """The store in ``schema`` of the database at ``location`` (created if missing);
    ``read_url`` sends searches and contexts to a read replica."""
    try:
        from madeleine.store.postgres.store import PostgresStore
    except ImportError as exc:
        raise ImportError(
            f"the PostgreSQL store needs psycopg and pgvector ({exc.name} is missing): "
            "pip install 'madeleine[postgres]'"
        ) from exc
    url = str(location)
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
    if read_url is not None and backend_of(read_url) is not backend_of(url):
        raise ValueError(f"the read replica's URL must be postgresql://…, got {read_url!r}")
    store = PostgresStore(
        url,
        vault_key=key,
        schema=schema,
        ann_threshold=ann_threshold,
        pool_size=pool_size,
        read_url=read_url,
    )
    identity = _identity(url, schema)
    return attach(store, redis_url, redis_prefix, identity, schema, shared_cache=True)


def exists(location: str | Path) -> bool:
    return True  # the schema is created when first opened


def namespaces(url: str, base: str) -> list[str]:
    return tenant_schemas(url, base)


def drop(url: str, namespace: str) -> None:
    drop_schema(url, namespace)


def migrate(url: str, namespace: str) -> tuple[list[str], int]:
    from madeleine.store.postgres.migrations import migrate as apply
    from madeleine.store.postgres.migrations import migrations

    applied = apply(url, namespace)
    return [f"{m.version:04d}_{m.name}" for m in applied], len(migrations())


def _identity(url: str, schema: str) -> str:
    """Server, port, database and schema: what makes a PostgreSQL store this one (never the
    password, which may change)."""
    from psycopg.conninfo import conninfo_to_dict

    parts = conninfo_to_dict(url)
    return f"{parts.get('host', '')}:{parts.get('port', '')}/{parts.get('dbname', '')}/{schema}"
