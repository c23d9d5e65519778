"""Request body size and request rate limits."""

from __future__ import annotations

import json
import threading
import time

from cachetools import LRUCache
from starlette.types import ASGIApp, Message, Receive, Scope, Send


class BodyLimit:
    """ASGI middleware: a body over ``max_bytes`` is refused with 413, whether its
    Content-Length says so up front or it streams (chunked) past the limit. A streamed body
    is cut where it crosses the limit: the client gets the 413 at once, and the app sees a
    disconnect, so nothing of the request is processed and nothing of its own reply is sent."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or ()).get(b"content-length")
        if declared is not None:
            try:
                too_large = int(declared) > self.max_bytes
            except ValueError:
                too_large = False
            if too_large:
                await self._refuse(send)
                return
        seen = 0
        started = False
        refused = False

        async def counted() -> Message:
            nonlocal seen, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    refused = True
                    if not started:
                        await self._refuse(send)
                    return {"type": "http.disconnect"}
            return message

        async def tracked(message: Message) -> None:
            nonlocal started
            if refused:
                return  # the 413 is the answer; the app's reply to a cut body is dropped
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counted, tracked)
        except Exception:
            if not refused:
                raise
            # the app's complaint about the cut body (a disconnect): already answered with 413

    async def _refuse(self, send: Send) -> None:
        body = json.dumps(
            {
                "error": {
                    "code": "too_large",
                    "message": f"the request body is larger than {self.max_bytes} bytes",
                }
            }
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


class RateLimiter:
    """A token bucket per API key: ``rate`` requests a second on average, bursts of
    ``burst``. ``rate`` 0 turns it off."""

    def __init__(self, rate: float, burst: int | None = None) -> None:
        self.rate = rate
        self.burst = float(burst if burst is not None else max(1, int(rate * 2)))
        self._buckets: LRUCache[str, list[float]] = LRUCache(maxsize=100_000)
        self._lock = threading.Lock()

    def retry_after(self, key: str) -> float:
        """0 when the request may go on; else the seconds until it may."""
        if self.rate <= 0:
            return 0.0
        now = time.monotonic()
        with self._lock:
            bucket = self._buckets.get(key)
            if bucket is None:
                bucket = [self.burst, now]
                self._buckets[key] = bucket
            tokens = min(self.burst, bucket[0] + (now - bucket[1]) * self.rate)
            bucket[1] = now
            if tokens >= 1.0:
                bucket[0] = tokens - 1.0
                return 0.0
            bucket[0] = tokens
            return (1.0 - tokens) / self.rate


class JsonBodies:
    """ASGI middleware: every body sent to the API is read as JSON, whatever Content-Type the
    client set (``curl -d`` sends form encoding), so a body that is not JSON gets a clear
    400 rather than a puzzling "not a dictionary"."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("method") in ("POST", "PUT", "PATCH"):
            headers = [(k, v) for k, v in scope.get("headers") or () if k != b"content-type"]
            scope = {**scope, "headers": [*headers, (b"content-type", b"application/json")]}
        await self.app(scope, receive, send)
