"""Runs the scale bench: builds the user's store, times ingest and search, gathers a ScaleResult."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from madeleine.api import Memory
from madeleine.bench.scale.embedder import PooledEmbedder
from madeleine.bench.scale.measure import Phase, peak_rss, rss_now, thread_settings
from madeleine.bench.scale.report import ScaleResult
from madeleine.bench.scale.synthetic import (
    USER_ID,
    SyntheticUser,
    Turn,
    generate_user,
    pool_count,
    warmup_queries,
)
from madeleine.embed.base import Embedder
from madeleine.embed.factory import load_embedder

Progress = Callable[[str, int], Any]
STAGES = ("real", "pool", "bulk", "queries")
_ADD_CHUNK_TURNS = 1000  # turns logged between two index_pending() calls
_POOL_BATCH = 64
_WARMUP_QUERIES = 5


def stage_totals(
    episodes: int, *, real: int, queries: int, full_embed: bool = False, pool_size: int = 2000
) -> dict[str, int]:
    """Totals of each progress stage, for progress bars."""
    real_turns = min(max(real, 0), episodes) if not full_embed else episodes
    bulk = episodes - real_turns
    return {
        "real": real_turns,
        "pool": pool_count(pool_size) if bulk else 0,
        "bulk": bulk,
        "queries": 2 * queries,  # the timed set, then the with/without-graph pairs
    }


def run_scale(
    episodes: int,
    *,
    real: int = 2000,
    workdir: Path | None = None,
    embedder: Embedder | str | None = None,
    queries: int = 200,
    seed: int = 0,
    full_embed: bool = False,
    progress: Progress | None = None,
    pool_size: int = 2000,
    noise: float = 0.25,
    memory_options: dict[str, Any] | None = None,
    reuse: bool = False,
    store: str | None = None,
) -> ScaleResult:
    """Build one synthetic user with ``episodes`` turns in a fresh store and measure it.

    The first ``real`` turns are embedded for real; the rest get pooled vectors unless
    ``full_embed``. ``workdir`` must be empty or missing (kept afterwards); without it a
    temporary directory is used and removed. With ``reuse`` a store this function built
    before in ``workdir`` with the same parameters is searched as it is; the real-path
    ingest is then measured in a scratch store. ``progress(stage, n)`` reports ``STAGES``.

    ``store``: a postgresql:// URL instead of a directory. The user is built in a schema named
    after the parameters (``scale_<hash>``), kept afterwards so that ``reuse`` can search it
    again; drop it with ``DROP SCHEMA … CASCADE`` when done.
    """
    manifest = {
        "episodes": episodes,
        "seed": seed,
        "pool_size": pool_size,
        "noise": noise,
        "full_embed": full_embed,
    }
    reusing = False
    postgres = _PostgresTarget(store, manifest) if store is not None else None
    if postgres is not None:
        reusing = postgres.check(reuse)
    elif workdir is not None and workdir.exists() and any(workdir.iterdir()):
        if not reuse:
            raise ValueError(
                f"workdir {workdir} is not empty; the benchmark needs a fresh store (or --reuse)"
            )
        built = _read_manifest(workdir)
        if built is None or built.get("manifest") != manifest:
            raise ValueError(
                f"workdir {workdir} does not hold a finished scale store built with "
                f"{manifest}; empty it or pass the same parameters"
            )
        reusing = True
    load_start = os.getloadavg()
    started = time.perf_counter()
    user = generate_user(episodes, seed=seed, queries=queries, pool_size=pool_size)
    generate_seconds = time.perf_counter() - started
    real_embedder = (
        embedder
        if embedder is not None and not isinstance(embedder, str)
        else load_embedder(embedder or "auto")
    )
    pooled = PooledEmbedder(real_embedder, user.base_of, noise=noise, seed=seed)
    totals = stage_totals(
        episodes, real=real, queries=queries, full_embed=full_embed, pool_size=pool_size
    )
    directory = workdir or Path(tempfile.mkdtemp(prefix="madeleine-scale-"))
    rss_baseline = rss_now()
    options = {"background": False, **(memory_options or {})}
    location: Path | str = directory
    if postgres is not None:
        location = postgres.url
        options |= postgres.options(postgres.schema)
    report = progress or (lambda stage, n: None)
    turns = [(s.id, t) for s in user.sessions for t in s.turns]
    pooled.recorded = []
    if reusing:
        real_phase = _scratch_ingest(pooled, turns[: totals["real"]], options, report, postgres)
    try:
        with Memory(location, embedder=pooled, **options) as memory:
            if not reusing:
                real_phase = _ingest(memory, turns[: totals["real"]], "real", report)
            embed_alone = _embed_alone(real_embedder, pooled.recorded)
            pooled.recorded = None
            pool_seconds = 0.0
            if reusing:
                bulk_phase = Phase("bulk")
                built = (
                    postgres.built(memory) if postgres is not None else _read_manifest(directory)
                ) or {}
                pool_seconds = float(built.get("pool_seconds", 0.0))
            elif totals["pool"]:
                t0 = time.perf_counter()
                vectors = np.empty((len(user.pool), pooled.dim), dtype=np.float32)
                for start in range(0, len(user.pool), _POOL_BATCH):
                    batch = user.pool[start : start + _POOL_BATCH]
                    vectors[start : start + len(batch)] = real_embedder.embed_passages(batch)
                    report("pool", len(batch))
                pooled.set_pool(vectors)
                pool_seconds = time.perf_counter() - t0
            fallbacks_before = pooled.embedded
            if not reusing:
                bulk_phase = _ingest(memory, turns[totals["real"] :], "bulk", report)
            bulk_fallbacks = pooled.embedded - fallbacks_before if totals["pool"] else 0
            del turns
            if not reusing and postgres is not None:
                postgres.finish(memory, pool_seconds)
            elif not reusing and workdir is not None:
                _write_manifest(directory, manifest, pool_seconds)
            stored = memory.stats()
            integrity = memory.integrity()
            rss_after_ingest = rss_now()
            search = _search(memory, user, real_embedder, report)
            rss_after_search = rss_now()
            # the bench's one reach into Memory internals: the graph's size in memory
            graph = memory._engine.searcher.graph_footprint(USER_ID)
            threshold = memory.settings.store.ann_threshold
        ann_dir = directory / "ann"
        ann_bytes = sum(p.stat().st_size for p in ann_dir.glob("*") if p.is_file()) or int(
            stored.get("ann_bytes", 0)  # PostgreSQL: the HNSW index's size
        )
    finally:
        if workdir is None:
            shutil.rmtree(directory, ignore_errors=True)
    consistent = (
        integrity["episodes"] == integrity["vectors"] == integrity["fts"] == episodes
        and integrity["orphan_episodes"] == 0
        and integrity["events_without_episode"] == 0
    )
    notes = []
    if postgres is not None:
        notes.append(
            f"Built in PostgreSQL schema {postgres.schema} (kept for --reuse; drop it with "
            f"DROP SCHEMA {postgres.schema} CASCADE). The ANN size is the HNSW index's."
        )
    if reusing:
        notes.append(
            f"The store in {directory} was built by an earlier run and reused as it was; "
            "the real-path ingest was measured in a scratch store."
        )
    notes += [
        "Search latency is measured for real: queries are embedded by the real embedder and "
        "run through the full read path on the stored data.",
    ]
    if bulk_phase.turns and not full_embed:
        notes.append(
            f"Only the first {real_phase.turns:,} turns were embedded for real. The other "
            f"{bulk_phase.turns:,} went through the same write path with pooled vectors (their "
            f"base sentence's real embedding + Gaussian noise of norm {noise}), so their rate "
            "excludes embedding; at the real-path rate they would take "
            f"~{bulk_phase.turns / real_phase.rate / 60:.0f} min more."
            if real_phase.turns and real_phase.rate
            else "Turns got pooled vectors; their rate excludes embedding."
        )
    return ScaleResult(
        episodes=episodes,
        sessions=len(user.sessions),
        stored=stored,
        consistent=consistent,
        embedder=real_embedder.name,
        dim=real_embedder.dim,
        seed=seed,
        full_embed=full_embed,
        generate_seconds=generate_seconds,
        real=real_phase,
        bulk=bulk_phase,
        pool_texts=len(user.pool) if totals["pool"] else 0,
        pool_seconds=pool_seconds,
        bulk_fallbacks=bulk_fallbacks,
        first_query_ms=search.first_ms,
        latencies_ms=search.latencies,
        stage_ms=search.stages,
        query_embed_ms=search.embed_ms,
        planted=search.planted,
        planted_found=search.found,
        ann_used=int(stored.get("vectors", 0)) >= threshold and ann_bytes > 0,
        ann_threshold=threshold,
        ann_bytes=ann_bytes,
        db_bytes=int(stored.get("database_bytes", 0)),
        rss_baseline=rss_baseline,
        rss_after_ingest=rss_after_ingest,
        rss_after_search=rss_after_search,
        rss_peak=peak_rss(),
        cpus=os.cpu_count() or 1,
        load=(load_start[0], os.getloadavg()[0]),
        threading=thread_settings(),
        notes=notes,
        graph=graph,
        graph_cost_ms=search.graph_cost,
        embed_alone=embed_alone,
        reused=reusing,
        backend="SQLite" if postgres is None else "PostgreSQL",
    )


_MANIFEST = "scale.json"


class _PostgresTarget:
    """The scale user on PostgreSQL: a schema named after the build's parameters, whose
    manifest (written last) says the build finished."""

    def __init__(self, url: str, manifest: dict[str, Any]) -> None:
        from madeleine.store.backends import require_url

        self.url = require_url(url, "--store")
        self.manifest = manifest
        digest = hashlib.sha256(json.dumps(manifest, sort_keys=True).encode()).digest()
        self.schema = f"scale_{digest.hex()[:10]}"
        # the benchmark's synthetic user holds no PII: a key derived from the schema lets a
        # later --reuse open the vault without keeping a key file anywhere
        self._vault_key = base64.urlsafe_b64encode(digest).decode()

    def options(self, schema: str) -> dict[str, Any]:
        return {"store_schema": schema, "vault_key": self._vault_key}

    def check(self, reuse: bool) -> bool:
        """True when a finished build is there to reuse; an error when a build is there but
        may not (or cannot) be reused."""
        import psycopg

        with psycopg.connect(self.url) as conn:
            exists = conn.execute(
                "SELECT 1 FROM pg_namespace WHERE nspname = %s", (self.schema,)
            ).fetchone()
            if exists is None:
                return False
            row = conn.execute(
                f"SELECT value FROM {self.schema}.meta WHERE key = 'scale_manifest'"
            ).fetchone()
        if row is None:
            raise ValueError(
                f"schema {self.schema} holds an unfinished build; drop it "
                f"(DROP SCHEMA {self.schema} CASCADE) and run again"
            )
        if not reuse:
            raise ValueError(
                f"schema {self.schema} already holds this build; pass --reuse to search it "
                f"again, or drop it (DROP SCHEMA {self.schema} CASCADE)"
            )
        return True

    def built(self, memory: Memory) -> dict[str, Any] | None:
        raw = memory._engine.store.meta("scale_manifest")
        return None if raw is None else dict(json.loads(raw))

    def finish(self, memory: Memory, pool_seconds: float) -> None:
        record = {"manifest": self.manifest, "pool_seconds": pool_seconds}
        memory._engine.store.set_meta("scale_manifest", json.dumps(record))


def _read_manifest(directory: Path) -> dict[str, Any] | None:
    try:
        loaded = json.loads((directory / _MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    return loaded if isinstance(loaded, dict) else None


def _write_manifest(directory: Path, manifest: dict[str, Any], pool_seconds: float) -> None:
    record = {"manifest": manifest, "pool_seconds": pool_seconds}
    directory.mkdir(parents=True, exist_ok=True)  # a PostgreSQL store keeps no files here
    (directory / _MANIFEST).write_text(json.dumps(record, indent=2) + "\n")


def _scratch_ingest(
    pooled: PooledEmbedder,
    turns: list[tuple[str, Turn]],
    options: dict[str, Any],
    report: Progress,
    postgres: _PostgresTarget | None = None,
) -> Phase:
    """The real-path ingest in a throwaway store (the reused store already holds the turns),
    on the same backend."""
    if postgres is not None:
        from madeleine.store.backends import drop_namespace

        scratch_schema = postgres.schema + "_real"
        drop_namespace(postgres.url, scratch_schema)
        scoped = options | postgres.options(scratch_schema)
        try:
            with Memory(postgres.url, embedder=pooled, **scoped) as memory:
                return _ingest(memory, turns, "real", report)
        finally:
            drop_namespace(postgres.url, scratch_schema)
    scratch = Path(tempfile.mkdtemp(prefix="madeleine-scale-real-"))
    try:
        with Memory(scratch, embedder=pooled, **options) as memory:
            return _ingest(memory, turns, "real", report)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _embed_alone(embedder: Embedder, batches: list[list[str]] | None) -> Phase:
    """The embedder by itself on exactly the batches the real-path ingest asked it for."""
    phase = Phase("embedder")
    for batch in batches or []:
        t0 = time.perf_counter()
        embedder.embed_passages(batch)
        phase.index_seconds += time.perf_counter() - t0
        phase.turns += len(batch)
    return phase


def _ingest(memory: Memory, turns: list[tuple[str, Turn]], stage: str, report: Progress) -> Phase:
    """Log turns session by session (one add per session piece), indexing every ~1000 turns."""
    phase = Phase(stage, len(turns))
    start = 0
    while start < len(turns):
        chunk = turns[start : start + _ADD_CHUNK_TURNS]
        start += len(chunk)
        t0 = time.perf_counter()
        by_session: dict[str, list[dict[str, Any]]] = {}
        for session_id, turn in chunk:
            by_session.setdefault(session_id, []).append(turn.message())
        for session_id, messages in by_session.items():
            memory.add(messages, user_id=USER_ID, session_id=session_id)
        t1 = time.perf_counter()
        memory.index_pending(lambda n: report(stage, n))
        phase.add_seconds += t1 - t0
        phase.index_seconds += time.perf_counter() - t1
    return phase


@dataclass(slots=True)
class _Searched:
    first_ms: float
    latencies: list[float]
    stages: dict[str, list[float]]
    embed_ms: list[float]
    planted: int
    found: int
    graph_cost: dict[str, list[float]]


_WITHOUT_GRAPH = ("dense", "bm25", "facts")


def _search(memory: Memory, user: SyntheticUser, embedder: Embedder, report: Progress) -> _Searched:
    """A cold first query (loads the vectors, builds the ANN index), warm-up, then the set."""

    def run(text: str, channels: Sequence[str] | None = None) -> tuple[float, list[Any]]:
        # every query is embedded for real: repeated texts would hit the searcher's cache
        memory._engine.searcher.forget_queries()
        t0 = time.perf_counter()
        hits = memory.search(text, user_id=user.user_id, limit=10, now=user.now, channels=channels)
        return (time.perf_counter() - t0) * 1000, hits

    first_ms, _ = run("what did I do last weekend?")
    for text in warmup_queries(min(_WARMUP_QUERIES, len(user.queries) // 4)):
        run(text)
    latencies: list[float] = []
    stages: dict[str, list[float]] = {}
    planted = found = 0
    for query in user.queries:
        elapsed, hits = run(query.text)
        latencies.append(elapsed)
        if hits:
            for name, value in hits[0].explain.get("ms", {}).items():
                stages.setdefault(name, []).append(float(value))
        if query.target is not None:
            planted += 1
            found += any(query.target in hit.source_ids for hit in hits)
        report("queries", 1)
    embed_ms: list[float] = []
    for query in user.queries:
        t0 = time.perf_counter()
        embedder.embed_queries([query.text])
        embed_ms.append((time.perf_counter() - t0) * 1000)
    # what the graph channel costs: each query with and without it, back to back, so that
    # the machine's drift between runs falls on both alike
    graph_cost: dict[str, list[float]] = {"with": [], "without": []}
    for query in user.queries:
        graph_cost["with"].append(run(query.text)[0])
        graph_cost["without"].append(run(query.text, _WITHOUT_GRAPH)[0])
        report("queries", 1)
    return _Searched(first_ms, latencies, stages, embed_ms, planted, found, graph_cost)
