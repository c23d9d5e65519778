"""A second level for the read path's per-user caches, shared by every API process through
Redis: a replica that never served a user reads its fact vectors and row metadata in one
round trip instead of rebuilding them from PostgreSQL.

An entry is found by the user's *epoch* and tagged with the version (generation) it was
built from. ``forget`` bumps the epoch after the store's erasure committed, so nothing built
before the erasure is ever served again — even though the store's generation counters
restart from zero for a user recreated under the same id. Failures of Redis only cost the
cache: the caller rebuilds from the store."""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger(__name__)

_LOOKUP = """
local epoch = redis.call('GET', KEYS[1]) or '0'
local value = redis.call('GET', ARGV[1] .. epoch)
if not value then return {epoch} end
return {epoch, value}
"""
_SEPARATOR = b"\n"
_MAX_BYTES = 64 * 1024 * 1024  # a single value of Redis is limited to 512 MB; stay far below


class RedisCache:
    def __init__(self, client: Any, prefix: str, ttl_seconds: int = 3600) -> None:
        self._client = client
        self._prefix = prefix
        self._ttl = ttl_seconds
        self._lookup = client.register_script(_LOOKUP)

    def _keys(self, kind: str, user_id: str) -> tuple[str, str]:
        user = f"{len(user_id)}:{user_id}"
        return f"{self._prefix}epoch:{user}", f"{self._prefix}cache:{kind}:{user}:"

    def get(self, kind: str, user_id: str, version: str) -> tuple[str, bytes | None]:
        """(the user's epoch, the payload cached for ``version`` in it, or None). Read the
        epoch before loading from the store, and give it back to ``put``."""
        epoch_key, data_prefix = self._keys(kind, user_id)
        try:
            found = self._lookup(keys=[epoch_key], args=[data_prefix])
        except Exception as exc:
            log.debug("the shared cache is unavailable (%s)", exc)
            return "", None
        epoch = found[0].decode() if isinstance(found[0], bytes) else str(found[0])
        value = found[1] if len(found) > 1 else None
        if value is None:
            return epoch, None
        tag, _, payload = bytes(value).partition(_SEPARATOR)
        return epoch, payload if tag.decode() == version else None

    def put(self, kind: str, user_id: str, epoch: str, version: str, payload: bytes) -> None:
        if not epoch or len(payload) > _MAX_BYTES:
            return
        _, data_prefix = self._keys(kind, user_id)
        try:
            self._client.set(
                data_prefix + epoch, version.encode() + _SEPARATOR + payload, ex=self._ttl
            )
        except Exception as exc:
            log.debug("could not fill the shared cache (%s)", exc)

    def forget(self, user_id: str, kinds: tuple[str, ...] = ("facts", "rows")) -> None:
        """After an erasure committed: nothing cached before it is served again."""
        epoch_key, _ = self._keys("", user_id)
        epoch = int(self._client.incr(epoch_key))
        self._client.delete(*(self._keys(kind, user_id)[1] + str(epoch - 1) for kind in kinds))
