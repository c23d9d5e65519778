"""``Client``: ``Memory``'s methods over HTTP (httpx), same names, arguments and results."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx

from madeleine.client import calls
from madeleine.client.calls import Moment, T
from madeleine.client.remote import RemoteAgent, RemoteSession
from madeleine.facts.cards import Card
from madeleine.maintain.consolidate import MaintenanceReport
from madeleine.maintain.lifecycle import ItemLifecycle
from madeleine.maintain.timeline import Timeline
from madeleine.records import AddResult, Context, Hit
from madeleine.store.records import LifecycleEntry

_TIMEOUT = httpx.Timeout(120.0, connect=10.0)


class Client:
    """A Madeleine server as if it were a local ``Memory``: ``Client(url, api_key)``."""

    def __init__(
        self,
        url: str = "http://127.0.0.1:8000",
        api_key: str | None = None,
        *,
        timeout: float | httpx.Timeout = _TIMEOUT,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(
            base_url=url.rstrip("/"), headers=headers, timeout=timeout, transport=transport
        )

    def _run(self, call: calls.Call[T]) -> T:
        response = self._http.request(call.method, call.path, json=call.json, params=call.params)
        return calls.result(call, response)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add(
        self,
        messages: Sequence[dict[str, Any]] | dict[str, Any],
        *,
        user_id: str,
        session_id: str = "default",
        timestamp: Moment = None,
        wait: bool = False,
    ) -> AddResult:
        """As ``Memory.add``; ``wait=True`` returns once the messages are searchable."""
        return self._run(calls.add(messages, user_id, session_id, timestamp, wait))

    def add_event(
        self,
        *,
        user_id: str,
        type: str,
        data: dict[str, Any] | None = None,
        timestamp: Moment = None,
        session_id: str = "events",
        id: str | None = None,
    ) -> AddResult:
        return self._run(calls.add_event(user_id, type, data, timestamp, session_id, id))

    def wait(self, timeout: float | None = None) -> bool:
        return self._run(calls.wait(timeout))

    def search(
        self,
        query: str,
        *,
        user_id: str,
        limit: int = 10,
        channels: Sequence[str] | None = None,
        time_range: tuple[Moment, Moment] | None = None,
        stages: dict[str, Any] | None = None,
        now: Moment = None,
        as_of: Moment = None,
        include_history: bool = False,
    ) -> list[Hit]:
        return self._run(
            calls.search(
                query=query,
                user_id=user_id,
                limit=limit,
                channels=None if channels is None else list(channels),
                time_range=time_range,
                stages=stages,
                now=now,
                as_of=as_of,
                include_history=include_history,
            )
        )

    def context(
        self,
        query: str,
        *,
        user_id: str,
        budget_tokens: int = 2000,
        limit: int = 50,
        channels: Sequence[str] | None = None,
        time_range: tuple[Moment, Moment] | None = None,
        stages: dict[str, Any] | None = None,
        now: Moment = None,
        window: int = 1,
        as_of: Moment = None,
        include_history: bool = False,
    ) -> Context:
        return self._run(
            calls.context(
                query=query,
                user_id=user_id,
                budget_tokens=budget_tokens,
                limit=limit,
                channels=None if channels is None else list(channels),
                time_range=time_range,
                stages=stages,
                now=now,
                window=window,
                as_of=as_of,
                include_history=include_history,
            )
        )

    def facts(
        self,
        user_id: str,
        *,
        as_of: Moment = None,
        include_history: bool = False,
        category: str | None = None,
        include_digests: bool = False,
    ) -> list[Card]:
        return self._run(calls.facts(user_id, as_of, include_history, category, include_digests))

    def profile(
        self, user_id: str, *, include_digests: bool = False
    ) -> dict[str, dict[str, list[Card]]]:
        return self._run(calls.profile(user_id, include_digests))

    def history(self, fact_id: str, *, user_id: str) -> list[Card]:
        return self._run(calls.history(fact_id, user_id))

    def routing_log(self, user_id: str, limit: int = 100) -> list[dict[str, Any]]:
        return self._run(calls.routing_log(user_id, limit))

    def alerts(self, user_id: str) -> list[dict[str, Any]]:
        return self._run(calls.alerts(user_id))

    def graph(
        self, user_id: str, *, around: str | None = None, depth: int = 2, limit: int = 200
    ) -> dict[str, Any]:
        return self._run(calls.graph(user_id, around, depth, limit))

    def graph_entities(self, user_id: str, *, limit: int = 50) -> list[dict[str, Any]]:
        return self._run(calls.graph_entities(user_id, limit))

    def sources(self, fact_id: str, *, user_id: str) -> list[dict[str, Any]]:
        return self._run(calls.sources(fact_id, user_id))

    def users(self, *, limit: int = 100, offset: int = 0, prefix: str = "") -> list[dict[str, Any]]:
        return self._run(calls.users(limit, offset, prefix))

    def edit_fact(
        self, fact_id: str, statement: str, *, user_id: str, reason: str = "edited by a person"
    ) -> Card:
        return self._run(calls.edit_fact(fact_id, statement, user_id, reason))

    def delete(self, memory_id: str, *, user_id: str) -> bool:
        return self._run(calls.delete(memory_id, user_id))

    def delete_message(self, message_id: str, *, user_id: str) -> bool:
        return self._run(calls.delete_message(message_id, user_id))

    def forget_user(self, user_id: str) -> dict[str, int]:
        return self._run(calls.forget_user(user_id))

    def export_user(self, user_id: str) -> dict[str, Any]:
        return self._run(calls.export_user(user_id))

    def stats(self) -> dict[str, Any]:
        return self._run(calls.stats())

    # -- lifecycle (write scope for changes; the same results as Memory's) ---------------

    def archive(self, item_id: str, *, user_id: str, reason: str = "by request") -> bool:
        return self._run(calls.archive(item_id, user_id, reason))

    def restore(self, item_id: str, *, user_id: str) -> bool:
        return self._run(calls.restore(item_id, user_id))

    def pin(self, item_id: str, *, user_id: str) -> bool:
        return self._run(calls.pin(item_id, user_id))

    def unpin(self, item_id: str, *, user_id: str) -> bool:
        return self._run(calls.unpin(item_id, user_id))

    def set_importance(self, item_id: str, importance: float, *, user_id: str) -> bool:
        return self._run(calls.set_importance(item_id, importance, user_id))

    def lifecycle(self, item_id: str, *, user_id: str, now: Moment = None) -> ItemLifecycle:
        """The server answers for its own moment; ``now`` is accepted for the same
        signature as ``Memory.lifecycle`` and must be None."""
        if now is not None:
            raise ValueError("a remote store reads an item's lifecycle at the server's moment")
        return self._run(calls.lifecycle(item_id, user_id))

    def consolidate(self, user_id: str, *, now: Moment = None) -> MaintenanceReport:
        return self._run(calls.maintain(user_id, now))[0]

    def maintain(
        self, user_ids: Sequence[str] | None = None, *, now: Moment = None
    ) -> list[MaintenanceReport]:
        if user_ids is None:
            return self._run(calls.maintain(None, now))
        if isinstance(user_ids, str):
            raise TypeError("user_ids must be a list of user ids or None, not one str")
        reports: list[MaintenanceReport] = []
        for user_id in user_ids:
            found: list[MaintenanceReport] = self._run(calls.maintain(user_id, now))
            reports.extend(found)
        return reports

    def undo(self, run: str, *, user_id: str) -> list[LifecycleEntry]:
        return self._run(calls.undo(run, user_id))

    def lifecycle_log(
        self, user_id: str, *, run: str | None = None, limit: int = 100
    ) -> list[LifecycleEntry]:
        return self._run(calls.lifecycle_log(user_id, run, limit))

    def timeline(
        self,
        user_id: str,
        query: str | None = None,
        *,
        start: Moment = None,
        end: Moment = None,
        include_archived: bool = False,
        limit: int = 1000,
    ) -> Timeline:
        return self._run(calls.timeline(user_id, query, start, end, include_archived, limit))

    # -- key administration (an admin or operator key) ------------------------------------

    def whoami(self) -> dict[str, Any]:
        """This key's tenant, scopes and limits."""
        return self._run(calls.whoami())

    def keys(
        self, *, tenant: str | None = None, include_revoked: bool = False
    ) -> list[dict[str, Any]]:
        return self._run(calls.keys(tenant, include_revoked))

    def create_key(
        self,
        *,
        tenant: str | None = None,
        scopes: Sequence[str] | None = None,
        collections: Sequence[str] | None = None,
        users: Sequence[str] | None = None,
        label: str = "",
    ) -> dict[str, Any]:
        """A new key (its ``key``, shown this once, and its record); default read and write."""
        return self._run(calls.create_key(tenant, scopes, collections, users, label))

    def revoke_key(self, key_id: int) -> bool:
        return self._run(calls.revoke_key(key_id))

    def audit(
        self,
        *,
        tenant: str | None = None,
        user_id: str | None = None,
        key_id: str | None = None,
        limit: int = 100,
    ) -> list[dict[str, Any]]:
        """Who changed what and when, newest first (never the content)."""
        return self._run(calls.audit_log(tenant, user_id, key_id, limit))

    def session(
        self, session_id: str, *, user_id: str, ttl_seconds: float | None = 86_400.0
    ) -> RemoteSession:
        """The server-side buffer of one session (``append``, ``messages``, ``window``,
        ``clear``)."""
        return RemoteSession(self._run, session_id, user_id, ttl_seconds)

    def sessions(self, user_id: str) -> list[dict[str, Any]]:
        return self._run(calls.sessions(user_id))

    def agent(self, agent_id: str, *, user_id: str) -> RemoteAgent:
        """The server-side state machine of one agent (timeouts are the server's
        ``MADELEINE_AGENT_TIMEOUTS``)."""
        return RemoteAgent(self._run, agent_id, user_id)
