"""``madeleine serve`` and ``madeleine keys …``: the server's command-line entry points."""

from __future__ import annotations

import argparse
import os
import socket
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from madeleine.server.grants import DEFAULT, SCOPES
from madeleine.server.keys import KeyRing, key_ring


def register(commands: Any) -> list[Any]:
    """Add the server's subcommands to the ``madeleine`` parser; returns the nested groups
    (whose commands also take ``--data``)."""
    serve = commands.add_parser(
        "serve", help="run the REST API (FastAPI + uvicorn) over --data, one store per tenant"
    )
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--workers", type=int, default=1, help="server processes (default 1)")
    serve.add_argument(
        "--rate-limit",
        type=float,
        default=None,
        help="requests per second per API key, 0: off (default: $MADELEINE_RATE_LIMIT or 50)",
    )
    serve.add_argument(
        "--max-body-mb",
        type=float,
        default=None,
        help="largest request body in MB (default: $MADELEINE_MAX_BODY_BYTES or 10 MB)",
    )
    serve.set_defaults(handler=_cmd_serve)

    demo = commands.add_parser(
        "demo",
        help="seed a demo user (alex) and a knowledge base into --data, then serve the "
        "dashboard with a fresh key: a populated dashboard in one command",
    )
    demo.add_argument("--host", default="127.0.0.1")
    demo.add_argument("--port", type=int, default=8000)
    demo.add_argument("--tenant", default="demo", help="the tenant to seed (default demo)")
    demo.add_argument("--user", default="alex", help="the demo user's id (default alex)")
    demo.add_argument(
        "--no-serve", action="store_true", help="seed and print the key, but do not serve"
    )
    demo.set_defaults(handler=_cmd_demo)

    mcp = commands.add_parser(
        "mcp", help="run the MCP server: stdio for one developer's agent, or --transport http"
    )
    mcp.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    mcp.add_argument("--host", default="127.0.0.1", help="with --transport http")
    mcp.add_argument("--port", type=int, default=8001, help="with --transport http")
    mcp.set_defaults(handler=_cmd_mcp)

    keys = commands.add_parser("keys", help="API keys of the server in --data")
    actions = keys.add_subparsers(title="actions")
    keys.set_defaults(handler=lambda args: keys.print_help() or 2)
    create = actions.add_parser(
        "create", help="create a key for a tenant, or a server operator key (shown once)"
    )
    owner = create.add_mutually_exclusive_group(required=True)
    owner.add_argument("--tenant", help="the tenant whose data the key reaches")
    owner.add_argument(
        "--operator",
        action="store_true",
        help="a server operator key: server-wide metrics, every tenant's keys and audit log, "
        "no tenant's data",
    )
    create.add_argument("--label", default="", help="a note to tell keys apart")
    create.add_argument(
        "--scope",
        action="append",
        help="read, write or admin (repeat or comma-separate; default: "
        f"{','.join(s for s in SCOPES if s in DEFAULT)})",
    )
    create.add_argument(
        "--collections", help="comma-separated KB collections the key may reach (default: all)"
    )
    create.add_argument(
        "--users", help="comma-separated end-user ids the key may reach (default: all)"
    )
    create.set_defaults(handler=_cmd_keys_create)
    listing = actions.add_parser("list", help="keys by id, tenant and first characters")
    listing.add_argument("--all", action="store_true", help="include revoked keys")
    listing.set_defaults(handler=_cmd_keys_list)
    revoke = actions.add_parser("revoke", help="revoke a key by its id or the key itself")
    revoke.add_argument("key", help="the key's id (from `keys list`) or the key")
    revoke.set_defaults(handler=_cmd_keys_revoke)
    return [actions]


def _ring(args: argparse.Namespace) -> KeyRing:
    return key_ring(Path(args.data))


def _names(value: str | None) -> list[str] | None:
    return None if value is None else [v.strip() for v in value.split(",") if v.strip()]


def _cmd_keys_create(args: argparse.Namespace) -> int:
    record, key = _ring(args).create(
        None if args.operator else args.tenant,
        args.label,
        scopes=DEFAULT if args.scope is None else _names(",".join(args.scope)) or [],
        collections=_names(args.collections),
        users=_names(args.users),
        operator=args.operator,
    )
    print(key)
    owner = "the server operator" if record.operator else f"tenant {record.tenant!r}"
    scopes = ", ".join(s for s in SCOPES if s in record.scopes)
    limits = "".join(
        f"; {field}: {', '.join(sorted(names))}"
        for field, names in (("collections", record.collections), ("users", record.users))
        if names is not None
    )
    print(
        f"key {record.id} for {owner} ({scopes}{limits}): keep it now, only its hash is stored",
        file=sys.stderr,
    )
    return 0


def _when(epoch: float | None) -> str:
    if epoch is None:
        return "-"
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M")


def _cmd_keys_list(args: argparse.Namespace) -> int:
    records = _ring(args).list(include_revoked=args.all)
    if not records:
        print("no keys (create one with `madeleine keys create --tenant NAME`)")
        return 0
    print(
        f"{'id':>4}  {'tenant':20}  {'key':12}  {'scopes':16}  {'created':16}  "
        f"{'revoked':16}  label"
    )
    for r in records:
        scopes = "operator" if r.operator else ",".join(s for s in SCOPES if s in r.scopes)
        limits = [
            f"{field}={','.join(sorted(names))}"
            for field, names in (("collections", r.collections), ("users", r.users))
            if names is not None
        ]
        print(
            f"{r.id:>4}  {r.tenant or '-':20}  {r.hint + '…':12}  {scopes:16}  "
            f"{_when(r.created_at):16}  {_when(r.revoked_at):16}  {' '.join([r.label, *limits])}"
        )
    return 0


def _cmd_keys_revoke(args: argparse.Namespace) -> int:
    if not _ring(args).revoke(args.key):
        raise ValueError(f"no active key {args.key!r} (see `madeleine keys list`)")
    print("revoked (running servers stop accepting it within 5 seconds)")
    return 0


def _cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from madeleine.embed.factory import share_cores_with_other_processes
    from madeleine.server.access_log import log_config
    from madeleine.server.app import ServerSettings, create_app

    data = Path(args.data).resolve()
    os.environ["MADELEINE_DATA"] = str(data)  # the workers build their app from it
    if args.rate_limit is not None:
        os.environ["MADELEINE_RATE_LIMIT"] = str(args.rate_limit)
    if args.max_body_mb is not None:
        os.environ["MADELEINE_MAX_BODY_BYTES"] = str(int(args.max_body_mb * 1024 * 1024))
    if args.workers < 1:
        raise ValueError(f"--workers must be at least 1, got {args.workers}")
    print(
        f"Madeleine on http://{args.host}:{args.port}/ (the dashboard; API docs at /docs)",
        file=sys.stderr,
    )
    if args.workers == 1:
        uvicorn.run(
            create_app(ServerSettings()), host=args.host, port=args.port, log_config=log_config()
        )
    else:
        share_cores_with_other_processes()  # inherited by uvicorn's worker processes
        uvicorn.run(
            "madeleine.server.app:app_from_env",
            factory=True,
            host=args.host,
            port=args.port,
            workers=args.workers,
            log_config=log_config(),
        )
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    import uvicorn

    from madeleine.server.app import ServerSettings, create_app
    from madeleine.server.demo import seed_demo

    data = Path(args.data).resolve()
    if not args.no_serve:
        _require_free_port(args.host, args.port)  # before anything is seeded or a key made
    os.environ["MADELEINE_DATA"] = str(data)
    data.mkdir(parents=True, exist_ok=True)
    # the dashboard's key: every scope (the operator views are the point of the demo)
    record, key = key_ring(data).create(args.tenant, "demo", scopes=SCOPES)
    app = create_app(ServerSettings())
    print(f"seeding user {args.user!r} of tenant {args.tenant!r} in {data} …", file=sys.stderr)
    with app.state.tenants.lease(args.tenant) as memory:
        counts = seed_demo(memory, args.user)
    print(
        f"{counts['messages_added']} messages added; {args.user} has {counts['facts']} current "
        f"cards ({counts['fact_versions']} versions); {counts['documents']} documents in the "
        "knowledge base",
        file=sys.stderr,
    )
    link = f"http://{args.host}:{args.port}/#key={key}"
    print(
        f"API key for tenant {args.tenant!r} (shown once; revoke it with "
        f"`madeleine keys revoke {record.id} --data {data}`):\n{key}"
    )
    if args.no_serve:
        print(
            f"serve it with `madeleine serve --data {data} --port {args.port}`, then open\n{link}"
        )
        return 0
    print(f"dashboard: {link}  (Ctrl-C stops the server)")
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


def _require_free_port(host: str, port: int) -> None:
    with socket.socket() as probe:
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise ValueError(
                f"cannot serve on {host}:{port} ({exc.strerror}): stop what runs there or "
                "choose another --port"
            ) from exc


def _cmd_mcp(args: argparse.Namespace) -> int:
    from madeleine.api import Memory
    from madeleine.config import Settings
    from madeleine.embed.factory import load_embedder
    from madeleine.server.app import ServerSettings
    from madeleine.server.limits import RateLimiter
    from madeleine.server.mcp_server import (
        Access,
        Admission,
        KeyVerifier,
        build_mcp,
        default_groups,
        default_user,
        tenant_memory,
    )
    from madeleine.server.tenants import Tenants

    data = Path(args.data)
    if args.transport == "stdio":
        with Memory(data) as memory:
            build_mcp(lambda: Access(memory), default_user(), groups=default_groups()).run("stdio")
        return 0
    settings = Settings.from_env(dict(os.environ))
    server = ServerSettings()
    tenants = Tenants(
        data,
        settings,
        load_embedder(settings.embed.model),
        max_open=server.open_tenant_bound(settings),
        idle_seconds=server.tenant_idle_seconds,
    )
    verifier = KeyVerifier(key_ring(data, server.api_keys))
    try:
        mcp = build_mcp(
            tenant_memory(tenants, verifier),
            default_user(),
            groups=default_groups(),
            host=args.host,
            port=args.port,
            token_verifier=verifier,
            admission=Admission(
                RateLimiter(server.rate_limit, server.rate_burst), server.search_scheduler()
            ),
        )
        mcp.run("streamable-http")
    finally:
        tenants.close()
    return 0
