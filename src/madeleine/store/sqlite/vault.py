"""The PII vault table: values the policy keeps for their owner, encrypted at rest and
addressed by the tokens that stand in for them in indexes, logs and prompts.

Every method takes the transaction to use, so a put joins the caller's write transaction (the
event and the values it vaulted commit or roll back together). Only ciphertext and a keyed
digest (for dedupe) are stored (``store.crypto``); the plaintext never touches the file.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager

from madeleine.store.crypto import VaultCipher, VaultEntry, VaultError, new_token
from madeleine.store.records import Transaction
from madeleine.store.sqlite.connection import conn_of, immediate
from madeleine.text.pii import TOKEN, PiiCategory

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


class SQLiteVault:
    """The vault table; ``connect`` supplies a connection when a method is given no
    transaction."""

    def __init__(
        self,
        connect: Callable[[], sqlite3.Connection],
        cipher: VaultCipher,
        write: Callable[[], AbstractContextManager[sqlite3.Connection]] | None = None,
    ) -> None:
        self._connect = connect
        self._cipher = cipher
        self._write = write

    def _db_write(self) -> AbstractContextManager[sqlite3.Connection]:
        if self._write is not None:
            return self._write()
        return immediate(self._connect())

    def ensure_schema(self, tx: Transaction | None = None) -> None:
        """Create the table when used on its own (the store runs VAULT_SCHEMA at open)."""
        c = self._use(tx)
        for statement in VAULT_SCHEMA.split(";"):
            if statement.strip():
                c.execute(statement)

    # -- writes -----------------------------------------------------------------------------------

    def put(
        self,
        tx: Transaction | None,
        user_id: str,
        category: PiiCategory | str,
        value: str,
    ) -> str:
        """The token for this user's value; the same (user, category, value) gets the same
        token, so re-adding a message does not grow the vault."""
        cat = PiiCategory(category)
        c = self._use(tx)
        digests = self._cipher.digests(user_id, cat, value)
        digest = digests[0]
        existing = self._token_for(c, user_id, digests)
        if existing is not None:
            return existing
        for _ in range(_TOKEN_ATTEMPTS):
            token = new_token()
            cursor = c.execute(
                "INSERT INTO vault(token, user_id, category, digest, ciphertext, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (
                    token,
                    user_id,
                    cat.value,
                    digest,
                    self._cipher.seal(user_id, token, cat, value),
                    time.time(),
                ),
            )
            if cursor.rowcount == 1:
                return token
            existing = self._token_for(c, user_id, digests)  # another writer stored it first
            if existing is not None:
                return existing
        raise VaultError("could not allocate an unused vault token")

    def rotate(self, new_key: bytes, batch: int = 500) -> int:
        """Re-seal every value under ``new_key`` (and its dedupe digest), batch by batch, each
        batch its own transaction: the store stays usable throughout, since values are
        opened with the new key or the old. Returns the values re-sealed."""
        self._cipher = VaultCipher(new_key + b"," + b",".join(self._cipher.keys))
        done, last = 0, ""
        while True:
            with self._db_write() as conn:
                rows = conn.execute(
                    "SELECT token, user_id, ciphertext FROM vault WHERE token > ? "
                    "ORDER BY token LIMIT ?",
                    (last, batch),
                ).fetchall()
                for token, user_id, ciphertext in rows:
                    category, value = self._cipher.open(ciphertext, user_id, token)
                    digest = self._cipher.digest(user_id, category, value)
                    taken = conn.execute(
                        "SELECT 1 FROM vault WHERE user_id = ? AND digest = ? AND token != ?",
                        (user_id, digest, token),
                    ).fetchone()
                    conn.execute(
                        "UPDATE vault SET ciphertext = ?, digest = ? WHERE token = ?",
                        (
                            self._cipher.seal(user_id, token, category, value),
                            f"{digest}:{token}" if taken else digest,  # keep the index unique
                            token,
                        ),
                    )
            if not rows:
                break
            done += len(rows)
            last = str(rows[-1][0])
        # The old keys stay as fallbacks in this process only: a reader whose snapshot began
        # before the last batch committed still holds old ciphertext. New seals and digests
        # use the new key; other processes and the key file know only the new key.
        return done

    def forget_user(self, tx: Transaction | None, user_id: str) -> int:
        c = self._use(tx)
        return c.execute("DELETE FROM vault WHERE user_id = ?", (user_id,)).rowcount

    def delete_tokens(self, tx: Transaction | None, user_id: str, tokens: Iterable[str]) -> int:
        """Delete this user's tokens (another user's tokens are left alone)."""
        c = self._use(tx)
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

    def get(self, tx: Transaction | None, user_id: str, token: str) -> str | None:
        """The value behind ``token`` if ``user_id`` owns it; ``None`` if unknown or deleted."""
        if not TOKEN.fullmatch(token):
            return None
        c = self._use(tx)
        row = c.execute(
            "SELECT ciphertext FROM vault WHERE token = ? AND user_id = ?", (token, user_id)
        ).fetchone()
        if row is None:
            return None
        return self._cipher.open(row[0], user_id, token)[1]

    def entries(self, tx: Transaction | None, user_id: str) -> list[VaultEntry]:
        """Everything vaulted for a user, decrypted (for the owner's export)."""
        c = self._use(tx)
        rows = c.execute(
            "SELECT token, ciphertext, created_at FROM vault WHERE user_id = ? "
            "ORDER BY created_at, token",
            (user_id,),
        ).fetchall()
        out = []
        for token, ciphertext, created_at in rows:
            category, value = self._cipher.open(ciphertext, user_id, token)
            out.append(VaultEntry(token, category, value, created_at))
        return out

    def check_key(self, tx: Transaction | None = None) -> None:
        """Fail fast (``VaultKeyError``) when the key cannot read what is already stored."""
        c = self._use(tx)
        row = c.execute("SELECT ciphertext FROM vault LIMIT 1").fetchone()
        if row is not None:
            self._cipher.decrypt(row[0])

    # -- bound helpers for text.pii ---------------------------------------------------------------

    def putter(self, tx: Transaction | None, user_id: str) -> Callable[[PiiCategory, str], str]:
        """``vault_put`` for ``pii.scrub`` / ``apply_policy``, bound to one user."""
        return lambda category, value: self.put(tx, user_id, category, value)

    def getter(self, tx: Transaction | None, user_id: str) -> Callable[[str], str | None]:
        """``vault_get`` for ``pii.restore``, bound to the owner: other users' tokens stay
        placeholders."""
        return lambda token: self.get(tx, user_id, token)

    # -- internals --------------------------------------------------------------------------------

    def _use(self, tx: Transaction | None) -> sqlite3.Connection:
        return self._connect() if tx is None else conn_of(tx)

    @staticmethod
    def _token_for(conn: sqlite3.Connection, user_id: str, digests: list[str]) -> str | None:
        marks = ",".join("?" * len(digests))
        row = conn.execute(
            f"SELECT token FROM vault WHERE user_id = ? AND digest IN ({marks}) LIMIT 1",
            (user_id, *digests),
        ).fetchone()
        return None if row is None else str(row[0])
