"""A ChatGPT data export (``conversations.json``) into passages.

Each conversation is a tree of messages (``mapping``: id → {message, parent, children});
the thread shown to the user is the path from ``current_node`` up to the root. System and
hidden messages are skipped; tool messages are summarized into the assistant's turn; images
and files become placeholders.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from madeleine.importers.passages import Passage, Turn, as_dict, clip, passages
from madeleine.inputs import parse_json

SOURCE = "chatgpt"
_TEXT_CHARS = 4_000
_TOOL_CHARS = 160


@dataclass(frozen=True, slots=True)
class Conversation:
    id: str
    title: str
    updated: float
    passages: list[Passage]


def load_export(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    data = parse_json(path.read_text(encoding="utf-8"), str(path))
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON list of conversations (conversations.json)")
    return [c for c in data if isinstance(c, dict)]


def parse_conversation(raw: dict[str, Any]) -> Conversation:
    conversation_id = str(raw.get("conversation_id") or raw.get("id") or raw.get("title") or "")
    if not conversation_id:
        raise ValueError("a conversation has neither an id nor a title")
    mapping = as_dict(raw.get("mapping"))
    turns = [t for t in (_turn(node) for node in _thread(mapping, raw.get("current_node"))) if t]
    updated = raw.get("update_time") or raw.get("create_time") or 0
    return Conversation(
        id=conversation_id,
        title=str(raw.get("title") or ""),
        updated=float(updated) if isinstance(updated, int | float) else 0.0,
        passages=list(passages(conversation_id, turns, SOURCE)),
    )


def _thread(mapping: dict[str, Any], current: object) -> list[dict[str, Any]]:
    """The visible thread, root first: from the current node up through the parents."""
    node_id = current if isinstance(current, str) and current in mapping else None
    if node_id is None:  # older exports: the last leaf in insertion order
        leaves = [k for k, v in mapping.items() if isinstance(v, dict) and not v.get("children")]
        node_id = leaves[-1] if leaves else None
    thread: list[dict[str, Any]] = []
    seen: set[str] = set()
    while node_id is not None and node_id not in seen and node_id in mapping:
        seen.add(node_id)
        node = mapping[node_id]
        if not isinstance(node, dict):
            break
        thread.append(node)
        parent = node.get("parent")
        node_id = parent if isinstance(parent, str) else None
    return list(reversed(thread))


def _turn(node: dict[str, Any]) -> Turn | None:
    message = node.get("message")
    if not isinstance(message, dict):
        return None
    author = as_dict(message.get("author"))
    role = author.get("role")
    metadata = as_dict(message.get("metadata"))
    if role not in ("user", "assistant", "tool") or metadata.get(
        "is_visually_hidden_from_conversation"
    ):
        return None
    text = _text(message.get("content"))
    if not text.strip():
        return None
    if role == "tool":
        name = author.get("name") or "tool"
        return Turn(
            "assistant",
            f"[{name}: {clip(text, _TOOL_CHARS)}]",
            str(message.get("id")),
            _when(message.get("create_time")),
        )
    return Turn(
        str(role),
        text[:_TEXT_CHARS],
        str(message.get("id") or node.get("id")),
        _when(message.get("create_time")),
    )


def _text(content: object) -> str:
    if not isinstance(content, dict):
        return ""
    parts = content.get("parts")
    if isinstance(parts, list):
        rendered = []
        for part in parts:
            if isinstance(part, str):
                rendered.append(part)
            elif isinstance(part, dict):
                kind = part.get("content_type") or "attachment"
                rendered.append(f"[{str(kind).replace('_', ' ')}]")
        return "\n".join(rendered)
    text = content.get("text")
    return text if isinstance(text, str) else ""


def _when(value: object) -> datetime | None:
    if isinstance(value, int | float) and value > 0:
        return datetime.fromtimestamp(float(value), UTC)
    return None
