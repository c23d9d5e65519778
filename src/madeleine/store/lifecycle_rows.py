"""Rows of the lifecycle tables, the same on every backend: columns, row <-> record, and the
log query (each backend fills in its placeholder)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from madeleine.store.records import ItemState, LifecycleEntry

COLUMNS = (
    "item, importance, importance_by, pinned, archived_at, archive_reason, recalls, stability, "
    "last_recall"
)


def state_of(row: Sequence[Any]) -> ItemState:
    return ItemState(
        item=str(row[0]),
        importance=None if row[1] is None else float(row[1]),
        importance_by=row[2],
        pinned=None if row[3] is None else bool(row[3]),
        archived_at=None if row[4] is None else float(row[4]),
        archive_reason=row[5],
        recalls=int(row[6]),
        stability=float(row[7]),
        last_recall=None if row[8] is None else float(row[8]),
    )


def state_values(user_id: str, state: ItemState) -> tuple[Any, ...]:
    return (
        user_id,
        state.item,
        state.importance,
        state.importance_by,
        None if state.pinned is None else int(state.pinned),
        state.archived_at,
        state.archive_reason,
        state.recalls,
        state.stability,
        state.last_recall,
    )


def dumped(state: ItemState | None) -> str | None:
    return None if state is None else json.dumps(state.to_dict())


def entry_of(row: Sequence[Any]) -> LifecycleEntry:
    def loaded(value: Any) -> Any:
        return json.loads(value) if isinstance(value, str) else value

    return LifecycleEntry(
        id=int(row[0]),
        run=str(row[1]),
        at=float(row[2]),
        action=str(row[3]),
        item=str(row[4]),
        before=loaded(row[5]),
        after=loaded(row[6]),
        detail=loaded(row[7]) or {},
        undone_at=None if row[8] is None else float(row[8]),
    )


def entries_query(run: str | None, limit: int | None, mark: str) -> tuple[str, list[Any]]:
    """The log query after ``user_id = <mark>``: newest first, one run's, at most ``limit``;
    and its parameters after the user id."""
    sql = (
        "SELECT id, run, at, action, item, before, after, detail, undone_at "
        f"FROM lifecycle_log WHERE user_id = {mark}"
    )
    params: list[Any] = []
    if run is not None:
        sql += f" AND run = {mark}"
        params.append(run)
    sql += " ORDER BY id DESC"
    if limit is not None:
        sql += f" LIMIT {mark}"
        params.append(limit)
    return sql, params
