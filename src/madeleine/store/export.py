"""What a user's export holds of the log and the episodes: the same on every backend."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from madeleine.store.records import StoredEpisode, StoredEvent


def exported_log(
    user_id: str, events: Sequence[StoredEvent], episodes: Sequence[StoredEpisode]
) -> dict[str, Any]:
    return {
        "user_id": user_id,
        "events": [
            {
                "id": e.id,
                "source_id": e.source_id,
                "session_id": e.session_id,
                "kind": e.kind,
                "role": e.role,
                "name": e.name,
                "content": e.content,
                "metadata": e.metadata,
                "occurred_at": e.occurred_at,
                "recorded_at": e.recorded_at,
                "external_id": e.external_id,
            }
            for e in events
        ],
        "episodes": [
            {
                "id": f"ep_{ep.id}",
                "kind": ep.kind,
                "session_id": ep.session_id,
                "speaker": ep.speaker,
                "prefix": ep.prefix,
                "text": ep.body,
                "context": ep.context,
                "source_ids": list(ep.source_ids),
                "occurred_at": ep.occurred_at,
            }
            for ep in episodes
        ],
    }


def exported_short_term(
    messages: Iterable[Sequence[Any]], agents: Iterable[Sequence[Any]]
) -> dict[str, Any]:
    """A user's short-term memory as every backend exports it. ``messages``: (session_id,
    position, role, content, pinned, created_at); ``agents``: (agent_id, state, data as a
    dict, entered_at)."""
    return {
        "short_term": [
            {
                "session_id": m[0],
                "position": m[1],
                "role": m[2],
                "content": m[3],
                "pinned": bool(m[4]),
                "created_at": m[5],
            }
            for m in messages
        ],
        "agents": [
            {"agent_id": a[0], "state": a[1], "data": a[2], "entered_at": a[3]} for a in agents
        ],
    }
