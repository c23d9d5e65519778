"""The synchronous part of the write path: validate, scrub PII, append to the log.

Everything here happens before ``add`` returns; what is derived from the log (episodes,
facts, graph) is the worker's job. PII is replaced before anything is hashed, stored,
indexed or sent anywhere; vaulted values go in with the same transaction that a bad message
rolls back.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from madeleine.inputs import EVENT_DATA, require_id, require_json_object, require_text
from madeleine.records import AddResult
from madeleine.store.ports import Store
from madeleine.text.pii import Action, PiiCategory, scrub, scrub_tree
from madeleine.write.normalize import normalize_messages, render_event


class Intake:
    """``notify`` wakes the background indexer when something was added (or deleted)."""

    def __init__(
        self,
        store: Store,
        pii_policy: dict[PiiCategory, Action],
        *,
        max_message_chars: int,
        max_batch_messages: int,
        notify: Callable[[], None] | None = None,
    ) -> None:
        self._store = store
        self._policy = pii_policy
        self._max_chars = max_message_chars
        self._max_messages = max_batch_messages
        self._notify = notify

    def add(
        self,
        messages: object,
        user_id: object,
        session_id: object,
        timestamp: datetime | str | float | None,
        kind: str = "message",
    ) -> AddResult:
        user = require_id(user_id, "user_id")
        session = require_id(session_id, "session_id")
        with self._store.transaction() as tx:
            put = self._store.vault.putter(tx, user)
            events = normalize_messages(
                messages,
                user_id=user,
                session_id=session,
                timestamp=timestamp,
                now=datetime.now(UTC),
                max_chars=self._max_chars,
                max_messages=self._max_messages,
                scrub=lambda text: scrub(text, self._policy, put).text,
                scrub_tree=lambda value: scrub_tree(value, self._policy, put),
                kind=kind,
            )
        added, duplicates = self._store.append_events(events)
        if added:
            self.changed()
        return AddResult(added=added, duplicates=duplicates)

    def add_event(
        self,
        user_id: object,
        type: object,
        data: object,
        timestamp: datetime | str | float | None,
        session_id: object,
        id: object,
    ) -> AddResult:
        """A behavioural event (purchase, click, cart, …) as one message of the same log:
        one event schema, searchable by its rendered text, PII policy applied to its data."""
        require_id(user_id, "user_id")
        require_id(session_id, "session_id")
        if not isinstance(type, str) or not type.strip() or len(type) > 64:
            raise ValueError("type must be a non-empty str of at most 64 characters")
        require_text(type, "type")
        payload = require_json_object({} if data is None else data, "data", EVENT_DATA)
        # the data is scrubbed before it is rendered: its keys label its values
        # ({"phone": "5551234567"}), which the rendered line no longer shows as labels
        with self._store.transaction() as tx:
            put = self._store.vault.putter(tx, require_id(user_id, "user_id"))
            payload = scrub_tree(payload, self._policy, put)
        message: dict[str, Any] = {
            "role": "event",
            "name": type,
            "content": render_event(type, payload),
            "metadata": {"event_type": type, "data": payload},
        }
        if id is not None:
            message["id"] = id
        return self.add([message], user_id, session_id, timestamp, "action")

    def changed(self) -> None:
        if self._notify is not None:
            self._notify()
