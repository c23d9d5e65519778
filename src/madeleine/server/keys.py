"""API keys: each maps to one tenant and carries scopes (``grants.py``). Keys come from
``MADELEINE_API_KEYS`` (a JSON object ``{"<key>": "<tenant>"}``, every scope) and from the
key file of the data directory, which stores only a SHA-256 of each key
(``madeleine keys create|list|revoke``).

Rows written before scopes existed have ``scopes`` NULL: they keep every scope, as before.
A server operator key (``keys create --operator``) has no tenant."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from cachetools import TTLCache

from madeleine.server.grants import (
    DEFAULT,
    FULL,
    SCOPES,
    Grant,
    Scope,
    require_limit,
    require_scopes,
)
from madeleine.store.private import private_directory, private_file, tighten_existing

# fullmatch, not match with "$": "$" also matches before a final newline
_TENANT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_PREFIX = "mdl_"
GRANT_CACHE_SECONDS = 5.0  # a revoked key stops working within this long
_SCHEMA = """
CREATE TABLE IF NOT EXISTS api_keys (
    id INTEGER PRIMARY KEY,
    tenant TEXT NOT NULL,
    digest TEXT NOT NULL UNIQUE,
    hint TEXT NOT NULL,
    label TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL,
    revoked_at REAL
);
"""
# Added with scoped keys; a NULL scopes column means every scope (keys made before).
_COLUMNS = {
    "scopes": "TEXT",
    "collections": "TEXT",
    "users": "TEXT",
    "operator": "INTEGER NOT NULL DEFAULT 0",
}
_SELECT = (
    "SELECT id, tenant, hint, label, created_at, revoked_at, scopes, collections, users, "
    "operator FROM api_keys"
)


def require_tenant(tenant: object) -> str:
    """Tenant names become directory names: letters, digits, '_', '.', '-' (max 64)."""
    if not isinstance(tenant, str) or not _TENANT.fullmatch(tenant):
        raise ValueError(
            f"tenant must be 1-64 letters, digits, '_', '.' or '-' (not starting with a "
            f"symbol), got {tenant!r}"
        )
    return tenant


def key_ring(data: Path, env_keys: Mapping[str, str] | None = None) -> KeyRing:
    """The key ring of a server data directory (its ``keys.db``)."""
    return KeyRing(data / "keys.db", env_keys)


def digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class KeyRecord:
    id: int
    tenant: str | None  # None: a server operator key
    hint: str  # the key's first characters, to tell keys apart in listings
    label: str
    created_at: float
    revoked_at: float | None
    scopes: frozenset[Scope] = FULL
    collections: frozenset[str] | None = None
    users: frozenset[str] | None = None
    operator: bool = False

    def grant(self) -> Grant:
        return Grant(
            str(self.id), self.tenant, self.scopes, self.collections, self.users, self.operator
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "hint": self.hint,
            "label": self.label,
            "created_at": self.created_at,
            "revoked_at": self.revoked_at,
            **{k: v for k, v in self.grant().to_dict().items() if k != "key_id"},
        }


def _names(value: str | None) -> frozenset[str] | None:
    return None if value is None else frozenset(json.loads(value))


def _record(row: tuple[object, ...]) -> KeyRecord:
    operator = bool(row[9])
    scopes = FULL if row[6] is None else require_scopes(str(row[6]).split(","))
    return KeyRecord(
        id=int(str(row[0])),
        tenant=None if operator else str(row[1]),
        hint=str(row[2]),
        label=str(row[3]),
        created_at=float(str(row[4])),
        revoked_at=None if row[5] is None else float(str(row[5])),
        scopes=scopes,
        collections=_names(None if row[7] is None else str(row[7])),
        users=_names(None if row[8] is None else str(row[8])),
        operator=operator,
    )


def _stored(names: frozenset[str] | None) -> str | None:
    return None if names is None else json.dumps(sorted(names))


class KeyRing:
    """Resolves a bearer key to its grant. Keys given in the environment are compared in
    constant time; stored keys are looked up by their digest (the key itself is never
    stored). ``keys.db`` and its journals are owner-only (0600) in an owner-only directory."""

    def __init__(self, path: Path, env_keys: Mapping[str, str] | None = None) -> None:
        self._path = path
        self._env = {digest(k): require_tenant(t) for k, t in (env_keys or {}).items()}
        self._lock = threading.Lock()
        private_directory(path.parent)
        private_file(path)  # SQLite gives the -wal and -shm files this file's mode
        with self._connect() as conn:
            conn.executescript(_SCHEMA)
            have = {str(row[1]) for row in conn.execute("PRAGMA table_info(api_keys)")}
            for column, kind in _COLUMNS.items():
                if column not in have:
                    conn.execute(f"ALTER TABLE api_keys ADD COLUMN {column} {kind}")
        for journal in ("-wal", "-shm"):  # journals of a key file made before this rule
            tighten_existing(path.with_name(path.name + journal))

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self._path, timeout=30, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        return conn

    def create(
        self,
        tenant: str | None,
        label: str = "",
        *,
        scopes: Iterable[str] = DEFAULT,
        collections: Iterable[str] | None = None,
        users: Iterable[str] | None = None,
        operator: bool = False,
    ) -> tuple[KeyRecord, str]:
        """A new key for ``tenant`` (None with ``operator=True``): the record and the key,
        shown this once. Without ``scopes``: read and write (``grants.DEFAULT``)."""
        if operator:
            if tenant is not None:
                raise ValueError("an operator key belongs to no tenant: give no tenant")
            if collections is not None or users is not None:
                raise ValueError("an operator key takes no collection or user limits")
        else:
            require_tenant(tenant)
        granted = FULL if operator else require_scopes(scopes)
        limited_collections = require_limit(collections, "collections")
        limited_users = require_limit(users, "users")
        if not isinstance(label, str):
            raise TypeError(f"label must be a str, got {type(label).__name__}")
        key = _PREFIX + secrets.token_urlsafe(32)
        now = time.time()
        stored_scopes = ",".join(s for s in SCOPES if s in granted)
        with self._lock, self._connect() as conn:
            cursor = conn.execute(
                "INSERT INTO api_keys(tenant, digest, hint, label, created_at, scopes, "
                "collections, users, operator) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    tenant or "",
                    digest(key),
                    key[:10],
                    label,
                    now,
                    stored_scopes,
                    _stored(limited_collections),
                    _stored(limited_users),
                    int(operator),
                ),
            )
            record = KeyRecord(
                int(cursor.lastrowid or 0),
                tenant,
                key[:10],
                label,
                now,
                None,
                granted,
                limited_collections,
                limited_users,
                operator,
            )
        return record, key

    def list(self, include_revoked: bool = False, tenant: str | None = None) -> list[KeyRecord]:
        """Stored keys by id (one tenant's with ``tenant``; operator keys have none)."""
        sql, params = _SELECT + " WHERE 1 = 1", []
        if not include_revoked:
            sql += " AND revoked_at IS NULL"
        if tenant is not None:
            sql += " AND tenant = ? AND operator = 0"
            params.append(tenant)
        with self._connect() as conn:
            rows = conn.execute(sql + " ORDER BY id", params).fetchall()
        return [_record(row) for row in rows]

    def get(self, key_id: int) -> KeyRecord | None:
        with self._connect() as conn:
            row = conn.execute(_SELECT + " WHERE id = ?", (key_id,)).fetchone()
        return None if row is None else _record(row)

    def revoke(self, key_or_id: str) -> bool:
        """Revoke a stored key, given by its id (as listed) or by the key itself."""
        with self._lock, self._connect() as conn:
            if key_or_id.isdigit():
                cursor = conn.execute(
                    "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                    (time.time(), int(key_or_id)),
                )
            else:
                cursor = conn.execute(
                    "UPDATE api_keys SET revoked_at = ? WHERE digest = ? AND revoked_at IS NULL",
                    (time.time(), digest(key_or_id)),
                )
            return cursor.rowcount > 0

    def grant_of(self, key: str) -> Grant | None:
        """What ``key`` may do; None for an unknown or revoked key."""
        if not key:
            return None
        wanted = digest(key)
        for known, tenant in self._env.items():
            if hmac.compare_digest(known, wanted):
                return Grant(f"env:{known[:8]}", tenant)
        with self._connect() as conn:
            row = conn.execute(
                _SELECT + " WHERE digest = ? AND revoked_at IS NULL", (wanted,)
            ).fetchone()
        return None if row is None else _record(row).grant()

    def tenant_of(self, key: str) -> str | None:
        grant = self.grant_of(key)
        return None if grant is None else grant.tenant

    @property
    def empty(self) -> bool:
        return not self._env and not self.list()


class CachedGrants:
    """``KeyRing.grant_of`` behind a short cache (by the key's digest): the servers look a key
    up on every request, and a revocation still reaches them within
    ``GRANT_CACHE_SECONDS`` (``forget()``: at once, in this process)."""

    def __init__(self, ring: KeyRing) -> None:
        self._ring = ring
        self._known: TTLCache[str, Grant | None] = TTLCache(maxsize=10_000, ttl=GRANT_CACHE_SECONDS)

    def grant(self, key: str) -> Grant | None:
        hashed = digest(key)
        if hashed not in self._known:
            self._known[hashed] = self._ring.grant_of(key)
        return self._known[hashed]

    def forget(self) -> None:
        self._known.clear()
