"""Routes for looking inside a tenant's memory and correcting it (what the dashboard uses):
its users, a card's sources and edits, the graph's entities, and the store's status. Each
calls the ``Memory`` method of the same name."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from madeleine import __version__
from madeleine.server.deps import (
    AdminTenant,
    Granted,
    ReadTenant,
    UserId,
    WriteTenant,
    public_stats,
)
from madeleine.server.schemas import FactEditBody


def inspect_router() -> APIRouter:
    router = APIRouter()

    @router.get("/v1/users", tags=["read"])
    def users(
        memory: AdminTenant, grant: Granted, limit: int = 100, offset: int = 0, prefix: str = ""
    ) -> dict[str, Any]:
        grant.require_user(None)  # a key limited to some users may not list every user
        return {"users": memory.users(limit=limit, offset=offset, prefix=prefix)}

    @router.put("/v1/facts/{fact_id}", tags=["write"])
    def edit_fact(fact_id: str, body: FactEditBody, memory: WriteTenant) -> dict[str, Any]:
        card = memory.edit_fact(fact_id, body.statement, user_id=body.user_id, reason=body.reason)
        return {"fact": card.model_dump(mode="json"), "replaced": fact_id}

    @router.get("/v1/facts/{fact_id}/sources", tags=["read"])
    def sources(fact_id: str, user_id: UserId, memory: ReadTenant) -> dict[str, Any]:
        return {"sources": memory.sources(fact_id, user_id=user_id)}

    @router.get("/v1/entities", tags=["read"])
    def entities(user_id: UserId, memory: ReadTenant, limit: int = 50) -> dict[str, Any]:
        return {"entities": memory.graph_entities(user_id, limit=limit)}

    @router.get("/v1/status", tags=["operations"])
    def status(memory: AdminTenant) -> dict[str, Any]:
        """The store at a glance: backend, queue, index consistency and counts."""
        stats = public_stats(memory)
        integrity = memory.integrity()
        return {
            "version": __version__,
            "backend": "postgresql" if isinstance(memory.path, str) else "sqlite",
            "pending_jobs": stats.get("pending_jobs", 0),
            "failed_jobs": stats.get("failed_jobs", 0),
            "integrity": {**integrity, "consistent": _consistent(integrity)},
            "stats": stats,
        }

    return router


def _consistent(integrity: dict[str, int]) -> bool:
    """Every episode has its vector and lexical row, and nothing points at a missing one."""
    episodes = integrity.get("episodes")
    same = all(integrity.get(k, episodes) == episodes for k in ("vectors", "fts"))
    return (
        same
        and not integrity.get("orphan_episodes")
        and not integrity.get("events_without_episode")
    )
