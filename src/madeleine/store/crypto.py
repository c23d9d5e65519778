"""Vault cryptography shared by every backend: the key, sealing values and dedupe digests.

A backend stores only what this module produces (ciphertext and a keyed digest), so the
plaintext of a vaulted value never reaches a database. A wrong key raises ``VaultKeyError``
instead of answering ``None``: ``None`` means "deleted", and a misconfigured
``MADELEINE_VAULT_KEY`` must not look like lost data.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import json
import logging
import os
import re
import secrets
import stat
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from madeleine.errors import MadeleineError
from madeleine.text.pii import PiiCategory

log = logging.getLogger(__name__)

KEY_FILE = "vault.key"


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


def split_keys(blob: bytes) -> list[bytes]:
    """A key setting may list several keys, newest first ("new,old"): values are sealed
    with the first and opened with any (a key rotation in progress)."""
    return [key for key in re.split(rb"[,\s]+", blob.strip()) if key]


class VaultCipher:
    """Fernet encryption of vaulted values, with the owner and token sealed inside.

    ``key`` may hold several keys, newest first: it seals with the first and opens with any
    (``MultiFernet``), which is what lets a key rotation run while the store is in use."""

    def __init__(self, key: bytes) -> None:
        keys = split_keys(key)
        if not keys:
            raise VaultKeyError("the vault key is empty")
        self.keys = keys
        self._fernet = MultiFernet([_fernet(k, "the vault key") for k in keys])
        # A separate subkey for dedupe digests, so the digest never reuses the cipher key.
        self._mac_keys = [
            hmac.new(k, b"madeleine vault dedupe v1", hashlib.sha256).digest() for k in keys
        ]

    def digest(self, user_id: str, category: PiiCategory, value: str) -> str:
        """Equal values of one user get one digest: re-adding a message does not grow the vault."""
        return self.digests(user_id, category, value)[0]

    def digests(self, user_id: str, category: PiiCategory, value: str) -> list[str]:
        """The value's digest under each key, newest first (a rotation may have left rows
        under an older one)."""
        message = json.dumps([user_id, category.value, value], ensure_ascii=False).encode()
        return [hmac.new(k, message, hashlib.sha256).hexdigest() for k in self._mac_keys]

    def seal(self, user_id: str, token: str, category: PiiCategory, value: str) -> bytes:
        payload = json.dumps([user_id, token, category.value, value], ensure_ascii=False)
        return self._fernet.encrypt(payload.encode("utf-8"))

    def open(self, ciphertext: bytes, user_id: str, token: str) -> tuple[PiiCategory, str]:
        # The owner and token are sealed inside the ciphertext: a row moved to another user or
        # token in the database is refused rather than served.
        owner, sealed_token, category, value = json.loads(self.decrypt(ciphertext))
        if owner != user_id or sealed_token != token:
            raise VaultError(f"vault row {token} does not belong where it is stored")
        return PiiCategory(category), str(value)

    def decrypt(self, ciphertext: bytes) -> bytes:
        try:
            return self._fernet.decrypt(ciphertext)
        except InvalidToken as exc:
            raise VaultKeyError(
                "cannot decrypt vaulted PII: the vault key is not the one these values were "
                "stored with (check MADELEINE_VAULT_KEY or the store's vault.key)"
            ) from exc


# -- key management -----------------------------------------------------------------------------


def load_key(store_dir: Path, configured: str | None) -> bytes:
    """The vault key: ``configured`` (MADELEINE_VAULT_KEY) wins; otherwise ``vault.key`` in the
    store directory, created once (mode 0600, atomically, so two processes opening a new store
    agree on one key). A blank ``configured`` counts as unset."""
    if configured is not None and configured.strip():
        key = configured.strip().encode("ascii", errors="replace")
        for one in split_keys(key):
            _fernet(one, "MADELEINE_VAULT_KEY")
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
    for one in split_keys(key) or [b""]:
        _fernet(
            one,
            f"the key file {path}",
            "; restore the original file or set MADELEINE_VAULT_KEY (a new key cannot read "
            "values stored with the old one)",
        )
    return key


def write_key_file(store_dir: Path, keys: list[bytes]) -> None:
    """Replace ``vault.key`` atomically (a private temp file renamed into place), one key a
    line, newest first."""
    path = store_dir / KEY_FILE
    tmp = store_dir / f".{KEY_FILE}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, b"\n".join(keys) + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


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
