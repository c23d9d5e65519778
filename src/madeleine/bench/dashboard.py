"""``madeleine bench dashboard``: what each dashboard view costs the server, and what the
browser downloads, on the demo memory (``madeleine demo``) with the configured embedder.

Each view's requests are the ones the page makes when the view opens; they run one after the
other through the real application (in process, no network), so a view's time is the sum of
its requests' server time. The bundle's size is counted raw and gzipped.
"""

from __future__ import annotations

import gzip
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from madeleine.embed.base import Embedder
from madeleine.server.dashboard_mount import BUNDLE

Request = tuple[str, str, dict[str, Any]]  # method, path, params or JSON body


def _views(user: str, card: str) -> dict[str, list[Request]]:
    query = "where does Alex live now and where does Alex work?"
    return {
        "users": [("GET", "/v1/users", {})],
        "profile": [
            ("GET", "/v1/profile", {"user_id": user}),
            ("GET", "/v1/alerts", {"user_id": user}),
        ],
        "card history + sources": [
            ("GET", f"/v1/facts/{card}/history", {"user_id": user}),
            ("GET", f"/v1/facts/{card}/sources", {"user_id": user}),
        ],
        "search explain + context": [
            ("POST", "/v1/search", {"query": query, "user_id": user, "limit": 10}),
            ("POST", "/v1/context", {"query": query, "user_id": user, "budget_tokens": 500}),
        ],
        "graph": [
            ("GET", "/v1/entities", {"user_id": user}),
            ("GET", "/v1/graph", {"user_id": user, "depth": 2, "limit": 80}),
        ],
        "timeline": [("GET", "/v1/timeline", {"user_id": user})],
        "knowledge base": [
            ("GET", "/v1/kb", {}),
            ("GET", "/v1/kb/travel-policy/documents", {}),
            ("POST", "/v1/kb/search", {"query": "hotel budget in Europe", "limit": 5}),
        ],
        "health": [
            ("GET", "/v1/status", {}),
            ("GET", "/v1/routing-log", {"user_id": user, "limit": 100}),
        ],
    }


@dataclass(slots=True)
class DashboardResult:
    repeats: int
    timings: dict[str, list[float]] = field(default_factory=dict)  # view -> ms per opening
    requests: dict[str, int] = field(default_factory=dict)  # view -> requests per opening
    bundle: dict[str, tuple[int, int]] = field(default_factory=dict)  # file -> (raw, gzip)
    seed_seconds: float = 0.0
    embedder: str = ""
    machine: str = ""

    def table(self) -> str:
        rows = ["| view | requests | p50 ms | p95 ms |", "|---|---|---|---|"]
        for name, values in self.timings.items():
            p50, p95 = np.percentile(np.asarray(values), [50, 95])
            rows.append(f"| {name} | {self.requests[name]} | {p50:.1f} | {p95:.1f} |")
        raw = sum(r for r, _ in self.bundle.values())
        packed = sum(g for _, g in self.bundle.values())
        return "\n".join(
            [
                f"madeleine bench dashboard — the demo memory, {self.repeats} openings per view, "
                f"embedder {self.embedder}, seeded in {self.seed_seconds:.1f} s",
                *rows,
                f"bundle: {len(self.bundle)} files, {raw / 1024:.0f} KiB "
                f"({packed / 1024:.0f} KiB gzipped)",
                f"machine: {self.machine}",
            ]
        )


def bundle_sizes(bundle: Path = BUNDLE) -> dict[str, tuple[int, int]]:
    if not bundle.is_dir():
        return {}  # not built: the views are timed all the same
    return {
        p.name: (p.stat().st_size, len(gzip.compress(p.read_bytes(), 9)))
        for p in sorted(bundle.iterdir())
        if p.is_file()
    }


def run_dashboard(
    repeats: int = 20,
    progress: Callable[[str, int], None] | None = None,
    embedder: Embedder | None = None,
) -> DashboardResult:
    """``embedder``: default, the configured one (as ``madeleine demo`` serves)."""
    from fastapi.testclient import TestClient

    from madeleine.server.app import ServerSettings, create_app
    from madeleine.server.demo import DEMO_USER, seed_demo
    from madeleine.server.keys import key_ring

    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be an int of at least 1, got {repeats!r}")
    result = DashboardResult(repeats=repeats, bundle=bundle_sizes())
    with tempfile.TemporaryDirectory(prefix="madeleine-bench-dashboard-") as workdir:
        data = Path(workdir)
        _, key = key_ring(data).create("demo", "bench", scopes=("read", "write", "admin"))
        # server time per view, not the per-key rate limit (every view on one key, back to back)
        app = create_app(ServerSettings(data=data, rate_limit=0), embedder=embedder)
        headers = {"Authorization": f"Bearer {key}"}
        with TestClient(app) as client:
            started = time.perf_counter()
            memory = app.state.tenants.memory("demo")
            seed_demo(memory)
            result.seed_seconds = time.perf_counter() - started
            result.embedder = str(memory.stats()["embedder"])
            card = next(c.id for c in memory.facts(DEMO_USER) if c.key == "location.home")
            for name, requests in _views(DEMO_USER, card).items():
                result.requests[name] = len(requests)
                for _ in range(repeats + 1):  # the first opening warms caches: not counted
                    t0 = time.perf_counter()
                    for method, path, payload in requests:
                        if method == "GET":
                            response = client.get(path, params=payload, headers=headers)
                        else:
                            response = client.post(path, json=payload, headers=headers)
                        if response.status_code != 200:
                            raise RuntimeError(f"{method} {path}: {response.text}")
                    result.timings.setdefault(name, []).append((time.perf_counter() - t0) * 1000)
                result.timings[name] = result.timings[name][1:]
                if progress is not None:
                    progress("views", 1)
    load = os.getloadavg()
    result.machine = f"{os.cpu_count()} CPUs, load average {load[0]:.2f}"
    return result
