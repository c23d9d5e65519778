"""What every route module needs from a request: the API key's tenant store, and the query
parameter naming a user. One definition, so every router resolves tenants the same way."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import Depends, Query, Request

from madeleine.api import Memory
from madeleine.server.errors import ApiError
from madeleine.server.fairness import Busy, FairScheduler
from madeleine.server.keys import digest


def tenant_memory(request: Request) -> Memory:
    """The API key's tenant store, resolved by the app's authenticator (401/429 raised
    there)."""
    memory: Memory = request.app.state.auth.memory(request)
    return memory


Tenant = Annotated[Memory, Depends(tenant_memory)]


async def fair_tenant_memory(request: Request, memory: Tenant) -> AsyncIterator[Memory]:
    """The tenant store, once the search slot of this request's turn is free
    (``server/fairness.py``); the slot is held until the handler returns. Waiting happens
    on the event loop: a queued request holds no worker thread."""
    scheduler: FairScheduler = request.app.state.fair
    key = request.headers.get("authorization", "").partition(" ")[2].strip()
    try:  # the tenant's store object stands for the tenant: one per tenant
        ticket = await scheduler.acquire(id(memory), digest(key))
    except Busy as exc:
        headers = {"Retry-After": str(max(1, round(exc.retry_after)))}
        code = "rate_limited" if exc.status == 429 else "busy"
        raise ApiError(exc.status, code, exc.message, headers) from None
    try:
        yield memory
    finally:
        scheduler.release(ticket)


# search, context and KB search: the work that embeds a query, scheduled fairly
FairTenant = Annotated[Memory, Depends(fair_tenant_memory, scope="function")]
UserId = Annotated[str, Query(description="the user the memories belong to")]


def public_stats(memory: Memory) -> dict[str, Any]:
    """``Memory.stats`` without the server's file layout, which is not the client's business."""
    found = memory.stats()
    found.pop("path", None)
    return found
