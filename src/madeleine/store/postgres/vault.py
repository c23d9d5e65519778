"""The PII vault on PostgreSQL: ciphertext and a keyed digest per value, addressed by the
tokens that stand in for values in indexes, logs and prompts. A method given a transaction
joins it (the event and the values it vaulted commit together); without one it takes its
own."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from madeleine.store.crypto import VaultCipher, VaultEntry, VaultError, new_token
from madeleine.store.postgres.connection import Database, conn_of
from madeleine.store.records import Transaction
from madeleine.text.pii import TOKEN, PiiCategory

_TOKEN_ATTEMPTS = 8


class PgVault:
    def __init__(self, db: Database, cipher: VaultCipher) -> None:
        self._db = db
        self._cipher = cipher

    @contextmanager
    def _use(self, tx: Transaction | None) -> Iterator[Any]:
        if tx is not None:
            yield conn_of(tx)
            return
        with self._db.connect() as conn:
            yield conn

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
        digests = self._cipher.digests(user_id, cat, value)
        with self._use(tx) as conn:
            existing = _token_for(conn, user_id, digests)
            if existing is not None:
                return existing
            for _ in range(_TOKEN_ATTEMPTS):
                token = new_token()
                row = conn.execute(
                    """INSERT INTO vault(token, user_id, category, digest, ciphertext,
                       created_at) VALUES (%s, %s, %s, %s, %s, %s)
                       ON CONFLICT DO NOTHING RETURNING token""",
                    (
                        token,
                        user_id,
                        cat.value,
                        digests[0],
                        self._cipher.seal(user_id, token, cat, value),
                        time.time(),
                    ),
                ).fetchone()
                if row is not None:
                    return token
                existing = _token_for(conn, user_id, digests)  # another writer stored it
                if existing is not None:
                    return existing
        raise VaultError("could not allocate an unused vault token")

    def rotate(self, new_key: bytes, batch: int = 500) -> int:
        """Re-seal every value under ``new_key`` (and its digest), batch by batch, each batch
        its own transaction; values open with the new key or the old meanwhile."""
        self._cipher = VaultCipher(new_key + b"," + b",".join(self._cipher.keys))
        done, last = 0, ""
        while True:
            with self._db.connect() as conn:
                rows = conn.execute(
                    """SELECT token, user_id, ciphertext FROM vault WHERE token > %s
                       ORDER BY token LIMIT %s FOR UPDATE""",
                    (last, batch),
                ).fetchall()
                for token, user_id, ciphertext in rows:
                    category, value = self._cipher.open(bytes(ciphertext), user_id, token)
                    digest = self._cipher.digest(user_id, category, value)
                    taken = conn.execute(
                        "SELECT 1 FROM vault WHERE user_id = %s AND digest = %s AND token != %s",
                        (user_id, digest, token),
                    ).fetchone()
                    conn.execute(
                        "UPDATE vault SET ciphertext = %s, digest = %s WHERE token = %s",
                        (
                            self._cipher.seal(user_id, token, category, value),
                            f"{digest}:{token}" if taken else digest,
                            token,
                        ),
                    )
            if not rows:
                break
            done += len(rows)
            last = str(rows[-1][0])
        return done

    def forget_user(self, tx: Transaction | None, user_id: str) -> int:
        with self._use(tx) as conn:
            return int(conn.execute("DELETE FROM vault WHERE user_id = %s", (user_id,)).rowcount)

    def delete_tokens(self, tx: Transaction | None, user_id: str, tokens: Iterable[str]) -> int:
        """Delete this user's tokens (another user's tokens are left alone)."""
        wanted = sorted(set(tokens))
        if not wanted:
            return 0
        with self._use(tx) as conn:
            cursor = conn.execute(
                "DELETE FROM vault WHERE user_id = %s AND token = ANY(%s)", (user_id, wanted)
            )
            return int(cursor.rowcount)

    def get(self, tx: Transaction | None, user_id: str, token: str) -> str | None:
        """The value behind ``token`` if ``user_id`` owns it; None if unknown or deleted."""
        if not TOKEN.fullmatch(token):
            return None
        with self._use(tx) as conn:
            row = conn.execute(
                "SELECT ciphertext FROM vault WHERE token = %s AND user_id = %s",
                (token, user_id),
            ).fetchone()
        if row is None:
            return None
        return self._cipher.open(bytes(row[0]), user_id, token)[1]

    def entries(self, tx: Transaction | None, user_id: str) -> list[VaultEntry]:
        """Everything vaulted for a user, decrypted (for the owner's export)."""
        with self._use(tx) as conn:
            rows = conn.execute(
                """SELECT token, ciphertext, created_at FROM vault WHERE user_id = %s
                   ORDER BY created_at, token""",
                (user_id,),
            ).fetchall()
        out = []
        for token, ciphertext, created_at in rows:
            category, value = self._cipher.open(bytes(ciphertext), user_id, token)
            out.append(VaultEntry(token, category, value, created_at))
        return out

    def check_key(self, tx: Transaction | None = None) -> None:
        """Fail fast (``VaultKeyError``) when the key cannot read what is already stored."""
        with self._use(tx) as conn:
            row = conn.execute("SELECT ciphertext FROM vault LIMIT 1").fetchone()
        if row is not None:
            self._cipher.decrypt(bytes(row[0]))

    def putter(self, tx: Transaction | None, user_id: str) -> Callable[[PiiCategory, str], str]:
        return lambda category, value: self.put(tx, user_id, category, value)

    def getter(self, tx: Transaction | None, user_id: str) -> Callable[[str], str | None]:
        return lambda token: self.get(tx, user_id, token)


def _token_for(conn: Any, user_id: str, digests: list[str]) -> str | None:
    row = conn.execute(
        "SELECT token FROM vault WHERE user_id = %s AND digest = ANY(%s) LIMIT 1",
        (user_id, digests),
    ).fetchone()
    return None if row is None else str(row[0])
