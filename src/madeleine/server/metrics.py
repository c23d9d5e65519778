"""Prometheus metrics of one server process, in a registry of its own (no global state).

Requests are counted per tenant: a tenant's admin key reads its own tenant's series only;
the server-wide view (every tenant, unauthenticated requests, open stores) is for a server
operator key."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.metrics_core import Metric
from starlette.types import ASGIApp, Message, Receive, Scope, Send

NO_TENANT = "-"  # requests without a valid tenant key (401s, operator keys)


class Metrics:
    def __init__(self, open_tenants: Callable[[], int]) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "madeleine_requests",
            "HTTP requests by tenant, route and status",
            ["tenant", "method", "route", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "madeleine_request_seconds",
            "HTTP request latency by tenant and route",
            ["tenant", "method", "route"],
            registry=self.registry,
            buckets=(0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
        )
        tenants = Gauge(
            "madeleine_open_tenants", "tenant stores open in this process", registry=self.registry
        )
        tenants.set_function(lambda: float(open_tenants()))

    def exposition(self, tenant: str | None = None) -> bytes:
        """Every series (``tenant`` None: the operator's view), or one tenant's only."""
        if tenant is None:
            return generate_latest(self.registry)
        return generate_latest(_OneTenant(self.registry, tenant))


class _OneTenant:
    """A view of the registry with only the samples labelled ``tenant``."""

    def __init__(self, registry: CollectorRegistry, tenant: str) -> None:
        self._registry = registry
        self._tenant = tenant

    def collect(self) -> Iterator[Metric]:
        for family in self._registry.collect():
            samples = [s for s in family.samples if s.labels.get("tenant") == self._tenant]
            if samples:
                kept = Metric(family.name, family.documentation, family.type, family.unit)
                kept.samples = samples
                yield kept


class MetricsMiddleware:
    """Counts and times every request under its tenant and route template
    ("/v1/facts/{fact_id}/history"), so ids never become label values. It must sit right
    around the router: the route and the key's grant are read back from the scope."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500
        started = time.perf_counter()
        state = scope.setdefault("state", {})  # shared by copies of the scope made inside

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
            grant = state.get("grant")
            tenant = getattr(grant, "tenant", None) or NO_TENANT
            self.metrics.requests.labels(tenant, method, template, str(status)).inc()
            self.metrics.latency.labels(tenant, method, template).observe(
                time.perf_counter() - started
            )
