"""Each client method as an HTTP call and the decoding of its answer, shared by the
synchronous and the asynchronous client (they differ only in how they send)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar
from urllib.parse import quote

import httpx

from madeleine.errors import (
    AuthenticationError,
    ForbiddenError,
    RateLimitedError,
    ServerError,
    StaleVersionError,
    StoreReadOnlyError,
)
from madeleine.facts.cards import Card
from madeleine.maintain.consolidate import Change, MaintenanceReport
from madeleine.maintain.lifecycle import ItemLifecycle
from madeleine.maintain.timeline import Timeline, TimelineGroup, TimelineItem
from madeleine.records import AddResult, Context, Hit
from madeleine.shortterm.agent import ConcurrentUpdateError
from madeleine.shortterm.session import Window
from madeleine.store.records import LifecycleEntry

Moment = datetime | str | float | None
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Call(Generic[T]):
    method: str
    path: str
    decode: Callable[[Any], T]
    json: dict[str, Any] | None = None
    params: dict[str, Any] = field(default_factory=dict)
    missing: Any = None  # what a 404 means (False for a delete), or raise when None


def jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, tuple | list):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    return value


def _query(params: dict[str, Any]) -> dict[str, Any]:
    found = {}
    for name, value in params.items():
        if value is None:
            continue
        found[name] = str(value).lower() if isinstance(value, bool) else jsonable(value)
    return found


def hit(data: dict[str, Any]) -> Hit:
    return Hit(
        id=data["id"],
        kind=data["kind"],
        text=data["text"],
        score=float(data["score"]),
        timestamp=datetime.fromisoformat(data["timestamp"]),
        source_ids=list(data["source_ids"]),
        session_id=data["session_id"],
        speaker=data["speaker"],
        explain=data["explain"],
    )


def _added(data: dict[str, Any]) -> AddResult:
    return AddResult(added=list(data["added"]), duplicates=list(data["duplicates"]))


def _context(data: dict[str, Any]) -> Context:
    return Context(
        text=data["text"],
        items=[hit(h) for h in data["items"]],
        tokens=int(data["tokens"]),
        budget_tokens=int(data["budget_tokens"]),
        window=[hit(h) for h in data["window"]],
    )


def _cards(rows: list[dict[str, Any]]) -> list[Card]:
    return [Card.model_validate(row) for row in rows]


def add(
    messages: Sequence[dict[str, Any]] | dict[str, Any],
    user_id: str,
    session_id: str,
    timestamp: Moment,
    wait: bool,
) -> Call[AddResult]:
    body = {
        "user_id": user_id,
        "messages": jsonable(messages),
        "session_id": session_id,
        "timestamp": jsonable(timestamp),
        "wait": wait,
    }
    return Call("POST", "/v1/memories", _added, json=body)


def add_event(
    user_id: str,
    type: str,
    data: dict[str, Any] | None,
    timestamp: Moment,
    session_id: str,
    id: str | None,
) -> Call[AddResult]:
    body = {
        "user_id": user_id,
        "type": type,
        "data": jsonable(data),
        "timestamp": jsonable(timestamp),
        "session_id": session_id,
        "id": id,
    }
    return Call("POST", "/v1/events", _added, json=body)


def wait(timeout: float | None) -> Call[bool]:
    return Call("POST", "/v1/wait", lambda d: bool(d["done"]), json={"timeout": timeout})


def search(**arguments: Any) -> Call[list[Hit]]:
    body = {k: jsonable(v) for k, v in arguments.items()}
    return Call("POST", "/v1/search", lambda d: [hit(h) for h in d["hits"]], json=body)


def context(**arguments: Any) -> Call[Context]:
    body = {k: jsonable(v) for k, v in arguments.items()}
    return Call("POST", "/v1/context", _context, json=body)


def facts(
    user_id: str,
    as_of: Moment,
    include_history: bool,
    category: str | None,
    include_digests: bool = False,
) -> Call[list[Card]]:
    params = _query(
        {
            "user_id": user_id,
            "as_of": as_of,
            "include_history": include_history,
            "category": category,
            "include_digests": include_digests,
        }
    )
    return Call("GET", "/v1/facts", lambda d: _cards(d["facts"]), params=params)


def profile(user_id: str, include_digests: bool = False) -> Call[dict[str, dict[str, list[Card]]]]:
    def decode(data: dict[str, Any]) -> dict[str, dict[str, list[Card]]]:
        return {
            topic: {sub: _cards(cards) for sub, cards in subs.items()}
            for topic, subs in data["profile"].items()
        }

    params = _query({"user_id": user_id, "include_digests": include_digests})
    return Call("GET", "/v1/profile", decode, params=params)


def history(fact_id: str, user_id: str) -> Call[list[Card]]:
    path = f"/v1/facts/{_segment(fact_id)}/history"
    return Call("GET", path, lambda d: _cards(d["history"]), params={"user_id": user_id})


def routing_log(user_id: str, limit: int) -> Call[list[dict[str, Any]]]:
    params = {"user_id": user_id, "limit": limit}
    return Call("GET", "/v1/routing-log", lambda d: list(d["decisions"]), params=params)


def alerts(user_id: str) -> Call[list[dict[str, Any]]]:
    return Call("GET", "/v1/alerts", lambda d: list(d["alerts"]), params={"user_id": user_id})


def graph(user_id: str, around: str | None, depth: int, limit: int) -> Call[dict[str, Any]]:
    params = _query({"user_id": user_id, "around": around, "depth": depth, "limit": limit})
    return Call("GET", "/v1/graph", lambda d: d, params=params)


def graph_entities(user_id: str, limit: int) -> Call[list[dict[str, Any]]]:
    params = {"user_id": user_id, "limit": limit}
    return Call("GET", "/v1/entities", lambda d: list(d["entities"]), params=params)


def sources(fact_id: str, user_id: str) -> Call[list[dict[str, Any]]]:
    path = f"/v1/facts/{_segment(fact_id)}/sources"
    return Call("GET", path, lambda d: list(d["sources"]), params={"user_id": user_id})


def users(limit: int, offset: int, prefix: str) -> Call[list[dict[str, Any]]]:
    params = {"limit": limit, "offset": offset, "prefix": prefix}
    return Call("GET", "/v1/users", lambda d: list(d["users"]), params=params)


# The server's own calls, which ``Memory`` has no counterpart of: key administration and
# the audit log of a tenant (an admin or operator key).
SERVER_ONLY = frozenset({"whoami", "keys", "create_key", "revoke_key", "audit"})


def whoami() -> Call[dict[str, Any]]:
    return Call("GET", "/v1/whoami", lambda d: dict(d))


def keys(tenant: str | None, include_revoked: bool) -> Call[list[dict[str, Any]]]:
    params = _query({"tenant": tenant, "include_revoked": include_revoked})
    return Call("GET", "/v1/keys", lambda d: list(d["keys"]), params=params)


def create_key(
    tenant: str | None,
    scopes: Sequence[str] | None,
    collections: Sequence[str] | None,
    users: Sequence[str] | None,
    label: str,
) -> Call[dict[str, Any]]:
    body = {
        "tenant": tenant,
        "scopes": None if scopes is None else list(scopes),
        "collections": None if collections is None else list(collections),
        "users": None if users is None else list(users),
        "label": label,
    }
    return Call("POST", "/v1/keys", lambda d: dict(d), json=body)


def revoke_key(key_id: int) -> Call[bool]:
    return Call("DELETE", f"/v1/keys/{int(key_id)}", lambda d: True, missing=False)


def audit_log(
    tenant: str | None, user_id: str | None, key_id: str | None, limit: int
) -> Call[list[dict[str, Any]]]:
    params = _query({"tenant": tenant, "user_id": user_id, "key_id": key_id, "limit": limit})
    return Call("GET", "/v1/audit", lambda d: list(d["entries"]), params=params)


def edit_fact(fact_id: str, statement: str, user_id: str, reason: str) -> Call[Card]:
    body = {"user_id": user_id, "statement": statement, "reason": reason}
    path = f"/v1/facts/{_segment(fact_id)}"
    return Call("PUT", path, lambda d: Card.model_validate(d["fact"]), json=body)


def delete(memory_id: str, user_id: str) -> Call[bool]:
    path = f"/v1/memories/{_segment(memory_id)}"
    return Call("DELETE", path, lambda d: True, params={"user_id": user_id}, missing=False)


def delete_message(message_id: str, user_id: str) -> Call[bool]:
    path = f"/v1/messages/{_segment(message_id)}"
    return Call("DELETE", path, lambda d: True, params={"user_id": user_id}, missing=False)


def forget_user(user_id: str) -> Call[dict[str, int]]:
    return Call("POST", "/v1/forget", lambda d: d["removed"], json={"user_id": user_id})


def export_user(user_id: str) -> Call[dict[str, Any]]:
    return Call("GET", "/v1/export", lambda d: d, params={"user_id": user_id})


def stats() -> Call[dict[str, Any]]:
    return Call("GET", "/v1/stats", lambda d: d)


# -- lifecycle: archive, pins, importance, maintenance and its undo, timelines ------------


def _changed(data: dict[str, Any]) -> bool:
    return bool(data["changed"])


def _item_call(verb: str, item_id: str, body: dict[str, Any], method: str = "POST") -> Call[bool]:
    return Call(method, f"/v1/memories/{_segment(item_id)}/{verb}", _changed, json=body)


def archive(item_id: str, user_id: str, reason: str) -> Call[bool]:
    return _item_call("archive", item_id, {"user_id": user_id, "reason": reason})


def restore(item_id: str, user_id: str) -> Call[bool]:
    return _item_call("restore", item_id, {"user_id": user_id})


def pin(item_id: str, user_id: str) -> Call[bool]:
    return _item_call("pin", item_id, {"user_id": user_id})


def unpin(item_id: str, user_id: str) -> Call[bool]:
    return _item_call("unpin", item_id, {"user_id": user_id})


def set_importance(item_id: str, importance: float, user_id: str) -> Call[bool]:
    body = {"user_id": user_id, "importance": importance}
    return _item_call("importance", item_id, body, method="PUT")


def lifecycle(item_id: str, user_id: str) -> Call[ItemLifecycle]:
    path = f"/v1/memories/{_segment(item_id)}/lifecycle"
    return Call("GET", path, lambda d: ItemLifecycle(**d), params={"user_id": user_id})


def _report(data: dict[str, Any]) -> MaintenanceReport:
    return MaintenanceReport(
        run=data["run"],
        user_id=data["user_id"],
        changes=[Change(c["action"], c["item"], dict(c["detail"])) for c in data["changes"]],
        before=dict(data["before"]),
        after=dict(data["after"]),
        seconds=float(data["seconds"]),
        llm_calls=int(data["llm_calls"]),
        notes=list(data["notes"]),
    )


def maintain(user_id: str | None, now: Moment) -> Call[list[MaintenanceReport]]:
    body = {"user_id": user_id, "now": jsonable(now)}
    return Call("POST", "/v1/maintain", lambda d: [_report(r) for r in d["reports"]], json=body)


def _entries(rows: list[dict[str, Any]]) -> list[LifecycleEntry]:
    return [LifecycleEntry(**row) for row in rows]


def undo(run: str, user_id: str) -> Call[list[LifecycleEntry]]:
    body = {"user_id": user_id, "run": run}
    return Call("POST", "/v1/undo", lambda d: _entries(d["undone"]), json=body)


def lifecycle_log(user_id: str, run: str | None, limit: int) -> Call[list[LifecycleEntry]]:
    params = _query({"user_id": user_id, "run": run, "limit": limit})
    return Call("GET", "/v1/lifecycle-log", lambda d: _entries(d["entries"]), params=params)


def _timeline(data: dict[str, Any]) -> Timeline:
    items = [
        TimelineItem(**{**row, "timestamp": datetime.fromisoformat(row["timestamp"])})
        for row in data["items"]
    ]
    by_id = {item.id: item for item in items}
    groups = [
        TimelineGroup(g["day"], g["session_id"], [by_id[i] for i in g["items"] if i in by_id])
        for g in data["groups"]
    ]
    return Timeline(
        user_id=data["user_id"],
        items=items,
        groups=groups,
        narrative=data["narrative"],
        truncated=bool(data["truncated"]),
        llm=bool(data["llm"]),
        query=data["query"],
    )


def timeline(
    user_id: str,
    query: str | None,
    start: Moment,
    end: Moment,
    include_archived: bool,
    limit: int,
) -> Call[Timeline]:
    params = _query(
        {
            "user_id": user_id,
            "query": query,
            "start": start,
            "end": end,
            "include_archived": include_archived,
            "limit": limit,
        }
    )
    return Call("GET", "/v1/timeline", _timeline, params=params)


def _segment(value: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"ids must be str, got {type(value).__name__}")
    return quote(value, safe="")


def result(call: Call[T], response: httpx.Response) -> T:
    """The decoded answer, or the exception ``Memory`` would have raised."""
    if response.status_code < 300:
        return call.decode(response.json())
    if response.status_code == 404 and call.missing is not None:
        return call.missing  # type: ignore[no-any-return]
    try:
        error = response.json()["error"]
        code, message = str(error["code"]), str(error["message"])
    except (ValueError, KeyError, TypeError):
        code, message = "error", response.text[:500] or response.reason_phrase
    status = response.status_code
    if status == 401:
        raise AuthenticationError(message)
    if status == 403:
        raise ForbiddenError(message)
    if status == 429:
        raise RateLimitedError(message, float(response.headers.get("Retry-After", "1")))
    if status == 422:
        raise TypeError(message)
    if status in (400, 404, 413):
        raise ValueError(message)
    if status == 409 and code == "read_only":
        raise StoreReadOnlyError(message)
    if status == 409 and code == "stale_version":
        raise StaleVersionError(message)
    if status == 409 and code == "conflict":
        raise ConcurrentUpdateError(message)
    raise ServerError(f"{status} {code}: {message}")


# -- short-term memory ----------------------------------------------------------------------


def append(
    session_id: str, user_id: str, message: dict[str, Any], pinned: bool, ttl: float | None
) -> Call[int]:
    body = {"user_id": user_id, "message": message, "pinned": pinned, "ttl_seconds": ttl}
    path = f"/v1/sessions/{_segment(session_id)}/messages"
    return Call("POST", path, lambda d: int(d["position"]), json=body)


def session_messages(session_id: str, user_id: str) -> Call[list[dict[str, Any]]]:
    path = f"/v1/sessions/{_segment(session_id)}/messages"
    return Call("GET", path, lambda d: list(d["messages"]), params={"user_id": user_id})


def session_window(session_id: str, user_id: str, budget_tokens: int) -> Call[Window]:
    def decode(data: dict[str, Any]) -> Window:
        return Window(
            list(data["messages"]),
            str(data["summary"]),
            int(data["tokens"]),
            int(data["budget_tokens"]),
            int(data["folded"]),
        )

    params = {"user_id": user_id, "budget_tokens": budget_tokens}
    return Call("GET", f"/v1/sessions/{_segment(session_id)}/window", decode, params=params)


def clear_session(session_id: str, user_id: str) -> Call[int]:
    path = f"/v1/sessions/{_segment(session_id)}"
    return Call("DELETE", path, lambda d: int(d["removed"]), params={"user_id": user_id})


def sessions(user_id: str) -> Call[list[dict[str, Any]]]:
    return Call("GET", "/v1/sessions", lambda d: list(d["sessions"]), params={"user_id": user_id})


def agent_state(agent_id: str, user_id: str) -> Call[dict[str, Any]]:
    return Call("GET", f"/v1/agents/{_segment(agent_id)}", dict, params={"user_id": user_id})


def transition(
    agent_id: str,
    user_id: str,
    to: str,
    reason: str,
    data: dict[str, Any] | None,
    expected_version: int | None,
) -> Call[dict[str, Any]]:
    body = {
        "user_id": user_id,
        "to": to,
        "reason": reason,
        "data": jsonable(data),
        "expected_version": expected_version,
    }
    return Call("POST", f"/v1/agents/{_segment(agent_id)}/transition", dict, json=body)


def agent_history(agent_id: str, user_id: str, limit: int) -> Call[list[dict[str, Any]]]:
    path = f"/v1/agents/{_segment(agent_id)}/history"
    params = {"user_id": user_id, "limit": limit}
    return Call("GET", path, lambda d: list(d["history"]), params=params)


def agent_snapshot(agent_id: str, user_id: str) -> Call[dict[str, Any]]:
    path = f"/v1/agents/{_segment(agent_id)}/snapshot"
    return Call("GET", path, dict, params={"user_id": user_id})


def agent_restore(agent_id: str, user_id: str, snapshot: dict[str, Any]) -> Call[dict[str, Any]]:
    body = {"user_id": user_id, "snapshot": jsonable(snapshot)}
    return Call("POST", f"/v1/agents/{_segment(agent_id)}/restore", dict, json=body)
