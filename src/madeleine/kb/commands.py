"""``madeleine kb …``: fill and query the knowledge base from the shell.

madeleine kb add hr-policies ./docs/ --description "HR rules" --acl group:hr
madeleine kb list [hr-policies]
madeleine kb search "how many leave days" --user u1 --group hr
madeleine kb delete hr-policies leave-2026
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from madeleine.api import Memory
from madeleine.kb.records import Principal

OpenMemory = Callable[..., Memory]
Bars = Callable[
    [dict[str, tuple[int | None, str]]], AbstractContextManager[Callable[[str, int], None]]
]


def register(commands: Any, open_memory: OpenMemory, bars: Bars) -> Any:
    """Add ``kb`` and its subcommands; returns the subcommand group (which takes --data)."""
    kb = commands.add_parser("kb", help="the knowledge base: add documents, list, search")
    group = kb.add_subparsers(title="kb commands", metavar="COMMAND")

    add = group.add_parser(
        "add", help="add a file or every .txt/.md/.html/.pdf under a folder (incremental)"
    )
    add.add_argument("collection")
    add.add_argument("path", type=Path)
    add.add_argument("--description", help="what the collection holds (used for routing)")
    add.add_argument("--source-type", default="official", help="official, faq, manual, web, …")
    add.add_argument("--acl", action="append", help="user:<id> or group:<name> (repeatable)")
    add.add_argument("--title", help="title of a single file (default: its own)")
    add.add_argument("--effective-from", help="ISO date the documents take effect")
    add.add_argument("--expires-at", help="ISO date the documents stop holding")
    add.add_argument("--no-wait", action="store_true", help="return before embedding is done")

    def run_add(args: argparse.Namespace) -> int:
        attributes: dict[str, Any] = {
            "source_type": args.source_type,
            "acl": args.acl,
            "effective_from": args.effective_from,
            "expires_at": args.expires_at,
        }
        if not args.path.exists():
            print(f"no file or folder at {args.path}", file=sys.stderr)
            return 1
        with open_memory(args, create=True, background=False) as memory:
            kb = memory.kb(args.collection, description=args.description)
            if args.path.is_dir():
                files = sum(1 for _ in _files(args.path))
                with bars({"documents": (files, "doc"), "embed": (None, "chunk")}) as tick:
                    report = kb.add_folder(
                        args.path, progress=lambda _: tick("documents", 1), **attributes
                    )
                    if not args.no_wait:
                        memory.index_pending(lambda n: tick("embed", n))
                print(
                    f"{args.collection}: {len(report.added)} added, {len(report.updated)} "
                    f"updated, {len(report.unchanged)} unchanged, {len(report.failed)} failed"
                )
                for doc_id, error in report.failed.items():
                    print(f"  failed {doc_id}: {error}", file=sys.stderr)
                return 1 if report.failed else 0
            stored = kb.add_document(args.path, title=args.title, **attributes)
            if not args.no_wait:
                with bars({"embed": (None, "chunk")}) as tick:
                    memory.index_pending(lambda n: tick("embed", n))
            reused = f", {stored.reused_vectors} already embedded" if stored.reused_vectors else ""
            print(
                f"{args.collection}/{stored.doc_id}: version {stored.version}, "
                f"{_count(stored.chunks, 'chunk')}{reused}"
            )
        return 0

    add.set_defaults(handler=run_add)

    listing = group.add_parser("list", help="collections, or the documents of one")
    listing.add_argument("collection", nargs="?")
    listing.add_argument("--json", action="store_true")

    def run_list(args: argparse.Namespace) -> int:
        with open_memory(args, background=False) as memory:
            if args.collection is None:
                rows = [c.to_dict() for c in memory.collections()]
                if args.json:
                    print(json.dumps(rows, ensure_ascii=False, indent=2))
                for row in [] if args.json else rows:
                    print(
                        f"{row['name']}: {_count(row['documents'], 'document')}, "
                        f"{_count(row['chunks'], 'chunk')} — {row['l0']}"
                    )
                if not rows and not args.json:
                    print("no collections (madeleine kb add NAME PATH)")
                return 0
            if not _exists(memory, args.collection):
                return 1
            documents = [d.to_dict() for d in memory.kb(args.collection).documents()]
        if args.json:
            print(json.dumps(documents, ensure_ascii=False, indent=2))
            return 0
        for d in documents:
            acl = ",".join(d["acl"]) or "public"
            print(f"{d['doc_id']} v{d['version']} [{d['source_type']}; {acl}] {d['l0']}")
        return 0

    listing.set_defaults(handler=run_list)

    search = group.add_parser("search", help="search the knowledge base as a principal")
    search.add_argument("query")
    search.add_argument("--user", help="the principal's user id")
    search.add_argument("--group", action="append", default=[], help="a group (repeatable)")
    search.add_argument("--collection", action="append", help="restrict to (repeatable)")
    search.add_argument("--limit", type=int, default=5)
    search.add_argument("--as-of", help="what held at this time (ISO-8601)")
    search.add_argument("--json", action="store_true")

    def run_search(args: argparse.Namespace) -> int:
        principal = Principal(args.user, args.group) if args.user or args.group else None
        with open_memory(args, background=False) as memory:
            if not all(_exists(memory, name) for name in args.collection or []):
                return 1
            hits = memory.search_kb(
                args.query,
                principal=principal,
                collections=args.collection,
                limit=args.limit,
                as_of=args.as_of,
            )
        if args.json:
            print(json.dumps([h.to_dict() for h in hits], ensure_ascii=False, indent=2))
            return 0
        if not hits:
            print(
                "nothing found in what this principal may read"
                if principal is not None
                else "nothing found in the public documents (--user/--group search as someone)"
            )
        for rank, hit in enumerate(hits, start=1):
            where = " > ".join(p for p in (hit.collection, hit.title, hit.section) if p)
            flag = "  [instruction-like text flagged]" if "injection" in hit.explain else ""
            print(f"{rank:>2}. {hit.score:.4f} {where} (v{hit.version}){flag}")
            print(f"    {' '.join(hit.text.split())[:300]}")
        return 0

    search.set_defaults(handler=run_search)

    delete = group.add_parser("delete", help="delete a document, or a whole collection")
    delete.add_argument("collection")
    delete.add_argument("doc_id", nargs="?", help="omit to delete the collection")

    def run_delete(args: argparse.Namespace) -> int:
        with open_memory(args, background=False) as memory:
            if not _exists(memory, args.collection):
                return 1
            if args.doc_id is None:
                print(f"deleted {memory.delete_collection(args.collection)} documents")
                return 0
            found = memory.kb(args.collection).delete_document(args.doc_id)
        print("deleted" if found else f"no document {args.doc_id!r} in {args.collection}")
        return 0 if found else 1

    delete.set_defaults(handler=run_delete)
    return group


def _exists(memory: Memory, name: str) -> bool:
    """Whether the collection exists; says so on stderr when it does not."""
    known = [c.name for c in memory.collections()]
    if name in known:
        return True
    print(f"no collection {name!r} (collections: {', '.join(known) or 'none'})", file=sys.stderr)
    return False


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _files(folder: Path) -> Any:
    from madeleine.kb.loaders import files_in

    return files_in(folder)
