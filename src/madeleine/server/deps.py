"""What every route module needs from a request: the API key's tenant store, and the query
parameter naming a user. One definition, so every router resolves tenants the same way."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any

from fastapi import Depends, Query, Request

from madeleine.api import Memory


def tenant_memory(request: Request) -> Iterator[Memory]:
    """The API key's tenant store, resolved by the app's authenticator (401/429 raised
    there), leased until the request is done: an idle store may be closed (``tenants.py``),
    never one a request is using."""
    tenant = request.app.state.auth.tenant(request)
    with request.app.state.tenants.lease(tenant) as memory:
        yield memory


Tenant = Annotated[Memory, Depends(tenant_memory)]
UserId = Annotated[str, Query(description="the user the memories belong to")]


def public_stats(memory: Memory) -> dict[str, Any]:
    """``Memory.stats`` without the server's file layout, which is not the client's business."""
    found = memory.stats()
    found.pop("path", None)
    return found
