"""Redis for what is short-lived and shared between processes: conversation buffers with a
time to live, agent states, and the notifications that wake workers when jobs are queued.
The durable store (SQLite or PostgreSQL) keeps everything else; without Redis it keeps these
too."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from madeleine.store.ports import Store


def connect(url: str) -> Any:
    """A redis-py client for ``url`` (redis://, rediss:// or unix://), checked with a PING so
    that a wrong URL fails at start-up, not at the first session."""
    try:
        import redis
    except ImportError as exc:
        raise ImportError(
            "MADELEINE_REDIS_URL is set but redis-py is missing: pip install 'madeleine[redis]'"
        ) from exc
    client = redis.Redis.from_url(url, socket_connect_timeout=5, health_check_interval=30)
    try:
        client.ping()
    except redis.RedisError as exc:
        client.close()
        raise ConnectionError(f"cannot reach Redis at {_safe(url)}: {exc}") from exc
    return client


def namespace(prefix: str, store_identity: str, readable: str) -> str:
    """The key prefix of one store: two stores (two schemas, two databases, two directories)
    sharing a Redis server never see each other's keys."""
    digest = hashlib.sha256(store_identity.encode()).hexdigest()[:12]
    return f"{prefix}:{readable}:{digest}:"


def jobs_channel(prefix: str) -> str:
    """One channel per deployment: a worker serving many tenants listens once."""
    return f"{prefix}:jobs"


def _safe(url: str) -> str:
    """The URL without its password, for messages."""
    head, at, tail = url.rpartition("@")
    if not at:
        return url
    scheme, _, _credentials = head.partition("://")
    return f"{scheme}://…@{tail}"


def attach(
    store: Store,
    url: str | None,
    prefix: str,
    identity: str,
    readable: str,
    shared_cache: bool = False,
) -> Store:
    """Short-term memory in Redis at ``url`` (when set) for this store; with
    ``shared_cache`` (PostgreSQL: the embedded store reads its own file faster than Redis)
    the read path's second cache level too. The client closes with the store."""
    if not url:
        return store
    from madeleine.store.redis.cache import RedisCache
    from madeleine.store.redis.short_term import RedisShortTerm

    try:
        client = connect(url)
    except Exception:
        store.close()
        raise
    keys = namespace(prefix, identity, readable)
    store.short_term = RedisShortTerm(client, keys)
    if shared_cache:
        store.cache = RedisCache(client, keys)
    return store
