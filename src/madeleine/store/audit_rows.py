"""Rows of the audit log, the same on every backend: the record, its columns and the one
query (each backend fills in its placeholder).

The log says who changed what and when (key id, tenant, user id, method, route template, the
ids in the path, status, time) and never the content. When a user is forgotten, their rows
keep only a hash of the user id (``pseudonym``), so the log still counts the erasure without
naming them; a query by user id finds both forms."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

COLUMNS = "id, at, key_id, tenant, user_id, method, route, target, status"
_PSEUDONYM = "forgotten:"
MAX_LIMIT = 10_000


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One audited request. ``id`` is 0 until stored."""

    at: float
    key_id: str
    tenant: str
    user_id: str | None
    method: str
    route: str
    status: int
    target: str = ""  # the ids in the path ("memory_id=ep_3"), never a body
    id: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def values(self) -> tuple[Any, ...]:
        return (
            self.at,
            self.key_id,
            self.tenant,
            self.user_id,
            self.method,
            self.route,
            self.target,
            self.status,
        )


INSERT = "INSERT INTO audit_log(at, key_id, tenant, user_id, method, route, target, status) VALUES "


def pseudonym(user_id: str) -> str:
    """What an erased user's audit rows keep instead of their id."""
    return _PSEUDONYM + hashlib.sha256(user_id.encode("utf-8")).hexdigest()[:24]


def entry_of(row: Sequence[Any]) -> AuditEntry:
    return AuditEntry(
        id=int(row[0]),
        at=float(row[1]),
        key_id=str(row[2]),
        tenant=str(row[3]),
        user_id=None if row[4] is None else str(row[4]),
        method=str(row[5]),
        route=str(row[6]),
        target=str(row[7]),
        status=int(row[8]),
    )


@dataclass(frozen=True, slots=True)
class AuditQuery:
    """Which entries: by user (under their id or its pseudonym), key, time range
    [since, until) and id (``before_id`` pages back); newest first, at most ``limit``."""

    user_id: str | None = None
    key_id: str | None = None
    since: float | None = None
    until: float | None = None
    before_id: int | None = None
    limit: int = 100

    def __post_init__(self) -> None:
        if isinstance(self.limit, bool) or not isinstance(self.limit, int):
            raise TypeError(f"limit must be an int, got {type(self.limit).__name__}")
        if not 1 <= self.limit <= MAX_LIMIT:
            raise ValueError(f"limit must be from 1 to {MAX_LIMIT}, got {self.limit}")


def entries_query(query: AuditQuery, mark: str) -> tuple[str, list[Any]]:
    """The audit query and its parameters, with the backend's placeholder ``mark``."""
    user_id, key_id, since, until = query.user_id, query.key_id, query.since, query.until
    before_id, limit = query.before_id, query.limit
    sql = f"SELECT {COLUMNS} FROM audit_log WHERE 1 = 1"
    params: list[Any] = []
    if user_id is not None:
        sql += f" AND user_id IN ({mark}, {mark})"
        params += [user_id, pseudonym(user_id)]
    if key_id is not None:
        sql += f" AND key_id = {mark}"
        params.append(key_id)
    if since is not None:
        sql += f" AND at >= {mark}"
        params.append(since)
    if until is not None:
        sql += f" AND at < {mark}"
        params.append(until)
    if before_id is not None:
        sql += f" AND id < {mark}"
        params.append(before_id)
    sql += f" ORDER BY id DESC LIMIT {mark}"
    params.append(limit)
    return sql, params


def forget_statement(mark: str) -> str:
    """Replace an erased user's id by its pseudonym in every row."""
    return f"UPDATE audit_log SET user_id = {mark} WHERE user_id = {mark}"
