"""What an API key may do: its scopes and its limits, checked the same way by the REST routes
(``deps.py``) and the MCP tools (``mcp_server.py``).

Scopes: ``read`` (search, context, facts, sessions, agents: a user's data), ``write`` (add,
edit, delete, forget, KB documents), ``admin`` (the operator views of a tenant: document
listings without a principal, users, stats, metrics, keys and the audit log). A key may be
limited to some KB collections and to some end-user ids. A server operator key belongs to no
tenant: it sees the server-wide metrics and manages every tenant's keys.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

Scope = Literal["read", "write", "admin"]
SCOPES: tuple[Scope, ...] = ("read", "write", "admin")
# Keys stored before scopes existed and keys from MADELEINE_API_KEYS: everything, as before.
FULL: frozenset[Scope] = frozenset(SCOPES)
# A new key without --scope: an agent's key reads and writes its users' memories; the
# operator views (ACL-free document listings, users, metrics, keys, audit) are asked for.
DEFAULT: frozenset[Scope] = frozenset(("read", "write"))


class ScopeError(PermissionError):
    """The key lacks a scope, or the request names a user or collection outside its limits
    (a 403 over REST)."""


def require_scopes(scopes: Iterable[object]) -> frozenset[Scope]:
    """The scopes named, each one of ``read``, ``write``, ``admin`` (at least one)."""
    found: set[Scope] = set()
    for scope in scopes:
        if scope not in SCOPES:
            raise ValueError(f"scope must be one of {', '.join(SCOPES)}, got {scope!r}")
        found.add(scope)
    if not found:
        raise ValueError("scopes must name at least one of read, write, admin")
    return frozenset(found)


def require_limit(values: Iterable[object] | None, field: str) -> frozenset[str] | None:
    """A collection or user limit: None (no limit) or a non-empty set of non-empty names."""
    if values is None:
        return None
    if isinstance(values, str):
        raise TypeError(f"{field} must be a list of names, not a str")
    names: set[str] = set()
    for name in values:
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"{field} must hold non-empty strings, got {name!r}")
        names.add(name)
    if not names:
        raise ValueError(f"{field} must name at least one (omit it for no limit)")
    return frozenset(names)


@dataclass(frozen=True, slots=True)
class Grant:
    """One authenticated key: whose it is and what it may reach."""

    key_id: str  # "12" for a stored key, "env:<hash prefix>" for MADELEINE_API_KEYS
    tenant: str | None  # None for a server operator key
    scopes: frozenset[Scope] = FULL
    collections: frozenset[str] | None = None  # None: every collection
    users: frozenset[str] | None = None  # None: every end user
    operator: bool = False

    def require(self, scope: Scope) -> None:
        if scope not in self.scopes:
            have = ", ".join(s for s in SCOPES if s in self.scopes) or "none"
            raise ScopeError(f"this key lacks the {scope!r} scope (it has: {have})")

    def require_tenant(self) -> str:
        if self.tenant is None:
            raise ScopeError("a server operator key has no tenant: use a tenant's key for its data")
        return self.tenant

    def require_user(self, user_id: object) -> None:
        """A user-limited key names one of its users on every request about users."""
        if self.users is None:
            return
        if user_id is None:
            raise ScopeError(
                "this key is limited to some users: give user_id (one of "
                f"{', '.join(sorted(self.users))})"
            )
        if user_id not in self.users:
            raise ScopeError(f"this key may not reach user {user_id!r}")

    def require_collection(self, name: object) -> None:
        if self.collections is not None and name not in self.collections:
            raise ScopeError(f"this key may not reach collection {name!r}")

    def narrow(self, requested: Sequence[str] | None) -> list[str] | None:
        """The collections a KB search may read: the requested ones (each must be allowed),
        or, when none are named, every allowed one (None: every collection)."""
        if requested is None:
            return None if self.collections is None else sorted(self.collections)
        for name in requested:
            self.require_collection(name)
        return list(requested)

    def to_dict(self) -> dict[str, object]:
        return {
            "key_id": self.key_id,
            "tenant": self.tenant,
            "scopes": [s for s in SCOPES if s in self.scopes],
            "collections": None if self.collections is None else sorted(self.collections),
            "users": None if self.users is None else sorted(self.users),
            "operator": self.operator,
        }
