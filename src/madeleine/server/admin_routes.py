"""Operator routes: who the key is, the metrics, a tenant's keys and its audit log.

A tenant key with the ``admin`` scope manages its own tenant's keys and reads its own
metrics and audit log; it can hand out no more than it holds (scopes it has, limits at
least as narrow as its own). A server operator key (``madeleine keys create --operator``)
reads the server-wide metrics and manages the keys and audit log of every tenant (naming it
with ``tenant``). Operator keys themselves are made only on the server's command line.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field, StrictStr

from madeleine.server.deps import Granted, Named, Names, audit, status_of
from madeleine.server.errors import ApiError
from madeleine.server.grants import Grant, ScopeError
from madeleine.server.keys import KeyRecord, KeyRing, require_tenant
from madeleine.server.metrics import Metrics
from madeleine.store.audit_rows import AuditQuery


class KeyBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tenant: StrictStr | None = Field(None, description="default: the calling key's tenant")
    scopes: list[Literal["read", "write", "admin"]] | None = Field(
        None, description="default: read and write"
    )
    collections: list[StrictStr] | None = Field(None, description="default: every collection")
    users: list[StrictStr] | None = Field(None, description="default: every end user")
    label: StrictStr = Field("", max_length=200)


def _admin(grant: Grant, tenant: str | None) -> str:
    """The tenant an admin request acts on: the key's own, or any named one for an
    operator key (403 otherwise)."""
    if grant.operator:
        if tenant is None:
            raise ScopeError("an operator key names the tenant: add tenant=<name>")
        return require_tenant(tenant)
    grant.require("admin")
    own = grant.require_tenant()
    if tenant is not None and tenant != own:
        raise ScopeError(f"this key may not reach tenant {tenant!r}")
    return own


def _within(grant: Grant, body: KeyBody) -> None:
    """A tenant admin hands out no more than it holds."""
    if grant.operator:
        return
    for scope in body.scopes or ("read", "write"):
        grant.require(scope)
    for field, mine, asked in (
        ("collections", grant.collections, body.collections),
        ("users", grant.users, body.users),
    ):
        if mine is None:
            continue
        if asked is None:
            raise ScopeError(f"this key is limited in {field}: the new key must be too")
        outside = sorted(set(asked) - mine)
        if outside:
            raise ScopeError(f"this key may not reach {field} {', '.join(map(repr, outside))}")


def admin_grant(request: Request, grant: Granted, named: Names) -> Grant:
    """An operator key, or a tenant key with the ``admin`` scope: checked before the body
    is read, so a key without the scope hears 403 whatever it sent (a refused key change is
    audited)."""
    if grant.operator:
        return grant
    try:
        grant.require("admin")
    except ScopeError as exc:
        if request.method != "GET" and grant.tenant is not None:
            audit(request, grant, named, 403)
        raise ApiError(403, "forbidden", str(exc)) from exc
    return grant


Admin = Annotated[Grant, Depends(admin_grant)]


def admin_router(metrics: Metrics) -> APIRouter:
    router = APIRouter()

    def ring(request: Request) -> KeyRing:
        found: KeyRing = request.app.state.keys
        return found

    def changed(request: Request, grant: Grant, named: Named, work: Any) -> dict[str, Any]:
        """Run a key change, ``work(tenant_box)``, and audit it, refused or not, in the log
        of the tenant it acts on (the one ``work`` puts in the box; else the key's own)."""
        status, box = 200, [grant.tenant]
        try:
            return dict(work(box))
        except BaseException as exc:
            status = status_of(exc)
            raise
        finally:
            if box[-1] is not None:
                audit(request, grant, named, status, tenant=box[-1])

    @router.get("/metrics", tags=["operations"])
    def prometheus(grant: Admin) -> Response:
        """A tenant's own series for its admin key; every series for an operator key."""
        tenant = None if grant.operator else grant.require_tenant()
        return Response(metrics.exposition(tenant), media_type="text/plain; version=0.0.4")

    @router.get("/v1/whoami", tags=["operations"])
    def whoami(grant: Granted) -> dict[str, Any]:
        """The calling key's tenant, scopes and limits (what the dashboard shows)."""
        return grant.to_dict()

    @router.get("/v1/keys", tags=["operations"])
    def keys(
        request: Request,
        grant: Admin,
        tenant: str | None = None,
        include_revoked: bool = False,
    ) -> dict[str, Any]:
        if grant.operator and tenant is None:
            found = ring(request).list(include_revoked)
        else:
            found = ring(request).list(include_revoked, tenant=_admin(grant, tenant))
        return {"keys": [r.to_dict() for r in found]}

    @router.post("/v1/keys", tags=["operations"])
    def create_key(request: Request, body: KeyBody, grant: Granted, named: Names) -> dict[str, Any]:
        def create(box: list[str | None]) -> dict[str, Any]:
            tenant = _admin(grant, body.tenant)
            box.append(tenant)
            _within(grant, body)
            record, key = ring(request).create(
                tenant,
                body.label,
                scopes=body.scopes or ("read", "write"),
                collections=body.collections,
                users=body.users,
            )
            return {"key": key, **record.to_dict()}

        return changed(request, grant, named, create)

    @router.delete("/v1/keys/{key_id}", tags=["operations"])
    def revoke_key(request: Request, key_id: int, grant: Granted, named: Names) -> dict[str, Any]:
        def revoke(box: list[str | None]) -> dict[str, Any]:
            if not grant.operator:
                grant.require("admin")
            record: KeyRecord | None = ring(request).get(key_id)
            mine = record is not None and (grant.operator or record.tenant == grant.tenant)
            if record is None or not mine or record.tenant is None or record.revoked_at:
                raise ApiError(404, "not_found", f"no active key {key_id} of this tenant")
            box.append(_admin(grant, record.tenant))
            ring(request).revoke(str(key_id))
            request.app.state.auth.forget_cached_keys()  # stops working now, here
            return {"revoked": key_id}

        return changed(request, grant, named, revoke)

    @router.get("/v1/audit", tags=["operations"])
    def audit_log(
        request: Request,
        grant: Admin,
        tenant: str | None = None,
        user_id: Annotated[str | None, Query()] = None,
        key_id: str | None = None,
        since: float | None = None,
        until: float | None = None,
        before_id: int | None = None,
        limit: int = 100,
    ) -> dict[str, Any]:
        """Who changed what and when in a tenant, newest first (never the content)."""
        owner = _admin(grant, tenant)
        grant.require_user(user_id)
        query = AuditQuery(user_id, key_id, since, until, before_id, limit)
        entries = request.app.state.tenants.memory(owner).audit_log(query)
        return {"entries": [e.to_dict() for e in entries]}

    return router
