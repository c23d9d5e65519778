"""A small thread-safe least-recently-used map: the per-user caches of the read path."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypeVar

V = TypeVar("V")


class UserLRU(Generic[V]):
    """At most ``size`` users' entries; reading one makes it the most recent."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._entries: OrderedDict[str, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, user_id: str) -> V | None:
        with self._lock:
            value = self._entries.get(user_id)
            if value is not None:
                self._entries.move_to_end(user_id)
            return value

    def put(self, user_id: str, value: V) -> None:
        with self._lock:
            self._entries[user_id] = value
            self._entries.move_to_end(user_id)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
