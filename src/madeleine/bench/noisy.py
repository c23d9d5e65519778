"""``madeleine bench serve --noisy-neighbour``: does one tenant's flood slow another's searches?

One real ``madeleine serve`` process with its defaults (rate limit, fair search turns that
step aside for cheaper ones, query cost cap), two tenants with a key and a seeded user
each. First tenant B alone: its clients search for ``seconds`` (every query distinct, so
the embedding runs each time) — B's idle latencies. Then the same again while tenant A's
clients send long queries (``query_chars`` characters of the user's own sentences, each
one different) back to back — B under the flood, and what A got done meanwhile. The claim
to check: B's p95 under the flood stays within 2x of its idle p95.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import random
import secrets
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import numpy as np

from madeleine.bench.scale.synthetic import SyntheticUser, generate_user
from madeleine.bench.serve import Progress, _seed, free_port, start_server


@dataclass
class NoisyResult:
    seconds: float
    flood_clients: int
    quiet_clients: int
    query_chars: int
    seed_turns: int = 0
    idle: list[float] = field(default_factory=list)  # tenant B's search latencies, ms
    flooded: list[float] = field(default_factory=list)
    flood_answered: int = 0  # tenant A's long searches answered during B's flooded phase
    flood_refused: Counter[int] = field(default_factory=Counter)  # by status
    errors: Counter[str] = field(default_factory=Counter)  # tenant B's failures
    flood_errors: Counter[str] = field(default_factory=Counter)  # tenant A's
    machine: str = ""

    @property
    def ratio(self) -> float:
        """B's p95 under the flood over its idle p95."""
        if not self.idle or not self.flooded:
            return float("nan")
        return float(np.percentile(self.flooded, 95) / np.percentile(self.idle, 95))

    def table(self) -> str:
        rows = ["| tenant B searches | count | p50 ms | p95 ms |", "|---|---|---|---|"]
        for name, values in (("idle", self.idle), ("while A floods", self.flooded)):
            if values:
                p50, p95 = np.percentile(np.asarray(values), [50, 95])
                rows.append(f"| {name} | {len(values)} | {p50:.1f} | {p95:.1f} |")
        refused = ", ".join(f"{k}: {v}" for k, v in sorted(self.flood_refused.items())) or "none"
        errors = ", ".join(f"{k}: {v}" for k, v in sorted(self.errors.items())) or "none"
        flood_errors = (
            ", ".join(f"{k}: {v}" for k, v in sorted(self.flood_errors.items())) or "none"
        )
        return "\n".join(
            [
                f"madeleine bench serve --noisy-neighbour — {self.seconds:.0f} s per phase, "
                f"tenant B: {self.quiet_clients} client(s) of short searches; tenant A: "
                f"{self.flood_clients} clients of {self.query_chars:,}-character queries; "
                f"{self.seed_turns} turns seeded",
                *rows,
                f"B's p95 while A floods / idle p95: {self.ratio:.2f} (the claim: at most 2)",
                f"tenant A: {self.flood_answered} long searches answered "
                f"({self.flood_answered / self.seconds:.1f}/s); refused: {refused}; "
                f"errors: {flood_errors}",
                f"tenant B errors: {errors}",
                f"machine: {self.machine}",
            ]
        )


def long_query(user: SyntheticUser, chars: int, rng: random.Random) -> str:
    """``chars`` characters of the user's own sentences in a random order: a real-looking
    text that no earlier query repeats (so no cached embedding answers it)."""
    parts: list[str] = []
    size = 0
    while size <= chars:
        sentence = rng.choice(user.pool).split(": ", 1)[-1]
        parts.append(sentence)
        size += len(sentence) + 1
    return " ".join(parts)[:chars]


async def _searches(
    http: httpx.AsyncClient,
    user: SyntheticUser,
    query: Callable[[random.Random, int], str],
    until: Callable[[], bool],
    seed: int,
    latencies: list[float] | None,
    refused: Counter[int],
    errors: Counter[str],
    progress: Progress,
) -> int:
    """One closed-loop client; returns how many searches were answered. Refusals (429/503)
    are counted and their ``Retry-After`` honoured, as a well-behaved client would."""
    rng = random.Random(seed)
    answered = 0
    sent = 0
    while not until():
        sent += 1
        body = {"query": query(rng, sent), "user_id": user.user_id}
        started = time.perf_counter()
        try:
            response = await http.post("/v1/search", json=body)
        except httpx.HTTPError as exc:
            errors[type(exc).__name__] += 1
            continue
        elapsed = (time.perf_counter() - started) * 1000
        if response.status_code in (429, 503):
            refused[response.status_code] += 1
            await asyncio.sleep(float(response.headers.get("Retry-After", "1")))
            continue
        if response.status_code != 200:
            errors[f"search {response.status_code}"] += 1
            continue
        answered += 1
        if latencies is not None:
            latencies.append(elapsed)
        progress("requests", 1)
    return answered


def run_noisy_neighbour(
    *,
    seconds: float = 20.0,
    flood_clients: int = 4,
    quiet_clients: int = 1,
    query_chars: int = 2000,
    turns_per_user: int = 300,
    progress: Progress | None = None,
) -> NoisyResult:
    if seconds <= 0 or flood_clients < 1 or quiet_clients < 1 or turns_per_user < 10:
        raise ValueError("seconds, flood and quiet clients must be positive; turns >= 10")
    if query_chars < 1:
        raise ValueError(f"query_chars must be positive, got {query_chars}")
    report = progress or (lambda stage, n: None)
    noisy, quiet = (generate_user(turns_per_user, seed=s, queries=50) for s in (0, 1))
    noisy.user_id, quiet.user_id = "noisy-user", "quiet-user"
    keys = {"A": secrets.token_urlsafe(24), "B": secrets.token_urlsafe(24)}
    port = free_port()
    result = NoisyResult(seconds, flood_clients, quiet_clients, query_chars)
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="madeleine-noisy-") as directory:
        server = start_server(Path(directory), port, {keys["A"]: "tenant-a", keys["B"]: "tenant-b"})
        try:
            asyncio.run(_phases(port, keys, noisy, quiet, result, report))
        finally:
            server.terminate()
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                server.kill()
    end = os.getloadavg()
    result.machine = f"{os.cpu_count()} CPUs, load average {load[0]:.2f} -> {end[0]:.2f}"
    return result


async def _phases(
    port: int,
    keys: dict[str, str],
    noisy: SyntheticUser,
    quiet: SyntheticUser,
    result: NoisyResult,
    progress: Progress,
) -> None:
    def client(key: str) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            base_url=f"http://127.0.0.1:{port}",
            headers={"Authorization": f"Bearer {key}"},
            timeout=120,
            limits=httpx.Limits(max_connections=result.flood_clients + result.quiet_clients + 2),
        )

    numbers = itertools.count()

    def short(rng: random.Random, sent: int) -> str:
        # a number no query had before, in either phase: no cached embedding answers it
        return f"{rng.choice(quiet.queries).text} ({next(numbers)})"

    async with client(keys["A"]) as flood_http, client(keys["B"]) as quiet_http:
        result.seed_turns = await _seed(flood_http, [noisy], progress)
        result.seed_turns += await _seed(quiet_http, [quiet], progress)
        ignored: Counter[int] = Counter()

        async def measure(latencies: list[float]) -> None:
            deadline = time.monotonic() + result.seconds
            await asyncio.gather(
                *(
                    _searches(
                        quiet_http,
                        quiet,
                        short,
                        lambda: time.monotonic() > deadline,
                        seed,
                        latencies,
                        ignored,
                        result.errors,
                        progress,
                    )
                    for seed in range(result.quiet_clients)
                )
            )

        await measure(result.idle)
        stop = False
        answered = [0]

        def count(stage: str, n: int) -> None:
            answered[0] += n

        def long(rng: random.Random, sent: int) -> str:
            return long_query(noisy, result.query_chars, rng)

        flood = [
            asyncio.create_task(
                _searches(
                    flood_http,
                    noisy,
                    long,
                    lambda: stop,
                    1000 + seed,
                    None,
                    result.flood_refused,
                    result.flood_errors,
                    count,
                )
            )
            for seed in range(result.flood_clients)
        ]
        await asyncio.sleep(1.0)  # the flood is under way before B measures
        before = answered[0]
        await measure(result.flooded)
        result.flood_answered = answered[0] - before
        stop = True
        await asyncio.gather(*flood)
