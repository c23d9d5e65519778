"""Scale: one synthetic user with N episodes; ingest throughput, search latency, memory.

The engine of ``madeleine bench scale``. Embedding 100k turns for real takes 15-80 minutes on a
CPU, so by default only the first ``real`` turns go through the full path with the real
embedder (the honest ingest rate). The rest go through the same write path (add → outbox →
indexer → SQLite rows, FTS5, vectors) with a ``PooledEmbedder``: every generated turn is built
from one of a finite pool of base sentences whose vectors are computed once with the real
embedder, and a turn's vector is its base vector plus small seeded noise. That phase measures
the write path *without* embedding. Queries are always embedded for real, so search latency
is the real thing. ``full_embed=True`` embeds every turn for real.

The user and its templates live in ``synthetic`` and ``templates``, the stand-in embedder in
``embedder``, timings and resident memory in ``measure``, the run in ``runner`` and the table
in ``report``.
"""

from madeleine.bench.scale.embedder import PooledEmbedder
from madeleine.bench.scale.measure import Phase
from madeleine.bench.scale.report import GRAPH_TARGET_MS, TARGET_P50_MS, ScaleResult
from madeleine.bench.scale.runner import STAGES, Progress, run_scale, stage_totals
from madeleine.bench.scale.synthetic import (
    USER_ID,
    USER_NAME,
    Query,
    Session,
    SyntheticUser,
    Turn,
    generate_user,
    pool_count,
)

__all__ = [
    "GRAPH_TARGET_MS",
    "STAGES",
    "TARGET_P50_MS",
    "USER_ID",
    "USER_NAME",
    "Phase",
    "PooledEmbedder",
    "Progress",
    "Query",
    "ScaleResult",
    "Session",
    "SyntheticUser",
    "Turn",
    "generate_user",
    "pool_count",
    "run_scale",
    "stage_totals",
]
