"""``madeleine maintain``, ``timeline``, ``archive``, ``restore``, ``pin``, ``unpin``,
``undo`` and ``lifecycle-log``: the lifecycle from the command line."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from madeleine.api import Memory

Opener = Callable[..., Memory]


def register(commands: Any, open_store: Opener) -> None:
    maintain = commands.add_parser(
        "maintain",
        help="consolidate memories: merge duplicates, digest old sessions, archive what faded",
    )
    maintain.add_argument("--user", action="append", help="only this user (repeatable)")
    maintain.add_argument("--json", action="store_true", help="print the reports as JSON")
    maintain.set_defaults(handler=lambda args: _maintain(args, open_store))

    timeline = commands.add_parser("timeline", help="what happened to a user, in order")
    timeline.add_argument("--user", required=True)
    timeline.add_argument("--query", help="only what a search for this finds")
    timeline.add_argument("--start", help="from this time (ISO-8601)")
    timeline.add_argument("--end", help="until this time (ISO-8601)")
    timeline.add_argument("--limit", type=int, default=1000)
    timeline.add_argument("--include-archived", action="store_true")
    timeline.add_argument("--json", action="store_true")
    timeline.set_defaults(handler=lambda args: _timeline(args, open_store))

    for name, text in (
        ("archive", "take a turn (ep_…) or fact (fact_…) out of search, keeping it"),
        ("restore", "bring an archived turn or fact back"),
        ("pin", "keep a turn or fact from ever fading"),
        ("unpin", "let a pinned turn or fact fade again"),
    ):
        command = commands.add_parser(name, help=text)
        command.add_argument("item", help="ep_… or fact_…")
        command.add_argument("--user", required=True)
        if name == "archive":
            command.add_argument("--reason", default="by request")
        command.set_defaults(handler=lambda args, name=name: _edit(args, name, open_store))

    undo = commands.add_parser("undo", help="put back what a lifecycle run changed")
    undo.add_argument("run", help="the run id maintain, archive, pin or lifecycle-log printed")
    undo.add_argument("--user", required=True)
    undo.set_defaults(handler=lambda args: _undo(args, open_store))

    log = commands.add_parser("lifecycle-log", help="a user's lifecycle changes, newest first")
    log.add_argument("--user", required=True)
    log.add_argument("--run", help="only this run's changes")
    log.add_argument("--limit", type=int, default=50)
    log.add_argument("--json", action="store_true")
    log.set_defaults(handler=lambda args: _log(args, open_store))


def _maintain(args: argparse.Namespace, open_store: Opener) -> int:
    with open_store(args, background=False) as memory:
        memory.index_pending()  # what is queued is weighed too
        reports = memory.maintain(args.user)
    if args.json:
        print(json.dumps([r.to_dict() for r in reports], ensure_ascii=False, indent=2))
        return 0
    if not reports:
        print("no users in the store")
    for report in reports:
        counts = ", ".join(f"{n} {action}" for action, n in sorted(report.counts().items()))
        print(
            f"{report.user_id}: {counts or 'nothing to do'} in {report.seconds:.2f} s "
            f"(turns {report.before['turns']} -> {report.after['turns']}, facts "
            f"{report.before['facts']} -> {report.after['facts']}, digests "
            f"{report.after['digests']}); run {report.run}"
        )
        for note in report.notes:
            print(f"  note: {note}")
    return 0


def _timeline(args: argparse.Namespace, open_store: Opener) -> int:
    with open_store(args) as memory:
        found = memory.timeline(
            args.user,
            args.query,
            start=args.start,
            end=args.end,
            include_archived=args.include_archived,
            limit=args.limit,
        )
    if args.json:
        print(json.dumps(found.to_dict(), ensure_ascii=False, indent=2))
        return 0
    if not found.items:
        print("nothing in this period")
        return 0
    for group in found.groups:
        print(f"== {group.day}" + (f" · {group.session_id}" if group.session_id else ""))
        for item in group.items:
            marks = ""
            if item.superseded_by:
                marks += f" (superseded by {item.superseded_by})"
            if item.archived:
                marks += " (archived)"
            print(f"  {item.timestamp:%H:%M} {item.kind:<6} {item.id:<10} {item.text}{marks}")
    print("\n" + found.narrative)
    if found.truncated:
        print(f"(the latest {len(found.items)} items; --limit shows more)", file=sys.stderr)
    return 0


def _edit(args: argparse.Namespace, name: str, open_store: Opener) -> int:
    with open_store(args, background=False) as memory:
        if name == "archive":
            changed = memory.archive(args.item, user_id=args.user, reason=args.reason)
        else:
            changed = getattr(memory, name)(args.item, user_id=args.user)
        latest = memory.lifecycle_log(args.user, limit=1) if changed else []
    done = {"archive": "archived", "restore": "restored", "pin": "pinned", "unpin": "unpinned"}
    if not changed:
        print(f"{args.item}: already so, nothing changed")
    elif latest:
        print(f"{args.item}: {done[name]} (run {latest[0].run}; madeleine undo puts it back)")
    else:
        print(f"{args.item}: {done[name]}")
    return 0


def _undo(args: argparse.Namespace, open_store: Opener) -> int:
    with open_store(args, background=False) as memory:
        undone = memory.undo(args.run, user_id=args.user)
    if not undone:
        print(f"{args.run}: undone already, nothing left to put back")
        return 1
    print(f"undid {len(undone)} changes of {args.run}")
    return 0


def _log(args: argparse.Namespace, open_store: Opener) -> int:
    with open_store(args, background=False) as memory:
        entries = memory.lifecycle_log(args.user, run=args.run, limit=args.limit)
    if args.json:
        print(json.dumps([asdict(e) for e in entries], indent=2, ensure_ascii=False))
        return 0
    if not entries:
        print(f"no lifecycle changes for {args.user}" + (f" in {args.run}" if args.run else ""))
        return 0
    for entry in entries:
        at = datetime.fromtimestamp(entry.at, UTC)
        undone = "  (undone)" if entry.undone_at is not None else ""
        detail = ", ".join(f"{k}={v}" for k, v in entry.detail.items())
        what = f"{entry.action:<10} {entry.item:<10} {detail}"
        print(f"{at:%Y-%m-%d %H:%M}  {entry.run}  {what}{undone}")
    return 0
