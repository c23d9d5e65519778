"""Prometheus metrics of one server process, in a registry of its own (no global state)."""

from __future__ import annotations

import time
from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from starlette.types import ASGIApp, Message, Receive, Scope, Send


class Metrics:
    def __init__(self, open_tenants: Callable[[], int]) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "madeleine_requests",
            "HTTP requests by route and status",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "madeleine_request_seconds",
            "HTTP request latency by route",
            ["method", "route"],
            registry=self.registry,
            buckets=(0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
        )
        tenants = Gauge(
            "madeleine_open_tenants", "tenant stores open in this process", registry=self.registry
        )
        tenants.set_function(lambda: float(open_tenants()))

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


class MetricsMiddleware:
    """Counts and times every request under its route template ("/v1/facts/{fact_id}/history"),
    so ids never become label values."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500
        started = time.perf_counter()

        async def tracked(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        finally:
            route = scope.get("route")
            template = getattr(route, "path", None) or "unmatched"
            method = scope.get("method", "")
            self.metrics.requests.labels(method, template, str(status)).inc()
            self.metrics.latency.labels(method, template).observe(time.perf_counter() - started)
