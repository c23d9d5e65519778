"""Redis for what is short-lived and shared between processes: conversation buffers with a
time to live, agent states, and the notifications that wake workers when jobs are queued.
The durable store (SQLite or PostgreSQL) keeps everything else; without Redis it keeps these
too."""

from __future__ import annotations

import hashlib
from typing import Any


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
