"""The REST server: ``create_app`` builds the FastAPI application over one data directory.

Every route under ``/v1`` (and ``/metrics``) needs ``Authorization: Bearer <key>``; the key
names the tenant, and the tenant's own store answers (``tenants.py``). Handlers are plain
functions: FastAPI runs them in its thread pool, so a slow search never blocks the loop.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from madeleine import __version__
from madeleine.api import Memory
from madeleine.config import Settings
from madeleine.embed.base import Embedder
from madeleine.embed.factory import load_embedder
from madeleine.records import AddResult, Context
from madeleine.server import errors
from madeleine.server.admin_routes import admin_router
from madeleine.server.dashboard_mount import mount_dashboard
from madeleine.server.deps import (
    AdminTenant,
    ExportTenant,
    FairTenant,
    Granted,
    ReadTenant,
    UserId,
    WriteTenant,
    public_stats,
)
from madeleine.server.errors import ApiError
from madeleine.server.fairness import FairScheduler
from madeleine.server.grants import Grant
from madeleine.server.inspect_routes import inspect_router
from madeleine.server.kb_routes import kb_router, principal_of
from madeleine.server.keys import CachedGrants, KeyRing, digest, key_ring
from madeleine.server.lifecycle_routes import lifecycle_router
from madeleine.server.limits import BodyLimit, JsonBodies, RateLimiter
from madeleine.server.metrics import Metrics, MetricsMiddleware
from madeleine.server.schemas import (
    AddBody,
    AppendBody,
    ContextBody,
    EventBody,
    RestoreBody,
    SearchBody,
    TransitionBody,
    UserBody,
    WaitBody,
)
from madeleine.server.tenants import DEFAULT_IDLE_SECONDS, DEFAULT_MAX_OPEN, Tenants
from madeleine.shortterm.agent import AgentState, ConcurrentUpdateError
from madeleine.store.backends import is_url
from madeleine.store.private import private_directory

log = logging.getLogger("madeleine.server")

POSTGRES_CONNECTIONS = 96  # what a server's tenant pools may hold together by default


class ServerSettings(BaseSettings):
    """``MADELEINE_DATA``, ``MADELEINE_API_KEYS`` (JSON ``{"key": "tenant"}``),
    ``MADELEINE_MAX_BODY_BYTES``, ``MADELEINE_RATE_LIMIT`` (requests/s per key, 0: off),
    ``MADELEINE_RATE_BURST``, ``MADELEINE_AGENT_TIMEOUTS`` (JSON ``{"waiting_input": 3600}``),
    ``MADELEINE_SEARCH_SLOTS`` / ``_TENANT_SLOTS`` / ``_SEARCH_QUEUE`` / ``_SEARCH_TIMEOUT``
    / ``_SEARCH_MAX_PAUSE`` (fair search admission, ``server/fairness.py``),
    ``MADELEINE_MAX_OPEN_TENANTS``, ``MADELEINE_TENANT_IDLE_SECONDS`` (bounded memory)."""

    model_config = SettingsConfigDict(env_prefix="MADELEINE_", extra="ignore", allow_inf_nan=False)

    data: Path = Path("./memory-data")
    api_keys: dict[str, str] = {}
    max_body_bytes: int = 10 * 1024 * 1024
    rate_limit: float = 50.0
    rate_burst: int | None = None  # default: twice the rate
    search_slots: int | None = None  # searches running at once; default: the core count
    tenant_slots: int | None = None  # one tenant's, while another is active; default: all but 1
    search_queue: int = 64  # searches one key may have waiting
    search_timeout: float = 30.0  # seconds a search may wait for its turn
    # seconds a costly search may step aside for other tenants' cheap ones (0: never)
    search_max_pause: float = Field(default=0.5, ge=0, le=60, allow_inf_nan=False)
    agent_timeouts: dict[str, float] = {}  # seconds per agent state, for every agent
    # bounded memory: tenant stores open at once (idle ones beyond it close, least recently
    # used first) and how long an unused one stays open (server/tenants.py)
    # None: 64 embedded; on PostgreSQL as many as keep every pool within ~96 connections
    # (each open tenant store has a pool of up to store.pool_size connections)
    max_open_tenants: int | None = Field(default=None, ge=1)
    tenant_idle_seconds: float = Field(default=DEFAULT_IDLE_SECONDS, gt=0, allow_inf_nan=False)

    def open_tenant_bound(self, settings: Settings) -> int:
        """How many tenant stores stay open: as set, else 64 embedded, and on PostgreSQL as
        many as fit 96 connections (PostgreSQL's default limit is 100) at
        ``store.pool_size`` connections each, at least 4."""
        if self.max_open_tenants is not None:
            return self.max_open_tenants
        if is_url(settings.store.url):  # a server's store: each holds a connection pool
            return max(4, POSTGRES_CONNECTIONS // settings.store.pool_size)
        return DEFAULT_MAX_OPEN

    def search_scheduler(self) -> FairScheduler:
        return FairScheduler(
            self.search_slots,
            self.tenant_slots,
            self.search_queue,
            self.search_timeout,
            self.search_max_pause,
        )


class _Auth:
    """The request's key → its grant (401 without a valid key, 429 over the rate limit)."""

    def __init__(self, ring: KeyRing, limiter: RateLimiter) -> None:
        self._grants = CachedGrants(ring)
        self._limiter = limiter

    def grant(self, request: Request) -> Grant:
        scheme, _, key = request.headers.get("authorization", "").partition(" ")
        key = key.strip()
        if scheme.lower() != "bearer" or not key:
            raise ApiError(
                401,
                "unauthorized",
                "an API key is required: send 'Authorization: Bearer <key>'",
                {"WWW-Authenticate": "Bearer"},
            )
        grant = self._grants.grant(key)
        if grant is None:
            raise ApiError(
                401, "unauthorized", "unknown or revoked API key", {"WWW-Authenticate": "Bearer"}
            )
        wait = self._limiter.retry_after(digest(key))
        if wait > 0:
            raise ApiError(
                429,
                "rate_limited",
                f"too many requests for this key; retry in {wait:.2f} s",
                {"Retry-After": str(max(1, round(wait)))},
            )
        return grant

    def forget_cached_keys(self) -> None:
        """Look every key up again now (a revoked key otherwise works for a few seconds)."""
        self._grants.forget()


def context_json(context: Context) -> dict[str, Any]:
    return {
        "text": context.text,
        "tokens": context.tokens,
        "budget_tokens": context.budget_tokens,
        "items": [h.to_dict() for h in context.items],
        "window": [h.to_dict() for h in context.window],
        "kb_items": [h.to_dict() for h in context.kb_items],
        "clarify": [c.to_dict() for c in context.clarify],
    }


def _added(result: AddResult, memory: Memory, wait: bool, timeout: float) -> dict[str, Any]:
    body: dict[str, Any] = {"added": result.added, "duplicates": result.duplicates}
    if wait:
        body["searchable"] = memory.wait(timeout)
    return body


def create_app(
    server: ServerSettings | None = None,
    *,
    settings: Settings | None = None,
    embedder: Embedder | None = None,
) -> FastAPI:
    """The application over ``server.data``. ``settings`` configure every tenant's store
    (default: from the environment); ``embedder`` is shared by all tenants (default: the
    configured one, loaded once)."""
    server = server or ServerSettings()
    settings = settings or Settings.from_env(dict(os.environ))
    data = private_directory(server.data)  # owner-only: it holds every tenant's data and keys.db
    tenants = Tenants(
        data,
        settings,
        embedder or load_embedder(settings.embed.model),
        max_open=server.open_tenant_bound(settings),
        idle_seconds=server.tenant_idle_seconds,
    )
    ring = key_ring(data, server.api_keys)
    if ring.empty:
        log.warning(
            "no API keys: every request will get 401. Create one with `madeleine keys create "
            "--tenant <name> --data %s` or set MADELEINE_API_KEYS",
            data,
        )
    auth = _Auth(ring, RateLimiter(server.rate_limit, server.rate_burst))
    metrics = Metrics(tenants.opened)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        tenants.close()

    app = FastAPI(
        title="Madeleine",
        version=__version__,
        description="Long-term memory for AI agents: add messages, search, context.",
        lifespan=lifespan,
    )
    app.state.tenants = tenants
    app.state.auth = auth
    app.state.keys = ring
    app.state.fair = server.search_scheduler()
    errors.install(app)
    # innermost: a middleware that copies the scope (JsonBodies does) would hide the matched
    # route from the metrics, which then labelled every POST "unmatched"
    app.add_middleware(MetricsMiddleware, metrics=metrics)
    app.add_middleware(JsonBodies)
    app.add_middleware(BodyLimit, max_bytes=server.max_body_bytes)

    app.include_router(kb_router())
    app.include_router(lifecycle_router())
    app.include_router(inspect_router())
    app.include_router(admin_router(metrics))

    @app.get("/health", tags=["operations"])
    def health() -> dict[str, Any]:
        return {"status": "ok", "version": __version__}

    @app.post("/v1/memories", tags=["write"])
    def add(body: AddBody, memory: WriteTenant) -> dict[str, Any]:
        result = memory.add(
            body.messages,
            user_id=body.user_id,
            session_id=body.session_id,
            timestamp=body.timestamp,
        )
        return _added(result, memory, body.wait, body.wait_timeout)

    @app.post("/v1/events", tags=["write"])
    def add_event(body: EventBody, memory: WriteTenant) -> dict[str, Any]:
        result = memory.add_event(
            user_id=body.user_id,
            type=body.type,
            data=body.data,
            timestamp=body.timestamp,
            session_id=body.session_id,
            id=body.id,
        )
        return _added(result, memory, body.wait, body.wait_timeout)

    @app.post("/v1/wait", tags=["write"])
    def wait(body: WaitBody, memory: ReadTenant) -> dict[str, Any]:
        return {"done": memory.wait(body.timeout)}

    @app.post("/v1/search", tags=["read"])
    def search(body: SearchBody, memory: FairTenant) -> dict[str, Any]:
        hits = memory.search(
            body.query,
            user_id=body.user_id,
            limit=body.limit,
            channels=body.channels,
            time_range=body.time_range,
            stages=body.stages,
            now=body.now,
            as_of=body.as_of,
            include_history=body.include_history,
            include_archived=body.include_archived,
        )
        return {"hits": [h.to_dict() for h in hits]}

    @app.post("/v1/context", tags=["read"])
    def context(body: ContextBody, memory: FairTenant, grant: Granted) -> dict[str, Any]:
        found = memory.context(
            body.query,
            user_id=body.user_id,
            budget_tokens=body.budget_tokens,
            limit=body.limit,
            channels=body.channels,
            time_range=body.time_range,
            stages=body.stages,
            now=body.now,
            window=body.window,
            as_of=body.as_of,
            include_history=body.include_history,
            principal=principal_of(body.principal),
            collections=grant.narrow(body.collections),
            kb=body.kb,
        )
        return context_json(found)

    @app.get("/v1/facts", tags=["read"])
    def facts(
        user_id: UserId,
        memory: ReadTenant,
        as_of: str | None = None,
        include_history: bool = False,
        category: str | None = None,
        include_archived: bool = False,
        include_digests: bool = False,
    ) -> dict[str, Any]:
        cards = memory.facts(
            user_id,
            as_of=as_of,
            include_history=include_history,
            category=category,
            include_archived=include_archived,
            include_digests=include_digests,
        )
        return {"facts": [c.model_dump(mode="json") for c in cards]}

    @app.get("/v1/facts/{fact_id}/history", tags=["read"])
    def history(fact_id: str, user_id: UserId, memory: ReadTenant) -> dict[str, Any]:
        versions = memory.history(fact_id, user_id=user_id)
        if not versions:  # a fact has at least one version: none means no such fact
            raise ApiError(404, "not_found", f"user {user_id!r} has no fact {fact_id!r}")
        return {"history": [c.model_dump(mode="json") for c in versions]}

    @app.get("/v1/profile", tags=["read"])
    def profile(
        user_id: UserId, memory: ReadTenant, include_digests: bool = False
    ) -> dict[str, Any]:
        grouped = memory.profile(user_id, include_digests=include_digests)
        return {
            "profile": {
                topic: {
                    sub: [c.model_dump(mode="json") for c in cards] for sub, cards in subs.items()
                }
                for topic, subs in grouped.items()
            }
        }

    @app.get("/v1/alerts", tags=["read"])
    def alerts(user_id: UserId, memory: ReadTenant) -> dict[str, Any]:
        return {"alerts": memory.alerts(user_id)}

    @app.get("/v1/routing-log", tags=["read"])
    def routing_log(user_id: UserId, memory: ReadTenant, limit: int = 100) -> dict[str, Any]:
        return {"decisions": memory.routing_log(user_id, limit)}

    @app.get("/v1/graph", tags=["read"])
    def graph(
        user_id: UserId,
        memory: ReadTenant,
        around: str | None = None,
        depth: int = 2,
        limit: int = 200,
    ) -> dict[str, Any]:
        return memory.graph(user_id, around=around, depth=depth, limit=limit)

    @app.delete("/v1/memories/{memory_id}", tags=["delete"])
    def delete(memory_id: str, user_id: UserId, memory: WriteTenant) -> dict[str, Any]:
        if not memory.delete(memory_id, user_id=user_id):
            raise ApiError(404, "not_found", f"user {user_id!r} has no memory {memory_id!r}")
        return {"deleted": memory_id}

    @app.delete("/v1/messages/{message_id}", tags=["delete"])
    def delete_message(message_id: str, user_id: UserId, memory: WriteTenant) -> dict[str, Any]:
        if not memory.delete_message(message_id, user_id=user_id):
            raise ApiError(404, "not_found", f"user {user_id!r} has no message {message_id!r}")
        return {"deleted": message_id}

    @app.post("/v1/forget", tags=["delete"])
    def forget_user(body: UserBody, memory: WriteTenant) -> dict[str, Any]:
        return {"removed": memory.forget_user(body.user_id)}

    @app.get("/v1/export", tags=["read"])
    def export_user(user_id: UserId, memory: ExportTenant) -> dict[str, Any]:
        return memory.export_user(user_id)

    @app.get("/v1/stats", tags=["operations"])
    def stats(memory: AdminTenant) -> dict[str, Any]:
        return public_stats(memory)

    # -- short-term memory: conversation buffers and agent states --------------------------

    @app.post("/v1/sessions/{session_id}/messages", tags=["sessions"])
    def append(session_id: str, body: AppendBody, memory: WriteTenant) -> dict[str, Any]:
        session = memory.session(session_id, user_id=body.user_id, ttl_seconds=body.ttl_seconds)
        return {"position": session.append(body.message, pinned=body.pinned)}

    @app.get("/v1/sessions/{session_id}/messages", tags=["sessions"])
    def session_messages(session_id: str, user_id: UserId, memory: ReadTenant) -> dict[str, Any]:
        return {"messages": memory.session(session_id, user_id=user_id).messages()}

    @app.get("/v1/sessions/{session_id}/window", tags=["sessions"])
    def session_window(
        session_id: str, user_id: UserId, memory: ReadTenant, budget_tokens: int = 2000
    ) -> dict[str, Any]:
        return memory.session(session_id, user_id=user_id).window(budget_tokens).to_dict()

    @app.delete("/v1/sessions/{session_id}", tags=["sessions"])
    def clear_session(session_id: str, user_id: UserId, memory: WriteTenant) -> dict[str, Any]:
        return {"removed": memory.session(session_id, user_id=user_id).clear()}

    @app.get("/v1/sessions", tags=["sessions"])
    def sessions(user_id: UserId, memory: ReadTenant) -> dict[str, Any]:
        return {"sessions": memory.sessions(user_id)}

    def agent(memory: Memory, agent_id: str, user_id: str) -> AgentState:
        return memory.agent(agent_id, user_id=user_id, timeouts=server.agent_timeouts or None)

    @app.get("/v1/agents/{agent_id}", tags=["agents"])
    def agent_state(agent_id: str, user_id: UserId, memory: ReadTenant) -> dict[str, Any]:
        return agent(memory, agent_id, user_id).current().to_dict()

    @app.post("/v1/agents/{agent_id}/transition", tags=["agents"])
    def transition(agent_id: str, body: TransitionBody, memory: WriteTenant) -> dict[str, Any]:
        machine = agent(memory, agent_id, body.user_id)
        try:
            moved = machine.transition(
                body.to, reason=body.reason, data=body.data, expected_version=body.expected_version
            )
        except ConcurrentUpdateError as exc:
            raise ApiError(409, "conflict", str(exc)) from exc
        return moved.to_dict()

    @app.get("/v1/agents/{agent_id}/history", tags=["agents"])
    def agent_history(
        agent_id: str, user_id: UserId, memory: ReadTenant, limit: int = 100
    ) -> dict[str, Any]:
        if not 1 <= limit <= 10_000:
            raise ApiError(400, "bad_request", f"limit must be from 1 to 10000, got {limit}")
        return {"history": agent(memory, agent_id, user_id).history(limit)}

    @app.get("/v1/agents/{agent_id}/snapshot", tags=["agents"])
    def agent_snapshot(agent_id: str, user_id: UserId, memory: ReadTenant) -> dict[str, Any]:
        return agent(memory, agent_id, user_id).snapshot()

    @app.post("/v1/agents/{agent_id}/restore", tags=["agents"])
    def agent_restore(agent_id: str, body: RestoreBody, memory: WriteTenant) -> dict[str, Any]:
        return agent(memory, agent_id, body.user_id).restore(body.snapshot).to_dict()

    mount_dashboard(app)  # last: API routes match before the bundle's catch-all mount
    return app


def app_from_env() -> FastAPI:
    """The factory ``madeleine serve --workers N`` gives uvicorn: each worker process builds
    its app from the environment the command set."""
    return create_app(ServerSettings())
