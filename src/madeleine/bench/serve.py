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

Progress = Callable[[str, int], None]


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
                f"{self.workers} server worker(s), {self.write_share:.0%} adds, "
                f"{self.seed_turns} turns seeded",
                *rows,
                f"errors: {errors} ({detail})",
                f"machine: {self.machine}",
            ]
        )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(
    data: Path, port: int, keys: dict[str, str], workers: int = 1
) -> subprocess.Popen[bytes]:
    """``madeleine serve`` over ``data`` with ``keys`` ({key: tenant}), once /health answers."""
    env = {**os.environ, "MADELEINE_API_KEYS": json.dumps(keys)}
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
        while time.monotonic() < deadline:
            user = rng.choice(users)
            if rng.random() < write_share:
                kind = "add"
                text = f"Note {rng.randrange(10**9)}: {rng.choice(user.pool).split(': ', 1)[-1]}"
                call = http.post(
                    "/v1/memories",
                    json={"user_id": user.user_id, "messages": [{"role": "user", "content": text}]},
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
    progress: Progress | None = None,
) -> ServeResult:
    if seconds <= 0 or clients < 1 or users < 1 or turns_per_user < 10 or workers < 1:
        raise ValueError("seconds, clients, users, workers must be positive; turns_per_user >= 10")
    if not 0.0 <= write_share <= 1.0:
        raise ValueError(f"write_share must be from 0 to 1, got {write_share}")
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
        server = start_server(Path(directory), port, {key: "bench"}, workers)
        try:
            result = ServeResult(seconds, clients, workers, write_share, 0)

            async def main() -> None:
                limits = httpx.Limits(max_connections=clients + 2)
                async with httpx.AsyncClient(
                    base_url=f"http://127.0.0.1:{port}",
                    headers={"Authorization": f"Bearer {key}"},
                    timeout=120,
                    limits=limits,
                ) as http:
                    result.seed_turns = await _seed(http, people, report)
                    await _drive(http, people, seconds, clients, write_share, result, report)

            asyncio.run(main())
        finally:
            server.terminate()
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                server.kill()
    end = os.getloadavg()
    result.machine = f"{os.cpu_count()} CPUs, load average {load[0]:.2f} -> {end[0]:.2f}"
    return result
