"""``AsyncMemory``: the asyncio twin of ``Memory``, method for method.

Each call runs the synchronous method in a worker thread (``asyncio.to_thread``), so the
event loop never waits on the store or the embedder. tests/api/test_api_surface.py keeps
the signatures identical to ``Memory``'s.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from typing import Any

from madeleine.api import Memory, Moment
from madeleine.config import Settings
from madeleine.embed.base import Embedder
from madeleine.facts.cards import Card
from madeleine.facts.checks import Check
from madeleine.importers.runner import ImportReport
from madeleine.kb.ask import Answer
from madeleine.kb.collection import KnowledgeBase
from madeleine.kb.records import CollectionInfo, KBHit, Principal
from madeleine.maintain.consolidate import MaintenanceReport
from madeleine.maintain.lifecycle import ItemLifecycle
from madeleine.maintain.timeline import Timeline
from madeleine.read.request import TimeBound
from madeleine.records import AddResult, Context, Hit
from madeleine.shortterm.agent import AgentState
from madeleine.shortterm.session import Session
from madeleine.store.audit_rows import AuditEntry, AuditQuery
from madeleine.store.records import LifecycleEntry
from madeleine.text.tokens import TokenCounter


class AsyncMemory:
    """The asyncio twin of ``Memory``: every public method, same arguments, run in a worker
    thread so the event loop never waits on the store or the embedder."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        embedder: Embedder | str | None = None,
        settings: Settings | None = None,
        token_counter: TokenCounter | None = None,
        checks: Sequence[Check] | None = None,
        rebuild: bool = False,
        read_only: bool | None = None,
        **overrides: Any,
    ) -> None:
        self._memory = Memory(
            path,
            embedder=embedder,
            settings=settings,
            token_counter=token_counter,
            checks=checks,
            rebuild=rebuild,
            read_only=read_only,
            **overrides,
        )

    @property
    def sync(self) -> Memory:
        return self._memory

    @property
    def settings(self) -> Settings:
        return self._memory.settings

    async def add(
        self,
        messages: Sequence[dict[str, Any]] | dict[str, Any],
        *,
        user_id: str,
        session_id: str = "default",
        timestamp: Moment = None,
    ) -> AddResult:
        return await asyncio.to_thread(
            self._memory.add, messages, user_id=user_id, session_id=session_id, timestamp=timestamp
        )

    async def add_event(
        self,
        *,
        user_id: str,
        type: str,
        data: dict[str, Any] | None = None,
        timestamp: Moment = None,
        session_id: str = "events",
        id: str | None = None,
    ) -> AddResult:
        return await asyncio.to_thread(
            self._memory.add_event,
            user_id=user_id,
            type=type,
            data=data,
            timestamp=timestamp,
            session_id=session_id,
            id=id,
        )

    async def wait(self, timeout: float | None = None) -> bool:
        return await asyncio.to_thread(self._memory.wait, timeout)

    async def rotate_vault_key(self, new_key: str | None = None) -> dict[str, Any]:
        return await asyncio.to_thread(self._memory.rotate_vault_key, new_key)

    async def retry_failed(self) -> int:
        return await asyncio.to_thread(self._memory.retry_failed)

    async def index_pending(self, progress: Callable[[int], None] | None = None) -> int:
        return await asyncio.to_thread(self._memory.index_pending, progress)

    async def search(
        self,
        query: str,
        *,
        user_id: str,
        limit: int = 10,
        channels: Sequence[str] | None = None,
        time_range: tuple[TimeBound, TimeBound] | None = None,
        stages: dict[str, Any] | None = None,
        now: Moment = None,
        as_of: TimeBound = None,
        include_history: bool = False,
        include_archived: bool = False,
    ) -> list[Hit]:
        return await asyncio.to_thread(
            self._memory.search,
            query,
            user_id=user_id,
            limit=limit,
            channels=channels,
            time_range=time_range,
            stages=stages,
            now=now,
            as_of=as_of,
            include_history=include_history,
            include_archived=include_archived,
        )

    async def context(
        self,
        query: str,
        *,
        user_id: str,
        budget_tokens: int = 2000,
        limit: int = 50,
        channels: Sequence[str] | None = None,
        time_range: tuple[TimeBound, TimeBound] | None = None,
        stages: dict[str, Any] | None = None,
        now: Moment = None,
        window: int = 1,
        as_of: TimeBound = None,
        include_history: bool = False,
        principal: Principal | None = None,
        collections: Sequence[str] | None = None,
        kb: bool = True,
    ) -> Context:
        return await asyncio.to_thread(
            self._memory.context,
            query,
            user_id=user_id,
            budget_tokens=budget_tokens,
            limit=limit,
            channels=channels,
            time_range=time_range,
            stages=stages,
            now=now,
            window=window,
            as_of=as_of,
            include_history=include_history,
            principal=principal,
            collections=collections,
            kb=kb,
        )

    async def kb(
        self, name: str, *, description: str | None = None, pii: str | None = None
    ) -> KnowledgeBase:
        """The collection handle (its methods are synchronous: run bulk loads in a thread)."""
        return await asyncio.to_thread(self._memory.kb, name, description=description, pii=pii)

    async def collections(self) -> list[CollectionInfo]:
        return await asyncio.to_thread(self._memory.collections)

    async def delete_collection(self, name: str) -> int:
        return await asyncio.to_thread(self._memory.delete_collection, name)

    async def search_kb(
        self,
        query: str,
        *,
        principal: Principal | None = None,
        collections: Sequence[str] | None = None,
        limit: int = 10,
        as_of: TimeBound = None,
        channels: Sequence[str] | None = None,
        decompose: bool = True,
    ) -> list[KBHit]:
        return await asyncio.to_thread(
            self._memory.search_kb,
            query,
            principal=principal,
            collections=collections,
            limit=limit,
            as_of=as_of,
            channels=channels,
            decompose=decompose,
        )

    async def ask(
        self,
        question: str,
        *,
        user_id: str,
        principal: Principal | None = None,
        collections: Sequence[str] | None = None,
        max_steps: int | None = None,
    ) -> Answer:
        return await asyncio.to_thread(
            self._memory.ask,
            question,
            user_id=user_id,
            principal=principal,
            collections=collections,
            max_steps=max_steps,
        )

    async def facts(
        self,
        user_id: str,
        *,
        as_of: TimeBound = None,
        include_history: bool = False,
        category: str | None = None,
        include_archived: bool = False,
        include_digests: bool = False,
    ) -> list[Card]:
        return await asyncio.to_thread(
            self._memory.facts,
            user_id,
            as_of=as_of,
            include_history=include_history,
            category=category,
            include_archived=include_archived,
            include_digests=include_digests,
        )

    async def archive(self, item_id: str, *, user_id: str, reason: str = "by request") -> bool:
        return await asyncio.to_thread(
            self._memory.archive, item_id, user_id=user_id, reason=reason
        )

    async def restore(self, item_id: str, *, user_id: str) -> bool:
        return await asyncio.to_thread(self._memory.restore, item_id, user_id=user_id)

    async def pin(self, item_id: str, *, user_id: str) -> bool:
        return await asyncio.to_thread(self._memory.pin, item_id, user_id=user_id)

    async def unpin(self, item_id: str, *, user_id: str) -> bool:
        return await asyncio.to_thread(self._memory.unpin, item_id, user_id=user_id)

    async def set_importance(self, item_id: str, importance: float, *, user_id: str) -> bool:
        return await asyncio.to_thread(
            self._memory.set_importance, item_id, importance, user_id=user_id
        )

    async def lifecycle(
        self, item_id: str, *, user_id: str, now: TimeBound = None
    ) -> ItemLifecycle:
        return await asyncio.to_thread(self._memory.lifecycle, item_id, user_id=user_id, now=now)

    async def consolidate(self, user_id: str, *, now: TimeBound = None) -> MaintenanceReport:
        return await asyncio.to_thread(self._memory.consolidate, user_id, now=now)

    async def maintain(
        self, user_ids: Sequence[str] | None = None, *, now: TimeBound = None
    ) -> list[MaintenanceReport]:
        return await asyncio.to_thread(self._memory.maintain, user_ids, now=now)

    async def record_audit(self, entry: AuditEntry) -> int:
        return await asyncio.to_thread(self._memory.record_audit, entry)

    async def audit_log(self, query: AuditQuery | None = None) -> list[AuditEntry]:
        return await asyncio.to_thread(self._memory.audit_log, query)

    async def undo(self, run: str, *, user_id: str) -> list[LifecycleEntry]:
        return await asyncio.to_thread(self._memory.undo, run, user_id=user_id)

    async def lifecycle_log(
        self, user_id: str, *, run: str | None = None, limit: int = 100
    ) -> list[LifecycleEntry]:
        return await asyncio.to_thread(self._memory.lifecycle_log, user_id, run=run, limit=limit)

    async def timeline(
        self,
        user_id: str,
        query: str | None = None,
        *,
        start: TimeBound = None,
        end: TimeBound = None,
        include_archived: bool = False,
        limit: int = 1000,
    ) -> Timeline:
        return await asyncio.to_thread(
            self._memory.timeline,
            user_id,
            query,
            start=start,
            end=end,
            include_archived=include_archived,
            limit=limit,
        )

    async def profile(
        self, user_id: str, *, include_digests: bool = False
    ) -> dict[str, dict[str, list[Card]]]:
        return await asyncio.to_thread(
            self._memory.profile, user_id, include_digests=include_digests
        )

    async def history(self, fact_id: str, *, user_id: str) -> list[Card]:
        return await asyncio.to_thread(self._memory.history, fact_id, user_id=user_id)

    async def routing_log(self, user_id: str, limit: int = 100) -> list[dict[str, Any]]:
        return await asyncio.to_thread(self._memory.routing_log, user_id, limit)

    async def alerts(self, user_id: str) -> list[dict[str, Any]]:
        return await asyncio.to_thread(self._memory.alerts, user_id)

    async def graph(
        self, user_id: str, *, around: str | None = None, depth: int = 2, limit: int = 200
    ) -> dict[str, Any]:
        return await asyncio.to_thread(
            self._memory.graph, user_id, around=around, depth=depth, limit=limit
        )

    async def graph_entities(self, user_id: str, *, limit: int = 50) -> list[dict[str, Any]]:
        return await asyncio.to_thread(self._memory.graph_entities, user_id, limit=limit)

    async def sources(self, fact_id: str, *, user_id: str) -> list[dict[str, Any]]:
        return await asyncio.to_thread(self._memory.sources, fact_id, user_id=user_id)

    async def users(
        self, *, limit: int = 100, offset: int = 0, prefix: str = ""
    ) -> list[dict[str, Any]]:
        return await asyncio.to_thread(
            self._memory.users, limit=limit, offset=offset, prefix=prefix
        )

    async def edit_fact(
        self, fact_id: str, statement: str, *, user_id: str, reason: str = "edited by a person"
    ) -> Card:
        return await asyncio.to_thread(
            self._memory.edit_fact, fact_id, statement, user_id=user_id, reason=reason
        )

    async def session(
        self, session_id: str, *, user_id: str, ttl_seconds: float | None = 86_400.0
    ) -> Session:
        """The buffer object itself is synchronous: its calls are short SQLite reads and
        writes (``append`` logs the message; indexing stays in the background)."""
        return await asyncio.to_thread(
            self._memory.session, session_id, user_id=user_id, ttl_seconds=ttl_seconds
        )

    async def sessions(self, user_id: str) -> list[dict[str, Any]]:
        return await asyncio.to_thread(self._memory.sessions, user_id)

    async def agent(
        self, agent_id: str, *, user_id: str, timeouts: dict[str, float] | None = None
    ) -> AgentState:
        return await asyncio.to_thread(
            self._memory.agent, agent_id, user_id=user_id, timeouts=timeouts
        )

    async def delete(self, memory_id: str, *, user_id: str) -> bool:
        return await asyncio.to_thread(self._memory.delete, memory_id, user_id=user_id)

    async def delete_message(self, message_id: str, *, user_id: str) -> bool:
        return await asyncio.to_thread(self._memory.delete_message, message_id, user_id=user_id)

    async def forget_user(self, user_id: str) -> dict[str, int]:
        return await asyncio.to_thread(self._memory.forget_user, user_id)

    async def export_user(self, user_id: str) -> dict[str, Any]:
        return await asyncio.to_thread(self._memory.export_user, user_id)

    async def import_claude_code(
        self,
        directory: str | os.PathLike[str],
        *,
        user_id: str,
        workers: int | None = None,
        progress: Callable[[str, int], None] | None = None,
    ) -> ImportReport:
        return await asyncio.to_thread(
            self._memory.import_claude_code,
            directory,
            user_id=user_id,
            workers=workers,
            progress=progress,
        )

    async def import_chatgpt(
        self,
        path: str | os.PathLike[str],
        *,
        user_id: str,
        progress: Callable[[str, int], None] | None = None,
    ) -> ImportReport:
        return await asyncio.to_thread(
            self._memory.import_chatgpt, path, user_id=user_id, progress=progress
        )

    async def stats(self) -> dict[str, Any]:
        return await asyncio.to_thread(self._memory.stats)

    async def integrity(self) -> dict[str, int]:
        return await asyncio.to_thread(self._memory.integrity)

    async def check(self) -> dict[str, Any]:
        return await asyncio.to_thread(self._memory.check)

    async def close(self) -> None:
        await asyncio.to_thread(self._memory.close)

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
