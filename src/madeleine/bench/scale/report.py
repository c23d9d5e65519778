"""The scale bench's result and its Markdown table, apart from how the numbers were taken."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from madeleine.bench.metrics import percentile
from madeleine.bench.scale.measure import Phase

TARGET_P50_MS = 20.0  # issue 14
INGEST_TARGET_RATIO = 0.8  # real-path ingest rate / the embedder's own rate
GRAPH_TARGET_MS = 10.0  # what the graph channel may add to p50 (issue 5)


@dataclass(slots=True)
class ScaleResult:
    episodes: int
    sessions: int
    stored: dict[str, Any]
    consistent: bool
    embedder: str
    dim: int
    seed: int
    full_embed: bool
    generate_seconds: float
    real: Phase
    bulk: Phase
    pool_texts: int
    pool_seconds: float
    bulk_fallbacks: int
    first_query_ms: float
    latencies_ms: list[float]
    stage_ms: dict[str, list[float]]
    query_embed_ms: list[float]
    planted: int
    planted_found: int
    ann_used: bool
    ann_threshold: int
    ann_bytes: int
    db_bytes: int
    rss_baseline: int
    rss_after_ingest: int
    rss_after_search: int
    rss_peak: int
    cpus: int
    load: tuple[float, float]
    threading: dict[str, str]
    notes: list[str] = field(default_factory=list)
    graph: dict[str, int] = field(default_factory=dict)
    graph_cost_ms: dict[str, list[float]] = field(default_factory=dict)
    embed_alone: Phase = field(default_factory=lambda: Phase("embedder"))
    reused: bool = False
    backend: str = "SQLite"  # or "PostgreSQL"

    @property
    def ingest_ratio(self) -> float:
        """Real-path ingest rate / the embedder's own rate on the same work (1.0 = the write
        path costs nothing beyond embedding): the embedder alone embeds exactly the batches
        the ingest asked of it (turns, and fact statements and entity names), so the ratio
        is its time over the ingest's."""
        if not self.real.turns or not self.embed_alone.seconds:
            return float("nan")
        return self.embed_alone.seconds / self.real.seconds

    def latency(self, quantile: float) -> float:
        return percentile(self.latencies_ms, quantile)

    @property
    def meets_target(self) -> bool:
        return self.latency(0.5) <= TARGET_P50_MS

    def table(self) -> str:
        """Markdown: what was measured, and how (real embedding vs pooled vectors)."""
        rows: list[tuple[str, str]] = [
            (
                "episodes stored",
                f"{self.stored.get('episodes', 0):,} of {self.episodes:,} "
                f"({self.sessions:,} sessions, one user; indexes consistent: "
                f"{'yes' if self.consistent else 'NO'})",
            ),
            ("embedder", f"{self.embedder} (dim {self.dim})"),
            (
                "ingest, real path (add + embed + index)",
                _phase(self.real) if self.real.turns else "skipped",
            ),
        ]
        if self.embed_alone.turns:
            rows.append(
                (
                    "embedder alone on the same texts and batches",
                    f"{self.embed_alone.turns:,} texts ({self.real.turns:,} turns and what "
                    f"indexing them embeds) in {self.embed_alone.seconds:.1f} s = "
                    f"**{self.real.turns / self.embed_alone.seconds:,.1f} turns/s**; "
                    "ingest / embedder = "
                    f"**{self.ingest_ratio:.2f}** (target ≥ {INGEST_TARGET_RATIO:.2f}: "
                    f"{'met' if self.ingest_ratio >= INGEST_TARGET_RATIO else 'NOT met'})",
                )
            )
        if self.bulk.turns:
            label = (
                "ingest, rest (real embedding too)"
                if self.full_embed
                else "ingest, write path without embedding (pooled vectors)"
            )
            rows.append((label, _phase(self.bulk)))
            if not self.full_embed:
                rows.append(
                    (
                        "pool of base sentences (embedded for real)",
                        f"{self.pool_texts:,} texts in {self.pool_seconds:.1f} s; "
                        f"{self.bulk_fallbacks:,} unmatched turns embedded for real in bulk",
                    )
                )
        n = len(self.latencies_ms)
        rows += [
            (
                "first search (loads vectors; builds the ANN index if used)",
                f"{self.first_query_ms:,.0f} ms",
            ),
            (
                "search p50 / p95 / p99",
                f"{self.latency(0.5):.1f} / {self.latency(0.95):.1f} / {self.latency(0.99):.1f}"
                f" ms over {n} queries (all channels, default stages, limit 10) — target p50 "
                f"≤ {TARGET_P50_MS:.0f} ms: {'met' if self.meets_target else 'NOT met'}",
            ),
        ]
        if self.stage_ms:
            stages = " · ".join(
                f"{name} {percentile(values, 0.5):.1f}" for name, values in self.stage_ms.items()
            )
            rows.append(("per stage p50 (hit.explain ms)", stages + " ms"))
        if self.graph_cost_ms.get("with") and self.graph_cost_ms.get("without"):
            with_graph = percentile(self.graph_cost_ms["with"], 0.5)
            without = percentile(self.graph_cost_ms["without"], 0.5)
            rows.append(
                (
                    "search p50 with / without the graph channel (interleaved)",
                    f"{with_graph:.1f} / {without:.1f} ms: the graph adds "
                    f"{with_graph - without:+.1f} ms (target ≤ {GRAPH_TARGET_MS:.0f} ms)",
                )
            )
        if self.query_embed_ms:
            rows.append(
                (
                    "query embedding alone p50",
                    f"{percentile(self.query_embed_ms, 0.5):.1f} ms (timed apart)",
                )
            )
        if self.planted:
            rows.append(
                (
                    "planted facts in top 10",
                    f"{self.planted_found}/{self.planted} = "
                    f"{self.planted_found / self.planted:.2f} (sanity check)",
                )
            )
        vectors = int(self.stored.get("vectors", 0))
        ann = "pgvector" if self.backend == "PostgreSQL" else "usearch"
        rows += [
            (
                "dense index",
                (
                    f"ANN ({ann} HNSW): {vectors:,} vectors ≥ threshold {self.ann_threshold:,}"
                    if self.ann_used
                    else f"exact cosine: {vectors:,} vectors < threshold {self.ann_threshold:,}"
                ),
            ),
            (
                "resident memory (whole process)",
                f"{_mb(self.rss_baseline)} before the store → {_mb(self.rss_after_ingest)} "
                f"after ingest → {_mb(self.rss_after_search)} after search; "
                f"peak {_mb(self.rss_peak)}",
            ),
            ("on disk", f"{self.backend} {_mb(self.db_bytes)} + ANN {_mb(self.ann_bytes)}"),
        ]
        if self.graph:
            passages = max(self.graph["passages"], 1)
            rows.append(
                (
                    "graph in memory (entities, edges)",
                    f"{self.graph['entities']:,} entities, {self.graph['edges']:,} directed edges; "
                    f"{_mb(self.graph['bytes'])} = {self.graph['bytes'] / passages:,.0f} bytes "
                    "per passage (target ≤ 1 KB)",
                )
            )
        rows += [
            (
                "machine",
                f"{self.cpus} CPUs, load average {self.load[0]:.2f} → {self.load[1]:.2f}; "
                + (", ".join(f"{k}={v}" for k, v in self.threading.items()) or "no OMP_* set"),
            ),
        ]
        lines = ["| measure | value |", "|---|---|"]
        lines += [f"| {name} | {value} |" for name, value in rows]
        return "\n".join(lines + [f"\n{note}" for note in self.notes])


def _phase(phase: Phase) -> str:
    add_rate = phase.turns / phase.add_seconds if phase.add_seconds else float("nan")
    index_rate = phase.turns / phase.index_seconds if phase.index_seconds else float("nan")
    return (
        f"{phase.turns:,} turns in {phase.seconds:.1f} s = **{phase.rate:,.1f} turns/s** "
        f"(add {add_rate:,.0f}/s, index {index_rate:,.1f}/s)"
    )


def _mb(size: int) -> str:
    return f"{size / 1e6:,.0f} MB"
