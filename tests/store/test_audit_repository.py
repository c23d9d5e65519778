"""The audit repository's contract, on every backend: entries, the query's filters, and the
pseudonym an erased user's entries keep."""

from __future__ import annotations

import pytest

from madeleine.store.audit_rows import AuditEntry, AuditQuery, pseudonym
from madeleine.store.ports import Store

NOW = 1_700_000_000.0


def entry(
    at: float, user_id: str | None, key_id: str = "7", route: str = "/v1/memories"
) -> AuditEntry:
    return AuditEntry(at, key_id, "acme", user_id, "POST", route, 200, target="")


def test_entries_come_back_newest_first_and_filtered(store: Store) -> None:
    audit = store.audit
    ids = [
        audit.record(entry(NOW, "alice")),
        audit.record(entry(NOW + 1, "bob", key_id="8")),
        audit.record(entry(NOW + 2, "alice", route="/v1/forget")),
        audit.record(
            AuditEntry(NOW + 3, "8", "acme", None, "DELETE", "/v1/keys/{key_id}", 403, "key_id=9")
        ),
    ]
    assert ids == sorted(ids) and len(set(ids)) == 4
    every = audit.entries(AuditQuery())
    assert [e.id for e in every] == ids[::-1]
    assert every[0].target == "key_id=9" and every[0].status == 403 and every[0].user_id is None
    assert every[-1] == AuditEntry(
        NOW, "7", "acme", "alice", "POST", "/v1/memories", 200, "", ids[0]
    )
    assert [e.id for e in audit.entries(AuditQuery(user_id="alice"))] == [ids[2], ids[0]]
    assert [e.id for e in audit.entries(AuditQuery(key_id="8"))] == [ids[3], ids[1]]
    assert [e.id for e in audit.entries(AuditQuery(since=NOW + 1, until=NOW + 3))] == [
        ids[2],
        ids[1],
    ]
    assert [e.id for e in audit.entries(AuditQuery(before_id=ids[2], limit=1))] == [ids[1]]


def test_forgetting_a_user_keeps_their_entries_under_a_pseudonym(store: Store) -> None:
    store.audit.record(entry(NOW, "alice"))
    store.audit.record(entry(NOW, "bob"))
    store.forget_user("alice")
    users = [e.user_id for e in store.audit.entries(AuditQuery())]
    assert "alice" not in users and pseudonym("alice") in users and "bob" in users
    # the admin still finds them by the id they know
    assert len(store.audit.entries(AuditQuery(user_id="alice"))) == 1


@pytest.mark.parametrize("limit", [0, 10_001, True, 2.5])
def test_a_bad_limit_is_refused(limit: object) -> None:
    with pytest.raises((ValueError, TypeError), match="limit"):
        AuditQuery(limit=limit)  # type: ignore[arg-type]
