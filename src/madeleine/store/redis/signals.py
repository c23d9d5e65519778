"""Job notifications over Redis pub/sub: an API process that queued jobs wakes every worker
at once instead of each polling the outbox. Best effort by design: the outbox in the store is
the queue; a lost notification only delays a job until the next poll."""

from __future__ import annotations

import logging
import time
from typing import Any

log = logging.getLogger(__name__)


class RedisJobSignal:
    def __init__(self, client: Any, channel: str) -> None:
        self._client = client
        self._channel = channel
        self._pubsub: Any = None

    def notify(self) -> None:
        try:
            self._client.publish(self._channel, b"1")
        except Exception as exc:  # the outbox holds the job; the workers' poll finds it
            log.warning("could not notify the workers over Redis (%s); they will poll", exc)

    def wait(self, timeout: float) -> bool:
        """Block until a notification arrives (True) or ``timeout`` seconds pass (False)."""
        try:
            if self._pubsub is None:
                self._subscribe()
            woken = self._next(timeout)
            while woken and self._next(0):
                pass  # a burst of notifications is one wake-up
            return woken
        except Exception as exc:
            log.warning("Redis notifications unavailable (%s); polling", exc)
            self._pubsub = None
            return False

    def _subscribe(self) -> None:
        """Subscribe and wait for Redis to confirm: a notification published before the
        confirmation would be lost."""
        self._pubsub = self._client.pubsub()
        self._pubsub.subscribe(self._channel)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            message = self._pubsub.get_message(timeout=1.0)
            if message is not None and message["type"] == "subscribe":
                return
        raise TimeoutError("Redis did not confirm the subscription")

    def _next(self, timeout: float) -> bool:
        """True when a notification arrived within ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            message = self._pubsub.get_message(timeout=max(0.0, deadline - time.monotonic()))
            if message is not None and message["type"] == "message":
                return True
            if time.monotonic() >= deadline:
                return False

    def close(self) -> None:
        if self._pubsub is not None:
            try:
                self._pubsub.close()
            except Exception:  # closing a broken connection
                log.debug("closing the Redis subscription failed", exc_info=True)
            self._pubsub = None
