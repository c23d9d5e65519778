"""Claude Code sessions (``~/.claude/projects/<project>/<session>.jsonl``) into passages.

Each line is one record: ``user`` and ``assistant`` records carry a ``message`` whose content
is text or a list of blocks (``text``, ``tool_use``, ``tool_result``, ``thinking``). User
records that only return tool results belong to the assistant's work and are summarized with
it; tool calls become one-line summaries (``[Bash: pytest -x]``, ``[Edit: src/app.py]``).
Meta records, sidechains (sub-agents) and summaries are skipped; malformed lines are counted,
never fatal. Every passage records its project (``project_name``: the working directory's
last part), which scopes the project facts drawn from it (``project.<project>.…``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePath
from typing import Any

from madeleine.importers.passages import Passage, Turn, as_dict, clip, passages
from madeleine.inputs import parse_json
from madeleine.text.timeparse import parse_timestamp

SOURCE = "claude-code"
_TOOL_ARGUMENT = {  # the input that says what a call did
    "Bash": "command",
    "Read": "file_path",
    "Write": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
    "Grep": "pattern",
    "Glob": "pattern",
    "WebFetch": "url",
    "WebSearch": "query",
    "Task": "description",
}
_SUMMARY_CHARS = 160
_TEXT_CHARS = 4_000


@dataclass(slots=True)
class ParsedFile:
    path: str
    passages: list[Passage] = field(default_factory=list)
    skipped_lines: int = 0
    cwd: str | None = None


def parse_file(path: Path) -> ParsedFile:
    """One session file into passages (run in a worker process: plain data in and out)."""
    parsed = ParsedFile(str(path))
    turns: list[Turn] = []
    session_id = path.stem
    with path.open("r", encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = parse_json(line, f"line {number}")
            except ValueError:  # not JSON, or nested too deep to read
                parsed.skipped_lines += 1
                continue
            if not isinstance(record, dict):
                parsed.skipped_lines += 1
                continue
            session_id = str(record.get("sessionId") or session_id)
            parsed.cwd = parsed.cwd or record.get("cwd")
            try:
                turn = _turn(record, number)
            except RecursionError:  # a tool input nested too deep to print: not a turn
                parsed.skipped_lines += 1
                continue
            if turn is not None:
                turns.append(turn)
    parsed.passages = list(passages(session_id, turns, SOURCE))
    return parsed


def _turn(record: dict[str, Any], line: int) -> Turn | None:
    """``line`` names a record that has no uuid, so its passage still has an id of its own."""
    kind = record.get("type")
    if kind not in ("user", "assistant") or record.get("isMeta") or record.get("isSidechain"):
        return None
    message = record.get("message")
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    texts: list[str] = []
    tool_only = True
    if isinstance(content, str):
        texts.append(content)
        tool_only = False
    elif isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            block_type = block.get("type")
            if block_type == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
                tool_only = False
            elif block_type == "tool_use":
                texts.append(_tool_call(block))
                tool_only = False
            elif block_type == "tool_result":
                texts.append(_tool_result(block))
    if not texts:
        return None
    # a user record that only hands back tool results is part of the assistant's work
    role = "assistant" if kind == "assistant" or tool_only else "user"
    text = (
        clip("\n".join(t for t in texts if t), _TEXT_CHARS)
        if role == "assistant"
        else ("\n".join(texts)[:_TEXT_CHARS])
    )
    source_id = str(record.get("uuid") or f"line-{line}")
    return Turn(role, text, source_id, _when(record.get("timestamp")))


def _tool_call(block: dict[str, Any]) -> str:
    name = str(block.get("name") or "tool")
    arguments = as_dict(block.get("input"))
    key = _TOOL_ARGUMENT.get(name)
    value = arguments.get(key) if key else None
    if value is None and arguments:
        value = json.dumps(arguments, ensure_ascii=False)
    return f"[{name}: {clip(str(value), _SUMMARY_CHARS)}]" if value else f"[{name}]"


def _tool_result(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, list):
        content = " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    status = "error" if block.get("is_error") else "result"
    text = clip(str(content or ""), _SUMMARY_CHARS)
    return f"[{status}: {text}]" if text else ""


def _when(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return parse_timestamp(value, "timestamp")
    except ValueError:
        return None


def project_name(path: str, cwd: str | None) -> str | None:
    """The project a session belongs to: the last part of its working directory, else of the
    folder Claude Code keeps it in (``-home-ana-shop`` → ``shop``)."""
    if cwd:
        name = PurePath(cwd.rstrip("/\\")).name
        if name:
            return name
    folder = Path(path).parent.name
    if not folder or folder == "projects":
        return None
    return folder.rstrip("-").rsplit("-", 1)[-1] or None


def session_files(directory: Path) -> list[Path]:
    if not directory.exists():
        raise FileNotFoundError(f"no such directory: {directory}")
    if directory.is_file():
        return [directory]
    return sorted(p for p in directory.rglob("*.jsonl") if p.is_file())
