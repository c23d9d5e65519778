"""What every route module needs from a request: the API key's grant, its tenant store
behind a scope check, and the query parameter naming a user. One definition, so every router
resolves tenants — and refuses what a key may not reach — the same way.

A route declares the scope it needs by its store parameter: ``ReadTenant``, ``WriteTenant``
(audited), ``ExportTenant`` (read, audited), ``AdminTenant``, or ``FairTenant`` (read, once
the request's fair search turn comes: ``server/fairness.py``). Each holds a lease on the
tenant's store for the request (``server/tenants.py``: an idle store may close, never one in
use). The check also refuses a
``user_id`` (query or body) or a KB ``collection`` (path) or ``collections`` (body) outside
the key's limits, with a 403 naming what is missing.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, Query, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException

from madeleine.api import Memory
from madeleine.errors import ItemNotFoundError
from madeleine.server.errors import ApiError
from madeleine.server.fairness import Busy, FairScheduler
from madeleine.server.grants import Grant, Scope, ScopeError
from madeleine.store.audit_rows import AuditEntry, pseudonym

log = logging.getLogger("madeleine.server")

# Routes that erase a user: their own audit entry keeps only the user's pseudonym.
_ERASES = frozenset({"/v1/forget"})


def request_grant(request: Request) -> Grant:
    """The request's key, resolved by the app's authenticator (401/429 raised there); kept on
    ``request.state`` for the per-tenant metrics."""
    grant: Grant = request.app.state.auth.grant(request)
    request.state.grant = grant
    return grant


Granted = Annotated[Grant, Depends(request_grant)]


@dataclass(frozen=True, slots=True)
class Named:
    """The users and collections a request names (None: it names no user at all)."""

    user_ids: tuple[str | None, ...]
    collections: tuple[str, ...]


async def named_in_request(request: Request) -> Named:
    """``user_id`` from the query or the JSON body (and a KB principal's), ``collection`` from
    the path and ``collections`` from the body. A key present with null (``"user_id":
    null``) counts: it asks for every user."""
    users: list[str | None] = []
    collections: list[str] = []
    if "user_id" in request.query_params:
        users += request.query_params.getlist("user_id")
    path_collection = request.path_params.get("collection")
    if isinstance(path_collection, str):
        collections.append(path_collection)
    body = await _json_body(request)
    if isinstance(body, dict):
        if "user_id" in body:
            value = body["user_id"]
            users.append(value if isinstance(value, str) or value is None else str(value))
        principal = body.get("principal")  # a KB search asks as one of the key's users
        if isinstance(principal, dict) and principal.get("user_id") is not None:
            users.append(str(principal["user_id"]))
        named = body.get("collections")
        if isinstance(named, list):
            collections += [str(c) for c in named]
    return Named(tuple(users), tuple(collections))


async def _json_body(request: Request) -> Any:
    if request.method not in ("POST", "PUT", "PATCH"):
        return None
    if not await request.body():
        return None
    try:
        return await request.json()  # parsed once per request (Starlette keeps it)
    except (ValueError, RecursionError):  # FastAPI answers a malformed body itself
        return None


Names = Annotated[Named, Depends(named_in_request)]


def _check(grant: Grant, scope: Scope, named: Named) -> str:
    grant.require(scope)
    tenant = grant.require_tenant()
    for user_id in named.user_ids:
        grant.require_user(user_id)
    for collection in named.collections:
        grant.require_collection(collection)
    return tenant


def _scoped(scope: Scope, audited: bool) -> Callable[..., Iterator[Memory]]:
    def dependency(request: Request, grant: Granted, named: Names) -> Iterator[Memory]:
        if not audited:
            try:
                tenant = _check(grant, scope, named)
            except ScopeError as exc:
                raise ApiError(403, "forbidden", str(exc)) from exc
            # leased until the request is done: an idle store may be closed (tenants.py),
            # never one a request is using
            with request.app.state.tenants.lease(tenant) as memory:
                yield memory
            return
        yield from _audited(request, grant, scope, named)

    dependency.__name__ = f"{scope}_tenant{'_audited' if audited else ''}"
    return dependency


def _audited(request: Request, grant: Grant, scope: Scope, named: Named) -> Iterator[Memory]:
    """The store (leased for the request), then one audit entry in it once the route has
    answered (refusals too)."""
    try:
        tenant = _check(grant, scope, named)
    except ScopeError as exc:
        _audit_quietly(request, grant, named, 403)
        raise ApiError(403, "forbidden", str(exc)) from exc
    with request.app.state.tenants.lease(tenant) as memory:
        status = 200
        try:
            yield memory
        except BaseException as exc:
            status = status_of(exc)
            raise
        finally:
            _audit_quietly(request, grant, named, status, memory)


def _audit_quietly(
    request: Request, grant: Grant, named: Named, status: int, memory: Memory | None = None
) -> None:
    if grant.tenant is None:
        return
    try:
        audit(request, grant, named, status, memory)
    except Exception:  # the answer stands; the operator must hear of the gap
        log.exception("could not record the audit entry of %s", request.url.path)


def audit(
    request: Request,
    grant: Grant,
    named: Named,
    status: int,
    memory: Memory | None = None,
    tenant: str | None = None,
) -> None:
    """Record the request in the audit log of ``tenant`` (default: the key's), never its
    content: the route template and the ids in the path, not the body."""
    tenant = tenant or grant.require_tenant()
    route = getattr(request.scope.get("route"), "path", None) or request.url.path
    user_id = next((u for u in named.user_ids if u is not None), None)
    if user_id is not None and route in _ERASES:
        user_id = pseudonym(user_id)
    target = ",".join(f"{k}={v}" for k, v in sorted(request.path_params.items()))[:300]
    entry = AuditEntry(
        at=time.time(),
        key_id=grant.key_id,
        tenant=tenant,
        user_id=user_id,
        method=request.method,
        route=route,
        target=target,
        status=status,
    )
    if memory is not None:
        memory.record_audit(entry)
        return
    with request.app.state.tenants.lease(tenant) as leased:
        leased.record_audit(entry)


def status_of(exc: BaseException) -> int:
    """The status the error handlers (``errors.install``) answer for ``exc``."""
    if isinstance(exc, ApiError):
        return exc.status
    if isinstance(exc, HTTPException):
        return exc.status_code
    if isinstance(exc, RequestValidationError):
        return 422
    if isinstance(exc, ScopeError):
        return 403
    if isinstance(exc, ItemNotFoundError):
        return 404
    if isinstance(exc, ValueError | TypeError):
        return 400
    return 500


ReadTenant = Annotated[Memory, Depends(_scoped("read", audited=False))]
WriteTenant = Annotated[Memory, Depends(_scoped("write", audited=True))]
ExportTenant = Annotated[Memory, Depends(_scoped("read", audited=True))]
AdminTenant = Annotated[Memory, Depends(_scoped("admin", audited=False))]
UserId = Annotated[str, Query(description="the user the memories belong to")]


async def fair_tenant_memory(
    request: Request, memory: ReadTenant, grant: Granted
) -> AsyncIterator[Memory]:
    """The tenant store, once the search slot of this request's turn is free
    (``server/fairness.py``); the slot is held until the handler returns. Waiting happens
    on the event loop: a queued request holds no worker thread."""
    scheduler: FairScheduler = request.app.state.fair
    try:
        ticket = await scheduler.acquire(grant.require_tenant(), grant.key_id)
    except Busy as exc:
        headers = {"Retry-After": str(max(1, round(exc.retry_after)))}
        code = "rate_limited" if exc.status == 429 else "busy"
        raise ApiError(exc.status, code, exc.message, headers) from None
    try:
        yield memory
    finally:
        scheduler.release(ticket)


# search, context and KB search: the work that embeds a query, scheduled fairly (read scope)
FairTenant = Annotated[Memory, Depends(fair_tenant_memory, scope="function")]


def public_stats(memory: Memory) -> dict[str, Any]:
    """``Memory.stats`` without the server's file layout, which is not the client's business."""
    found = memory.stats()
    found.pop("path", None)
    return found
