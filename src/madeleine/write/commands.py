"""``madeleine worker`` and ``madeleine migrate``: the write path as its own process.

Run API processes with ``MADELEINE_BACKGROUND=false`` and as many ``madeleine worker``
processes as the load needs: on PostgreSQL they share the outbox (``FOR UPDATE SKIP
LOCKED``), each job indexed exactly once, a dead worker's batch taken over after its lease.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from madeleine.api import Memory
from madeleine.config import Settings
from madeleine.embed.base import Embedder
from madeleine.embed.factory import load_embedder, share_cores_with_other_processes
from madeleine.engine import job_signal
from madeleine.store import backends
from madeleine.store.ports import JobSignal

log = logging.getLogger(__name__)


def register(commands: Any) -> None:
    worker = commands.add_parser(
        "worker", help="index queued messages in a process of its own (until stopped)"
    )
    worker.add_argument(
        "--tenants",
        action="store_true",
        help="every tenant of the server (--data's tenants, or the store's tenant schemas)",
    )
    worker.add_argument("--once", action="store_true", help="index what is queued now, then exit")
    worker.set_defaults(handler=_cmd_worker)
    migrate = commands.add_parser(
        "migrate", help="apply pending PostgreSQL schema migrations (also done on start)"
    )
    migrate.add_argument(
        "--tenants", action="store_true", help="every tenant schema of the server too"
    )
    migrate.set_defaults(handler=_cmd_migrate)


def location(args: argparse.Namespace, settings: Settings) -> str | Path:
    """``--data``: a postgresql:// URL or a directory (its default is $MADELEINE_DATA, then
    $MADELEINE_STORE)."""
    return backends.as_location(str(args.data))


def _cmd_migrate(args: argparse.Namespace) -> int:
    settings = Settings.from_env(dict(os.environ))
    where = location(args, settings)
    if not isinstance(where, str):
        print("the embedded store migrates itself when it opens: nothing to do")
        return 0
    schemas = [settings.store.schema_name]
    if args.tenants:
        schemas += backends.namespaces(where, settings.store.schema_name)
    for schema in schemas:
        applied, latest = backends.migrate(where, schema)
        print(f"{schema}: {', '.join(applied) or 'nothing to apply'} (now at {latest})")
    return 0


def _cmd_worker(args: argparse.Namespace) -> int:
    settings = Settings.from_env(dict(os.environ))
    where = location(args, settings)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    opened: dict[str, Memory] = {}
    share_cores_with_other_processes()  # a worker runs beside API processes and other workers
    embedder = load_embedder(settings.embed.model)
    wakeups = job_signal(settings)
    if wakeups is not None:
        wakeups.wait(0)  # subscribe before the first look at the outbox: no signal is missed
    try:
        while not stop.is_set():
            for name, open_one in _stores(where, settings, embedder, args.tenants).items():
                if name not in opened:
                    opened[name] = open_one()
                    print(f"indexing {name}", flush=True)
            done = 0
            for name, memory in opened.items():
                jobs = memory.index_pending()
                done += jobs
                if jobs:
                    log.info("%s: indexed %d jobs", name, jobs)
            if args.once:
                break
            if not done:
                for name, memory in opened.items():
                    maintain_if_due(name, memory, settings.lifecycle.schedule_hours)
                _idle(stop, wakeups)
    finally:
        for memory in opened.values():
            memory.close()
        if wakeups is not None:
            wakeups.close()
    return 0


_MAINTAINED_KEY = "maintained_at"


def maintain_if_due(name: str, memory: Memory, every_hours: float) -> bool:
    """Run maintenance for every user of the store when the last run (by any worker, as the
    store records it) is ``every_hours`` old; True if it ran."""
    if every_hours <= 0:
        return False
    store = memory._open().store
    last = float(store.meta(_MAINTAINED_KEY) or 0.0)
    now = time.time()
    if now - last < every_hours * 3600:
        return False
    store.set_meta(_MAINTAINED_KEY, repr(now))  # claimed first: other workers skip this round
    reports = memory.maintain()
    changed = sum(len(r.changes) for r in reports)
    log.info("%s: maintained %d users, %d changes", name, len(reports), changed)
    print(f"maintained {name}: {len(reports)} users, {changed} changes", flush=True)
    return True


_POLL_SECONDS = 0.5  # without Redis: how often an idle worker looks at the outbox
_SIGNALLED_POLL_SECONDS = 5.0  # with Redis: notifications wake it; the poll finds expired leases


def _idle(stop: threading.Event, wakeups: JobSignal | None) -> None:
    """Wait for work: a Redis notification, a poll's interval, or a stop request."""
    if wakeups is None:
        stop.wait(_POLL_SECONDS)
        return
    deadline = time.monotonic() + _SIGNALLED_POLL_SECONDS
    while not stop.is_set() and time.monotonic() < deadline:
        if wakeups.wait(0.5):
            return


def _stores(
    where: str | Path, settings: Settings, embedder: Embedder, tenants: bool
) -> dict[str, Callable[[], Memory]]:
    """The stores this worker indexes, by a printable name (looked up again each round, so a
    new tenant is picked up while the worker runs)."""
    if not tenants:
        return {str(where): partial(_open_quiet, where, settings, embedder)}
    if isinstance(where, str):
        return {
            schema: partial(_open_quiet, where, settings, embedder, schema)
            for schema in backends.namespaces(where, settings.store.schema_name)
        }
    root = Path(where) / "tenants"
    found = sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
    return {str(p): partial(_open_quiet, p, settings, embedder) for p in found}


def _open_quiet(
    where: str | Path, settings: Settings, embedder: Embedder, schema: str | None = None
) -> Memory:
    """This process indexes in its own loop: no background thread besides. Every store
    shares the one embedder (the model is loaded once per process)."""
    scoped = settings.model_copy(deep=True)
    scoped.worker.background = False
    if schema is not None:
        scoped.store.schema_name = schema
    return Memory(where, settings=scoped, embedder=embedder)
