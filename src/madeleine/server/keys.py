"""API keys: each maps to one tenant. Keys come from ``MADELEINE_API_KEYS`` (a JSON object
``{"<key>": "<tenant>"}``) and from the key file of the data directory, which stores only a
SHA-256 of each key (``madeleine keys create|list|revoke``)."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import sqlite3
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

_TENANT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_PREFIX = "mdl_"
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


def require_tenant(tenant: object) -> str:
    """Tenant names become directory names: letters, digits, '_', '.', '-' (max 64)."""
    if not isinstance(tenant, str) or not _TENANT.match(tenant):
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
    tenant: str
    hint: str  # the key's first characters, to tell keys apart in listings
    label: str
    created_at: float
    revoked_at: float | None


class KeyRing:
    """Resolves a bearer key to its tenant. Keys given in the environment are compared in
    constant time; stored keys are looked up by their digest (the key itself is never
    stored)."""

    def __init__(self, path: Path, env_keys: Mapping[str, str] | None = None) -> None:
        self._path = path
        self._env = {digest(k): require_tenant(t) for k, t in (env_keys or {}).items()}
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as conn:
            conn.executescript(_SCHEMA)

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self._path, timeout=30, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        return conn

    def create(self, tenant: str, label: str = "") -> tuple[KeyRecord, str]:
        """A new key for ``tenant``: the record and the key, shown this once."""
        require_tenant(tenant)
        key = _PREFIX + secrets.token_urlsafe(32)
        now = time.time()
        with self._lock, self._connect() as conn:
            cursor = conn.execute(
                "INSERT INTO api_keys(tenant, digest, hint, label, created_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (tenant, digest(key), key[:10], label, now),
            )
            record = KeyRecord(int(cursor.lastrowid or 0), tenant, key[:10], label, now, None)
        return record, key

    def list(self, include_revoked: bool = False) -> list[KeyRecord]:
        sql = "SELECT id, tenant, hint, label, created_at, revoked_at FROM api_keys"
        if not include_revoked:
            sql += " WHERE revoked_at IS NULL"
        with self._connect() as conn:
            rows = conn.execute(sql + " ORDER BY id").fetchall()
        return [KeyRecord(*row) for row in rows]

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

    def tenant_of(self, key: str) -> str | None:
        if not key:
            return None
        wanted = digest(key)
        for known, tenant in self._env.items():
            if hmac.compare_digest(known, wanted):
                return tenant
        with self._connect() as conn:
            row = conn.execute(
                "SELECT tenant FROM api_keys WHERE digest = ? AND revoked_at IS NULL", (wanted,)
            ).fetchone()
        return None if row is None else str(row[0])

    @property
    def empty(self) -> bool:
        return not self._env and not self.list()
