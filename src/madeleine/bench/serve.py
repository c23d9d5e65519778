"""``madeleine bench serve``: a real ``madeleine serve`` process on loopback, driven by
concurrent clients with a mixed add/search load for a fixed time.

The server runs in its own process (so the load generator does not share its interpreter),
on a fresh data directory seeded with synthetic users; each client loops: with probability
``write_share`` it adds a turn, else it searches one of the users' questions.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from madeleine.bench.scale.synthetic import SyntheticUser, generate_user
from madeleine.store.backends import drop_namespace, namespaces, require_url, tenant_namespace

Progress = Callable[[str, int], None]


@dataclass(frozen=True)
class Verification:
    """Every acknowledged add looked up in the store after the run."""

    acknowledged: int
    found: int
    duplicated: int
    indexed_once: bool

    def line(self) -> str:
        return (
            f"acknowledged adds: {self.acknowledged}; in the store: {self.found}; "
            f"duplicated: {self.duplicated}; each indexed exactly once: "
            f"{'yes' if self.indexed_once else 'NO'}"
        )

    @property
    def ok(self) -> bool:
        return self.found == self.acknowledged and not self.duplicated and self.indexed_once


@dataclass
class ServeResult:
    seconds: float
    clients: int
    workers: int
    write_share: float
    seed_turns: int
    latencies: dict[str, list[float]] = field(default_factory=dict)
    errors: Counter[str] = field(default_factory=Counter)
    machine: str = ""
    index_workers: int = 0
    backend: str = "embedded SQLite"
    acknowledged: dict[str, list[str]] = field(default_factory=dict)  # user -> add ids
    verification: Verification | None = None

    def table(self) -> str:
        rows = [
            "| requests | count | req/s | p50 ms | p95 ms | p99 ms |",
            "|---|---|---|---|---|---|",
        ]
        everything = [v for values in self.latencies.values() for v in values]
        for name, values in [*sorted(self.latencies.items()), ("all", everything)]:
            if not values:
                continue
            p50, p95, p99 = np.percentile(np.asarray(values), [50, 95, 99])
            rows.append(
                f"| {name} | {len(values)} | {len(values) / self.seconds:.1f} | {p50:.1f} | "
                f"{p95:.1f} | {p99:.1f} |"
            )
        errors = sum(self.errors.values())
        detail = ", ".join(f"{k}: {v}" for k, v in sorted(self.errors.items())) or "none"
        return "\n".join(
            [
                f"madeleine bench serve — {self.clients} clients for {self.seconds:.0f} s, "
                f"{self.workers} API process(es), {self.index_workers} index worker(s), "
                f"{self.backend}, {self.write_share:.0%} adds, {self.seed_turns} turns seeded",
                *rows,
                f"errors: {errors} ({detail})",
                *([self.verification.line()] if self.verification else []),
                f"machine: {self.machine}",
            ]
        )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(
    data: Path,
    port: int,
    keys: dict[str, str],
    workers: int = 1,
    env: dict[str, str] | None = None,
) -> subprocess.Popen[bytes]:
    """``madeleine serve`` over ``data`` with ``keys`` ({key: tenant}), once /health answers.
    ``env`` adds variables (the store, Redis) to the server's environment."""
    env = {**os.environ, **(env or {}), "MADELEINE_API_KEYS": json.dumps(keys)}
    command = [sys.executable, "-m", "madeleine", "serve", "--data", str(data)]
    command += ["--port", str(port), "--workers", str(workers)]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("madeleine serve exited before it was ready")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return process
        except httpx.TransportError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError("madeleine serve did not answer /health within 120 s")


def _turns(user: SyntheticUser) -> list[dict[str, Any]]:
    return [
        {"role": t.role, "content": t.content, "timestamp": t.timestamp.isoformat()}
        for s in user.sessions
        for t in s.turns
    ]


async def _seed(http: httpx.AsyncClient, users: list[SyntheticUser], progress: Progress) -> int:
    seeded = 0
    for user in users:
        turns = _turns(user)
        for start in range(0, len(turns), 50):
            batch = turns[start : start + 50]
            body = {"user_id": user.user_id, "messages": batch, "session_id": "seed"}
            (await http.post("/v1/memories", json=body)).raise_for_status()
            seeded += len(batch)
            progress("seed", len(batch))
    (await http.post("/v1/wait", json={"timeout": 600})).raise_for_status()
    return seeded


async def _drive(
    http: httpx.AsyncClient,
    users: list[SyntheticUser],
    seconds: float,
    clients: int,
    write_share: float,
    result: ServeResult,
    progress: Progress,
) -> None:
    deadline = time.monotonic() + seconds
    latencies: dict[str, list[float]] = {"add": [], "search": []}

    async def client(number: int) -> None:
        rng = random.Random(number)
        sent = 0
        while time.monotonic() < deadline:
            user = rng.choice(users)
            message_id = ""
            if rng.random() < write_share:
                kind = "add"
                text = f"Note {rng.randrange(10**9)}: {rng.choice(user.pool).split(': ', 1)[-1]}"
                sent += 1
                message_id = f"load-{number}-{sent}"
                message = {"role": "user", "content": text, "id": message_id}
                call = http.post(
                    "/v1/memories", json={"user_id": user.user_id, "messages": [message]}
                )
            else:
                kind = "search"
                query = rng.choice(user.queries).text
                call = http.post("/v1/search", json={"query": query, "user_id": user.user_id})
            started = time.perf_counter()
            try:
                response = await call
                if response.status_code >= 300:
                    result.errors[f"{kind} {response.status_code}"] += 1
                    continue
            except httpx.HTTPError as exc:
                result.errors[f"{kind} {type(exc).__name__}"] += 1
                continue
            latencies[kind].append((time.perf_counter() - started) * 1000)
            if message_id:
                result.acknowledged.setdefault(user.user_id, []).append(message_id)
            progress("requests", 1)

    await asyncio.gather(*(client(i) for i in range(clients)))
    result.latencies = {k: v for k, v in latencies.items() if v}


def run_serve(
    *,
    seconds: float = 30.0,
    clients: int = 8,
    users: int = 4,
    turns_per_user: int = 300,
    write_share: float = 0.2,
    workers: int = 1,
    index_workers: int = 0,
    store: str | None = None,
    redis: str | None = None,
    progress: Progress | None = None,
) -> ServeResult:
    """``workers`` API processes; with ``index_workers`` the API only logs
    (``MADELEINE_BACKGROUND=false``) and that many ``madeleine worker`` processes index.
    ``store``: a postgresql:// URL (a fresh schema, dropped afterwards); ``redis``: a Redis
    URL for sessions and job notifications. After the load, every acknowledged add is looked
    up in the store: present once, and indexed exactly once."""
    if seconds <= 0 or clients < 1 or users < 1 or turns_per_user < 10 or workers < 1:
        raise ValueError("seconds, clients, users, workers must be positive; turns_per_user >= 10")
    if index_workers < 0:
        raise ValueError(f"index_workers must be 0 or more, got {index_workers}")
    if not 0.0 <= write_share <= 1.0:
        raise ValueError(f"write_share must be from 0 to 1, got {write_share}")
    if store is not None:
        require_url(store, "--store")
    report = progress or (lambda stage, n: None)
    people = [
        generate_user(turns_per_user, seed=seed, queries=50, pool_size=200) for seed in range(users)
    ]
    for seed, person in enumerate(people):
        person.user_id = f"bench-user-{seed}"
    key = secrets.token_urlsafe(24)
    port = free_port()
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="madeleine-serve-") as directory:
        deployment = _Deployment(Path(directory), store, redis, index_workers)
        servers: list[subprocess.Popen[bytes]] = []
        try:
            servers.append(
                start_server(Path(directory), port, {key: "bench"}, workers, deployment.env)
            )
            result = ServeResult(seconds, clients, workers, write_share, 0)
            result.index_workers = index_workers
            result.backend = deployment.describe()

            async def main() -> None:
                limits = httpx.Limits(max_connections=clients + 2)
                async with httpx.AsyncClient(
                    base_url=f"http://127.0.0.1:{port}",
                    headers={"Authorization": f"Bearer {key}"},
                    timeout=120,
                    limits=limits,
                ) as http:
                    result.seed_turns = await _seed(http, people, report)
                    servers.extend(deployment.start_workers())
                    await _drive(http, people, seconds, clients, write_share, result, report)

            asyncio.run(main())
            result.verification = deployment.verify(result.acknowledged, timeout=600)
        finally:
            for process in servers:
                process.terminate()
            for process in servers:
                try:
                    process.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    process.kill()
            deployment.clean_up()
    end = os.getloadavg()
    result.machine = f"{os.cpu_count()} CPUs, load average {load[0]:.2f} -> {end[0]:.2f}"
    return result


class _Deployment:
    """Where the benchmark's server keeps its data, and the worker processes beside it."""

    def __init__(
        self, data: Path, store: str | None, redis: str | None, index_workers: int
    ) -> None:
        from cryptography.fernet import Fernet

        self.data = data
        self.store = store
        self.redis = redis
        self.index_workers = index_workers
        self.schema = f"bench_{secrets.token_hex(4)}"
        self.vault_key = Fernet.generate_key().decode()
        # capacity, not the per-key limit: all the clients share one key
        self.env: dict[str, str] = {"MADELEINE_RATE_LIMIT": "0"}
        if store is not None:
            self.env |= {
                "MADELEINE_STORE": store,
                "MADELEINE_STORE_SCHEMA": self.schema,
                "MADELEINE_VAULT_KEY": self.vault_key,
            }
        if redis is not None:
            self.env |= {"MADELEINE_REDIS_URL": redis, "MADELEINE_REDIS_PREFIX": self.schema}
        if index_workers:
            self.env["MADELEINE_BACKGROUND"] = "false"

    def describe(self) -> str:
        store = "PostgreSQL" if self.store else "embedded SQLite"
        return store + (" + Redis" if self.redis else "")

    def start_workers(self) -> list[subprocess.Popen[bytes]]:
        where = self.store or str(self.data / "tenants" / "bench")
        command = [sys.executable, "-m", "madeleine", "worker", "--data", where]
        if self.store:
            command.append("--tenants")
        env = {**os.environ, **self.env}
        return [
            subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
            for _ in range(self.index_workers)
        ]

    def open(self) -> Any:
        from madeleine.api import Memory

        if self.store is None:
            return Memory(self.data / "tenants" / "bench", background=False)
        return Memory(
            self.store,
            store_schema=tenant_namespace(self.store, self.schema, "bench"),
            vault_key=self.vault_key,
            background=False,
        )

    def verify(self, acknowledged: dict[str, list[str]], timeout: float) -> Verification:
        """Wait for the outbox to drain (the workers' job, else this process's), then look
        every acknowledged add up."""
        with self.open() as memory:
            deadline = time.monotonic() + timeout
            # the server's indexers (its background thread, or the workers) finish first:
            # jobs they hold claimed would read as pending here
            while memory.stats()["pending_jobs"] and time.monotonic() < deadline:
                time.sleep(0.5)
            drained = memory.wait(timeout=max(1.0, deadline - time.monotonic()))
            found = 0
            duplicated = 0
            indexed_once = drained
            for user_id, ids in acknowledged.items():
                exported = memory.export_user(user_id)
                logged = Counter(e["external_id"] for e in exported["events"])
                found += sum(1 for i in ids if logged[i] >= 1)
                duplicated += sum(1 for i in ids if logged[i] > 1)
                sources = Counter(s for e in exported["episodes"] for s in e["source_ids"])
                indexed_once &= all(sources[i] == 1 for i in ids)
            integrity = memory.integrity()
        return Verification(
            acknowledged=sum(len(ids) for ids in acknowledged.values()),
            found=found,
            duplicated=duplicated,
            indexed_once=indexed_once
            and integrity["episodes"] == integrity["vectors"] == integrity["fts"],
        )

    def clean_up(self) -> None:
        if self.store is not None:
            for schema in namespaces(self.store, self.schema):
                drop_namespace(self.store, schema)
        if self.redis is not None:
            from madeleine.store.redis import connect

            client = connect(self.redis)
            keys = list(client.scan_iter(f"{self.schema}:*"))
            if keys:
                client.delete(*keys)
            client.close()
