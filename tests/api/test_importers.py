"""Imports of Claude Code sessions and ChatGPT exports: passages, tool summaries, increments."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from madeleine import Memory
from madeleine.embed.base import Embedder
from madeleine.importers.claude_code import parse_file
from tests.bench.test_cli_and_bench import _cli


def _record(kind: str, content: Any, uuid: str, minute: int, **extra: Any) -> str:
    return json.dumps(
        {
            "type": kind,
            "sessionId": extra.pop("session", "sess-1"),
            "uuid": uuid,
            "cwd": "/home/dev/soul",
            "timestamp": f"2025-06-01T10:{minute:02d}:00.000Z",
            "message": {"role": kind, "content": content},
            **extra,
        }
    )


def _session(path: Path, session: str, topic: str) -> None:
    lines = [
        _record(
            "user",
            f"The {topic} tests fail on CI, can you look?",
            f"{session}-u1",
            0,
            session=session,
        ),
        _record(
            "assistant",
            [
                {"type": "text", "text": "Let me run them."},
                {
                    "type": "tool_use",
                    "id": "t1",
                    "name": "Bash",
                    "input": {"command": "pytest -x tests/"},
                },
            ],
            f"{session}-a1",
            1,
            session=session,
        ),
        _record(
            "user",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": "1 failed: test_token_expiry",
                }
            ],
            f"{session}-r1",
            2,
            session=session,
        ),
        _record(
            "assistant",
            [
                {
                    "type": "tool_use",
                    "id": "t2",
                    "name": "Edit",
                    "input": {
                        "file_path": "src/auth/token_cache.py",
                        "old_string": "a",
                        "new_string": "b",
                    },
                },
                {"type": "text", "text": f"Fixed: TokenCache ignored expires_at in {topic}."},
            ],
            f"{session}-a2",
            3,
            session=session,
        ),
        _record(
            "user",
            "<command-name>/clear</command-name>",
            f"{session}-m",
            4,
            session=session,
            isMeta=True,
        ),
        "{not json",
        json.dumps({"type": "summary", "summary": "Fixed token expiry", "leafUuid": "x"}),
        _record("user", "thanks, ship it", f"{session}-u2", 5, session=session),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_a_session_file_becomes_passages_with_tool_calls_summarized(tmp_path: Path) -> None:
    _session(tmp_path / "s.jsonl", "sess-1", "auth")
    parsed = parse_file(tmp_path / "s.jsonl")
    assert parsed.skipped_lines == 1 and parsed.cwd == "/home/dev/soul"
    assert [p.turns for p in parsed.passages] == [2, 1]
    first = parsed.passages[0].text
    assert first.startswith("user: The auth tests fail on CI")
    assert "[Bash: pytest -x tests/]" in first and "[result: 1 failed: test_token_expiry]" in first
    assert "[Edit: src/auth/token_cache.py]" in first and "/clear" not in first
    assert parsed.passages[0].id == "claude-code:sess-1:sess-1-u1"


def test_claude_code_import_is_incremental_and_parallel(tmp_path: Path, embedder: Embedder) -> None:
    sessions = tmp_path / "projects" / "soul"
    sessions.mkdir(parents=True)
    for n, topic in enumerate(["auth", "billing", "search", "upload", "export"]):
        _session(sessions / f"s{n}.jsonl", f"sess-{n}", topic)
    with Memory(tmp_path / "m", embedder=embedder, background=False) as memory:
        stages: dict[str, int] = {}

        def progress(stage: str, n: int) -> None:
            stages[stage] = stages.get(stage, 0) + n

        report = memory.import_claude_code(
            tmp_path / "projects", user_id="dev", workers=2, progress=progress
        )
        assert (report.units, report.changed, report.added) == (5, 5, 10)
        assert report.skipped_lines == 5 and report.indexed == 10
        assert stages == {"parse": 5, "index": 10}
        hits = memory.search("which test failed in billing?", user_id="dev", limit=3)
        assert "billing" in hits[0].text and "test_token_expiry" in hits[0].text
        assert hits[0].source_ids == ["claude-code:sess-1:sess-1-u1"]

        again = memory.import_claude_code(tmp_path / "projects", user_id="dev")
        assert (again.changed, again.added, again.updated, again.indexed) == (0, 0, 0, 0)

        with (sessions / "s0.jsonl").open("a", encoding="utf-8") as handle:
            handle.write(
                _record("assistant", "Shipped in v2.3.", "sess-0-a9", 6, session="sess-0") + "\n"
            )
            handle.write(
                _record("user", "now the upload_worker crashes", "sess-0-u9", 7, session="sess-0")
                + "\n"
            )
        grown = memory.import_claude_code(tmp_path / "projects", user_id="dev")
        assert (grown.changed, grown.added, grown.updated, grown.unchanged_passages) == (1, 1, 1, 1)
        assert memory.stats()["events"] == 11
        shipped = memory.search("which version shipped the auth fix?", user_id="dev", limit=1)
        assert "v2.3" in shipped[0].text and "thanks, ship it" in shipped[0].text
        view = memory.graph("dev", around="TokenCache", depth=1)
        assert len([n for n in view["nodes"] if n["type"] == "passage"]) == 5


def _node(
    node_id: str, role: str | None, text: str, parent: str | None, children: list[str], when: float
) -> dict[str, Any]:
    message = None
    if role is not None:
        message = {
            "id": node_id,
            "author": {"role": role},
            "create_time": when,
            "content": {"content_type": "text", "parts": [text]},
            "metadata": {},
        }
    return {"id": node_id, "message": message, "parent": parent, "children": children}


def _export(path: Path, extra_turn: bool = False) -> None:
    mapping = {
        "root": _node("root", None, "", None, ["sys"], 0),
        "sys": _node("sys", "system", "You are ChatGPT.", "root", ["u1"], 1),
        "u1": _node("u1", "user", "Plan a 3-day trip to Kyoto in April.", "sys", ["a1"], 2),
        "a1": _node(
            "a1", "assistant", "Day 1: Fushimi Inari. Day 2: Arashiyama.", "u1", ["u2", "u2b"], 3
        ),
        "u2": _node("u2", "user", "Swap day 2 for Nara, please.", "a1", ["a2"], 4),
        "a2": _node("a2", "assistant", "Day 2 is now Nara with the deer park.", "u2", [], 5),
        "u2b": _node("u2b", "user", "An abandoned branch about Osaka.", "a1", [], 6),
    }
    current = "a2"
    if extra_turn:
        mapping["a2"]["children"] = ["u3"]
        mapping["u3"] = _node("u3", "user", "Add a ryokan near Gion.", "a2", [], 7)
        current = "u3"
    conversation = {
        "id": "conv-kyoto",
        "title": "Kyoto trip",
        "create_time": 2,
        "update_time": 7 if extra_turn else 5,
        "mapping": mapping,
        "current_node": current,
    }
    path.write_text(json.dumps([conversation]), encoding="utf-8")


def test_chatgpt_export_follows_the_visible_thread_and_updates(
    tmp_path: Path, embedder: Embedder
) -> None:
    export = tmp_path / "conversations.json"
    _export(export)
    with Memory(tmp_path / "m", embedder=embedder, background=False) as memory:
        report = memory.import_chatgpt(export, user_id="me")
        assert (report.units, report.changed, report.added) == (1, 1, 2)
        texts = [e["content"] for e in memory.export_user("me")["events"]]
        assert not any("Osaka" in t or "You are ChatGPT" in t for t in texts)
        hits = memory.search("which city replaced day 2?", user_id="me", limit=1)
        assert "Nara" in hits[0].text and hits[0].session_id == "conv-kyoto"
        assert memory.import_chatgpt(export, user_id="me").changed == 0
        broken = tmp_path / "broken.json"
        broken.write_text(json.dumps([{"mapping": {}}, "not a conversation"]), encoding="utf-8")
        skipped = memory.import_chatgpt(broken, user_id="me")
        assert (skipped.units, skipped.skipped_lines, skipped.added) == (1, 1, 0)
        _export(export, extra_turn=True)
        grown = memory.import_chatgpt(export, user_id="me")
        assert (grown.changed, grown.added, grown.unchanged_passages) == (1, 1, 2)


def test_import_commands(tmp_path: Path) -> None:
    sessions = tmp_path / "cc"
    sessions.mkdir()
    _session(sessions / "a.jsonl", "sess-a", "auth")
    data = tmp_path / "data"
    result = _cli("import", "claude-code", str(sessions), "--user", "dev", data=data)
    assert result.returncode == 0, result.stderr
    assert "claude-code: 1 units, 1 new or changed; passages +2 added" in result.stdout
    export = tmp_path / "conversations.json"
    _export(export)
    gpt = _cli("import", "chatgpt", str(export), data=data)
    assert gpt.returncode == 0 and "chatgpt: 1 units" in gpt.stdout
    missing = _cli("import", "claude-code", str(tmp_path / "nope"), data=data)
    assert missing.returncode == 2 and "no such directory" in missing.stderr


def test_the_same_session_in_two_files_loses_nothing(tmp_path: Path) -> None:
    """A backup copy inside the imported folder: its passages share ids with the original.
    Nothing may be merged away or reported as added twice, and rotating the backup must not
    delete the original's passages (issue 13)."""
    from tests.fakes import HashingEmbedder

    folder = tmp_path / "projects"
    folder.mkdir()
    _session(folder / "s.jsonl", "sess-1", "auth")
    (folder / "backup").mkdir()
    (folder / "backup" / "s.jsonl").write_text((folder / "s.jsonl").read_text())
    with Memory(tmp_path / "m", embedder=HashingEmbedder(), background=False) as memory:
        report = memory.import_claude_code(folder, user_id="dev", workers=1)
        assert (report.added, report.duplicates) == (2, 2)
        assert memory.stats()["events"] == 2
        # the backup is rotated: replaced by an unrelated session
        _session(folder / "backup" / "s.jsonl", "sess-9", "billing")
        rotated = memory.import_claude_code(folder, user_id="dev", workers=1)
        assert rotated.added == 2
        texts = [e["content"] for e in memory.export_user("dev")["events"]]
        assert sum("auth tests fail" in t for t in texts) == 1, "the original survives"
        assert sum("billing tests fail" in t for t in texts) == 1


def test_records_without_uuid_keep_a_passage_each(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    lines = [
        _record("user", f"question number {n} about the parser", "", n, session="sess-2")
        for n in range(6)
    ]
    path.write_text("\n".join(lines) + "\n")
    parsed = parse_file(path)
    ids = [p.id for p in parsed.passages]
    assert len(ids) == 6 and len(set(ids)) == 6
