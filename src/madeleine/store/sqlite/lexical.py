"""FTS5 queries scoped to one user: the scope token is part of every lexical match."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence


def scope_token(user_id: str) -> str:
    """The lexical-index token that scopes a document to its user (no raw id in the index)."""
    return "u" + hashlib.sha256(user_id.encode("utf-8")).hexdigest()[:24]


def any_match(columns: str, terms: Sequence[str]) -> str | None:
    """An FTS5 query for any of ``terms`` in ``columns`` (None when no term is left); unscoped:
    only for a table where the caller has checked that every row is the user's."""
    unique = list(dict.fromkeys(t for t in terms if t))
    if not unique:
        return None
    alternatives = " OR ".join('"' + t.replace('"', "") + '"' for t in unique)
    return f"{columns} : ({alternatives})"


def scoped_any_match(user_id: str, columns: str, terms: Sequence[str]) -> str | None:
    """An FTS5 query for any of ``terms`` in ``columns``, inside the user's scope (None when
    no term is left)."""
    match = any_match(columns, terms)
    return None if match is None else f'scope : "{scope_token(user_id)}" AND {match}'
