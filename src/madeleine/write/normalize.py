"""Validation of ``add`` input into log events; every problem names the offending field
(the checks of each value are ``madeleine.inputs``, shared by every entry point)."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from madeleine.inputs import (
    MAX_ID_CHARS,
    METADATA,
    require_json_object,
    require_text,
)
from madeleine.store.records import NewEvent
from madeleine.text.timeparse import parse_timestamp, to_epoch

_KNOWN_KEYS = frozenset({"role", "content", "name", "id", "timestamp", "metadata"})


def normalize_messages(
    messages: object,
    *,
    user_id: str,
    session_id: str,
    timestamp: object,
    now: datetime,
    max_chars: int,
    max_messages: int,
    scrub: Callable[[str], str] | None = None,
    kind: str = "message",
    scrub_tree: Callable[[Any], Any] | None = None,
) -> list[NewEvent]:
    """Validate every message before anything is written, so a bad batch writes nothing.
    ``scrub`` (PII policy) rewrites each content, and every string in its metadata (or
    ``scrub_tree``, which reads each metadata key as the label of its value), before it is
    hashed or stored."""
    if isinstance(messages, Mapping):
        messages = [messages]
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
        raise TypeError(
            "messages must be a list of {'role': ..., 'content': ...} dicts, "
            f"got {type(messages).__name__}"
        )
    if len(messages) > max_messages:
        raise ValueError(f"messages has {len(messages)} items; at most {max_messages} per add()")
    default_time = now if timestamp is None else parse_timestamp(timestamp, "timestamp")
    seen: Counter[tuple[str, str, str | None, float]] = Counter()
    events: list[NewEvent] = []
    for index, message in enumerate(messages):
        where = f"messages[{index}]"
        if not isinstance(message, Mapping):
            raise TypeError(f"{where} must be a dict, got {type(message).__name__}")
        unknown = set(message) - _KNOWN_KEYS
        if unknown:
            raise ValueError(
                f"{where} has unknown keys {sorted(unknown)}; allowed: {sorted(_KNOWN_KEYS)}"
            )
        if "content" not in message:
            raise ValueError(f"{where} is missing 'content'")
        content = message["content"]
        if not isinstance(content, str):
            raise TypeError(f"{where}['content'] must be a str, got {type(content).__name__}")
        if not content.strip():
            raise ValueError(f"{where}['content'] is empty")
        if len(content) > max_chars:
            raise ValueError(
                f"{where}['content'] has {len(content):,} characters; the limit is {max_chars:,} "
                "(split long documents, or raise Settings.limits.max_message_chars)"
            )
        require_text(content, f"{where}['content']")
        role = message.get("role", "user")
        if not isinstance(role, str) or not role.strip() or len(role) > 64:
            raise TypeError(f"{where}['role'] must be a non-empty str of at most 64 characters")
        require_text(role, f"{where}['role']")
        name = message.get("name")
        if name is not None and (not isinstance(name, str) or len(name) > MAX_ID_CHARS):
            raise TypeError(f"{where}['name'] must be a str of at most {MAX_ID_CHARS} characters")
        if name is not None:
            require_text(name, f"{where}['name']")
        external_id = message.get("id")
        if external_id is not None:
            if isinstance(external_id, bool) or not isinstance(external_id, str | int):
                raise TypeError(f"{where}['id'] must be a str or int")
            external_id = str(external_id)
            if not external_id or len(external_id) > MAX_ID_CHARS:
                raise ValueError(f"{where}['id'] must be 1..{MAX_ID_CHARS} characters")
            require_text(external_id, f"{where}['id']")
        metadata = require_json_object(
            message.get("metadata") or {}, f"{where}['metadata']", METADATA
        )
        raw_time = message.get("timestamp")
        occurred = (
            default_time if raw_time is None else parse_timestamp(raw_time, f"{where}['timestamp']")
        )
        occurred_at = to_epoch(occurred)
        if scrub is not None:
            content = scrub(content)
        if scrub_tree is not None:
            metadata = scrub_tree(metadata)
        elif scrub is not None:
            metadata = map_strings(metadata, scrub)
        # Identical messages inside one call stay distinct; re-adding the call dedupes them all.
        key = (role, content, name, occurred_at)
        occurrence = seen[key]
        seen[key] += 1
        events.append(
            NewEvent(
                user_id=user_id,
                session_id=session_id,
                kind=kind,
                role=role,
                name=name,
                content=content,
                metadata=dict(metadata),
                occurred_at=occurred_at,
                content_hash=content_hash(session_id, role, name, content, occurred_at, occurrence),
                external_id=external_id,
            )
        )
    return events


def content_hash(
    session_id: str, role: str, name: str | None, content: str, occurred_at: float, occurrence: int
) -> str:
    payload: list[Any] = [session_id, role, name, content, round(occurred_at, 6), occurrence]
    return hashlib.sha256(json.dumps(payload, ensure_ascii=False).encode("utf-8")).hexdigest()


def render_event(event_type: str, data: Mapping[str, Any]) -> str:
    """A behavioural event as one line of text, so that it is searchable like a message:
    ``purchase: item=running shoes; price=89.9``."""
    parts = [f"{key}={_flat(value)}" for key, value in data.items()]
    return f"{event_type}: " + "; ".join(parts) if parts else event_type


def _flat(value: Any) -> str:
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}={_flat(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_flat(v) for v in value) + "]"
    return str(value)


def map_strings(value: Any, change: Callable[[str], str]) -> Any:
    """``change`` applied to every string inside nested dicts and lists."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, list | tuple):
        return [map_strings(v, change) for v in value]
    if isinstance(value, Mapping):
        return {k: map_strings(v, change) for k, v in value.items()}
    return value
