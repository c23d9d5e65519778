"""Lifecycle routes: archive and restore, pins and importance, maintenance and its undo,
the lifecycle log and timelines. Each calls the ``Memory`` method of the same name."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from fastapi import APIRouter

from madeleine.server.deps import ReadTenant, UserId, WriteTenant
from madeleine.server.schemas import ArchiveBody, ImportanceBody, MaintainBody, UndoBody, UserBody
from madeleine.store.records import LifecycleEntry


def _entry(entry: LifecycleEntry) -> dict[str, Any]:
    return asdict(entry)


def lifecycle_router() -> APIRouter:
    router = APIRouter(tags=["lifecycle"])

    @router.post("/v1/memories/{item_id}/archive")
    def archive(item_id: str, body: ArchiveBody, memory: WriteTenant) -> dict[str, Any]:
        changed = memory.archive(item_id, user_id=body.user_id, reason=body.reason)
        return {"id": item_id, "changed": changed}

    @router.post("/v1/memories/{item_id}/restore")
    def restore(item_id: str, body: UserBody, memory: WriteTenant) -> dict[str, Any]:
        return {"id": item_id, "changed": memory.restore(item_id, user_id=body.user_id)}

    @router.post("/v1/memories/{item_id}/pin")
    def pin(item_id: str, body: UserBody, memory: WriteTenant) -> dict[str, Any]:
        return {"id": item_id, "changed": memory.pin(item_id, user_id=body.user_id)}

    @router.post("/v1/memories/{item_id}/unpin")
    def unpin(item_id: str, body: UserBody, memory: WriteTenant) -> dict[str, Any]:
        return {"id": item_id, "changed": memory.unpin(item_id, user_id=body.user_id)}

    @router.put("/v1/memories/{item_id}/importance")
    def importance(item_id: str, body: ImportanceBody, memory: WriteTenant) -> dict[str, Any]:
        changed = memory.set_importance(item_id, body.importance, user_id=body.user_id)
        return {"id": item_id, "changed": changed}

    @router.get("/v1/memories/{item_id}/lifecycle")
    def lifecycle(item_id: str, user_id: UserId, memory: ReadTenant) -> dict[str, Any]:
        return memory.lifecycle(item_id, user_id=user_id).to_dict()

    @router.post("/v1/maintain")
    def maintain(body: MaintainBody, memory: WriteTenant) -> dict[str, Any]:
        users = None if body.user_id is None else [body.user_id]
        return {"reports": [r.to_dict() for r in memory.maintain(users, now=body.now)]}

    @router.post("/v1/undo")
    def undo(body: UndoBody, memory: WriteTenant) -> dict[str, Any]:
        return {"undone": [_entry(e) for e in memory.undo(body.run, user_id=body.user_id)]}

    @router.get("/v1/lifecycle-log")
    def lifecycle_log(
        user_id: UserId, memory: ReadTenant, run: str | None = None, limit: int = 100
    ) -> dict[str, Any]:
        entries = memory.lifecycle_log(user_id, run=run, limit=limit)
        return {"entries": [_entry(e) for e in entries]}

    @router.get("/v1/timeline")
    def timeline(
        user_id: UserId,
        memory: ReadTenant,
        query: str | None = None,
        start: str | None = None,
        end: str | None = None,
        include_archived: bool = False,
        limit: int = 1000,
    ) -> dict[str, Any]:
        found = memory.timeline(
            user_id,
            query,
            start=start,
            end=end,
            include_archived=include_archived,
            limit=limit,
        )
        return found.to_dict()

    return router
