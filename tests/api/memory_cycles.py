"""Run in a fresh process by ``test_bounded_memory.py``: open a store, add, search, close,
``cycles`` times, printing the process's resident memory after each cycle as JSON.

``python -m tests.api.memory_cycles <cycles> <shared|own> <location> [schema prefix]``:
``shared`` passes one embedder to every store, ``own`` passes none (each store asks the
process's model cache). ``location`` is a directory (a store per cycle inside it) or a
PostgreSQL URL (a schema per cycle, ``<prefix>_<n>``)."""

from __future__ import annotations

import gc
import json
import os
import sys
from pathlib import Path

from madeleine import Memory
from madeleine.config import Settings
from madeleine.embed.base import Embedder
from madeleine.embed.factory import load_embedder
from madeleine.store.backends import is_url


def resident_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def anonymous_bytes() -> int:
    """Resident memory not backed by a file: what a leak grows. The rest is mapped files,
    mostly the embedder's weights (paged in as texts use new tokens, up to the file's size,
    shared between processes and reclaimable)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no RssAnon in /proc/self/status")


def open_store(location: str, prefix: str, cycle: int, embedder: Embedder | None) -> Memory:
    if is_url(location):
        settings = Settings.from_env(dict(os.environ))
        settings.store.schema_name = f"{prefix}_{cycle}"
        return Memory(location, embedder=embedder, settings=settings)
    return Memory(Path(location) / f"store-{cycle}", embedder=embedder)


def main(argv: list[str]) -> None:
    cycles, mode, location = int(argv[0]), argv[1], argv[2]
    prefix = argv[3] if len(argv) > 3 else ""
    embedder = load_embedder() if mode == "shared" else None
    for cycle in range(cycles):
        memory = open_store(location, prefix, cycle, embedder)
        memory.add(
            [
                {"role": "user", "content": f"I moved to Busan in spring, note {cycle}"},
                {"role": "user", "content": f"지난주에 부산으로 이사했습니다 {cycle}"},
                {"role": "assistant", "content": "Noted: you live in Busan now."},
            ],
            user_id="u1",
        )
        assert memory.wait(120), "the messages were not indexed"
        assert memory.search("where do I live", user_id="u1"), "the search found nothing"
        memory.close()
        del memory
        gc.collect()
        print(json.dumps({"cycle": cycle, "rss": resident_bytes()}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
