"""What a user's export holds of the log and the episodes: the same on every backend."""

from __future__ import annotations

from collections.abc import Sequence
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
