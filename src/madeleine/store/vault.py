"""The PII vault: values the policy keeps for their owner, encrypted at rest and addressed by
the tokens that stand in for them in indexes, logs and prompts.

Every method takes the connection to use, so a put joins the caller's write transaction (the
event and the values it vaulted commit or roll back together). Only ciphertext and a keyed
digest (for dedupe) are stored; the plaintext never touches the database file.

A wrong key raises ``VaultKeyError`` instead of answering ``None``: ``None`` means "deleted",
and a misconfigured ``MADELEINE_VAULT_KEY`` must not look like lost data.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import json
import logging
import os
import secrets
import sqlite3
import stat
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken

from madeleine.errors import MadeleineError
from madeleine.text.pii import TOKEN, PiiCategory

log = logging.getLogger(__name__)

KEY_FILE = "vault.key"

# The unique (user_id, digest) index is also the index on user_id (its leading column).
VAULT_SCHEMA = """
CREATE TABLE IF NOT EXISTS vault (
    token       TEXT PRIMARY KEY,
    user_id     TEXT NOT NULL,
    category    TEXT NOT NULL,
    digest      TEXT NOT NULL,
    ciphertext  BLOB NOT NULL,
    created_at  REAL NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS vault_user_digest ON vault(user_id, digest);
"""

_IN_CHUNK = 500
_TOKEN_ATTEMPTS = 8


class VaultError(MadeleineError):
    """The vault cannot serve a value (a row that does not belong where it is stored)."""


class VaultKeyError(VaultError, ValueError):
    """The vault key is malformed or is not the key the values were encrypted with."""


@dataclass(frozen=True, slots=True)
class VaultEntry:
    """One vaulted value, for the owner's export."""

    token: str
    category: PiiCategory
    value: str = field(repr=False)
    created_at: float


def new_token() -> str:
    """'v' + 10 random lowercase base32 characters (50 bits): the placeholder contract."""
    return "v" + base64.b32encode(secrets.token_bytes(10)).decode("ascii").lower()[:10]


class Vault:
    """Encrypts with Fernet; ``connect`` supplies a connection when a method is given none."""

    def __init__(self, connect: Callable[[], sqlite3.Connection], key: bytes) -> None:
        self._connect = connect
        self._fernet = _fernet(key, "the vault key")
        # A separate subkey for dedupe digests, so the digest never reuses the cipher key.
        self._mac_key = hmac.new(key, b"madeleine vault dedupe v1", hashlib.sha256).digest()

    def ensure_schema(self, conn: sqlite3.Connection | None = None) -> None:
        """Create the table when used on its own (the store runs VAULT_SCHEMA at open)."""
        c = self._use(conn)
        for statement in VAULT_SCHEMA.split(";"):
            if statement.strip():
                c.execute(statement)

    # -- writes -----------------------------------------------------------------------------------

    def put(
        self,
        conn: sqlite3.Connection | None,
        user_id: str,
        category: PiiCategory | str,
        value: str,
    ) -> str:
        """The token for this user's value; the same (user, category, value) gets the same
        token, so re-adding a message does not grow the vault."""
        cat = PiiCategory(category)
        c = self._use(conn)
        digest = self._digest(user_id, cat, value)
        existing = self._token_for(c, user_id, digest)
        if existing is not None:
            return existing
        for _ in range(_TOKEN_ATTEMPTS):
            token = new_token()
            payload = json.dumps([user_id, token, cat.value, value], ensure_ascii=False)
            cursor = c.execute(
                "INSERT INTO vault(token, user_id, category, digest, ciphertext, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (
                    token,
                    user_id,
                    cat.value,
                    digest,
                    self._seal(payload),
                    time.time(),
                ),
            )
            if cursor.rowcount == 1:
                return token
            existing = self._token_for(c, user_id, digest)  # another writer stored it first
            if existing is not None:
                return existing
        raise VaultError("could not allocate an unused vault token")

    def forget_user(self, conn: sqlite3.Connection | None, user_id: str) -> int:
        c = self._use(conn)
        return c.execute("DELETE FROM vault WHERE user_id = ?", (user_id,)).rowcount

    def delete_tokens(
        self, conn: sqlite3.Connection | None, user_id: str, tokens: Iterable[str]
    ) -> int:
        """Delete this user's tokens (another user's tokens are left alone)."""
        c = self._use(conn)
        wanted = sorted(set(tokens))
        deleted = 0
        for i in range(0, len(wanted), _IN_CHUNK):
            chunk = wanted[i : i + _IN_CHUNK]
            marks = ",".join("?" * len(chunk))
            deleted += c.execute(
                f"DELETE FROM vault WHERE user_id = ? AND token IN ({marks})", (user_id, *chunk)
            ).rowcount
        return deleted

    # -- reads ------------------------------------------------------------------------------------

    def get(self, conn: sqlite3.Connection | None, user_id: str, token: str) -> str | None:
        """The value behind ``token`` if ``user_id`` owns it; ``None`` if unknown or deleted."""
        if not TOKEN.fullmatch(token):
            return None
        c = self._use(conn)
        row = c.execute(
            "SELECT ciphertext FROM vault WHERE token = ? AND user_id = ?", (token, user_id)
        ).fetchone()
        if row is None:
            return None
        return self._open(row[0], user_id, token)[1]

    def entries(self, conn: sqlite3.Connection | None, user_id: str) -> list[VaultEntry]:
        """Everything vaulted for a user, decrypted (for the owner's export)."""
        c = self._use(conn)
        rows = c.execute(
            "SELECT token, ciphertext, created_at FROM vault WHERE user_id = ? "
            "ORDER BY created_at, token",
            (user_id,),
        ).fetchall()
        out = []
        for token, ciphertext, created_at in rows:
            category, value = self._open(ciphertext, user_id, token)
            out.append(VaultEntry(token, category, value, created_at))
        return out

    def check_key(self, conn: sqlite3.Connection | None = None) -> None:
        """Fail fast (``VaultKeyError``) when the key cannot read what is already stored."""
        c = self._use(conn)
        row = c.execute("SELECT ciphertext FROM vault LIMIT 1").fetchone()
        if row is not None:
            self._decrypt(row[0])

    # -- bound helpers for text.pii ---------------------------------------------------------------

    def putter(
        self, conn: sqlite3.Connection | None, user_id: str
    ) -> Callable[[PiiCategory, str], str]:
        """``vault_put`` for ``pii.scrub`` / ``apply_policy``, bound to one user."""
        return lambda category, value: self.put(conn, user_id, category, value)

    def getter(self, conn: sqlite3.Connection | None, user_id: str) -> Callable[[str], str | None]:
        """``vault_get`` for ``pii.restore``, bound to the owner: other users' tokens stay
        placeholders."""
        return lambda token: self.get(conn, user_id, token)

    # -- internals --------------------------------------------------------------------------------

    def _use(self, conn: sqlite3.Connection | None) -> sqlite3.Connection:
        return conn if conn is not None else self._connect()

    def _digest(self, user_id: str, category: PiiCategory, value: str) -> str:
        message = json.dumps([user_id, category.value, value], ensure_ascii=False).encode()
        return hmac.new(self._mac_key, message, hashlib.sha256).hexdigest()

    @staticmethod
    def _token_for(conn: sqlite3.Connection, user_id: str, digest: str) -> str | None:
        row = conn.execute(
            "SELECT token FROM vault WHERE user_id = ? AND digest = ?", (user_id, digest)
        ).fetchone()
        return None if row is None else str(row[0])

    def _seal(self, payload: str) -> bytes:
        return self._fernet.encrypt(payload.encode("utf-8"))

    def _decrypt(self, ciphertext: bytes) -> bytes:
        try:
            return self._fernet.decrypt(ciphertext)
        except InvalidToken as exc:
            raise VaultKeyError(
                "cannot decrypt vaulted PII: the vault key is not the one these values were "
                "stored with (check MADELEINE_VAULT_KEY or the store's vault.key)"
            ) from exc

    def _open(self, ciphertext: bytes, user_id: str, token: str) -> tuple[PiiCategory, str]:
        # The owner and token are sealed inside the ciphertext: a row moved to another user or
        # token in the database file is refused rather than served.
        owner, sealed_token, category, value = json.loads(self._decrypt(ciphertext))
        if owner != user_id or sealed_token != token:
            raise VaultError(f"vault row {token} does not belong where it is stored")
        return PiiCategory(category), str(value)


# -- key management -----------------------------------------------------------------------------


def load_key(store_dir: Path, configured: str | None) -> bytes:
    """The vault key: ``configured`` (MADELEINE_VAULT_KEY) wins; otherwise ``vault.key`` in the
    store directory, created once (mode 0600, atomically, so two processes opening a new store
    agree on one key). A blank ``configured`` counts as unset."""
    if configured is not None and configured.strip():
        key = configured.strip().encode("ascii", errors="replace")
        _fernet(key, "MADELEINE_VAULT_KEY")
        return key
    path = store_dir / KEY_FILE
    if not path.exists():
        _create_key_file(store_dir, path)
    return _read_key_file(path)


def _fernet(key: bytes, source: str, hint: str = "") -> Fernet:
    try:
        return Fernet(key)
    except (ValueError, TypeError) as exc:
        raise VaultKeyError(
            f"{source} is not a valid vault key: expected a Fernet key (32 url-safe "
            "base64-encoded bytes, e.g. from cryptography.fernet.Fernet.generate_key())" + hint
        ) from exc


def _read_key_file(path: Path) -> bytes:
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        log.warning("vault key file %s is readable by others (mode %o); chmod 600 it", path, mode)
    key = path.read_bytes().strip()
    _fernet(
        key,
        f"the key file {path}",
        "; restore the original file or set MADELEINE_VAULT_KEY (a new key cannot read values "
        "stored with the old one)",
    )
    return key


def _create_key_file(store_dir: Path, path: Path) -> None:
    """Write a new key to a private temp file, then hard-link it into place: the link fails
    if another process got there first, and nobody ever sees a half-written key."""
    store_dir.mkdir(parents=True, exist_ok=True)
    tmp = store_dir / f".{KEY_FILE}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        try:
            os.chmod(tmp, 0o600)  # the umask may only have removed bits; make it exact
            os.write(fd, Fernet.generate_key() + b"\n")
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # another process created the key first: use theirs
        except OSError:  # no hard links on this file system: best-effort rename instead
            if not path.exists():
                os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    with contextlib.suppress(OSError):
        dir_fd = os.open(store_dir, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
