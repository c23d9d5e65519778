"""``madeleine bench dashboard`` opens every view against the demo memory and prints them."""

from __future__ import annotations

from madeleine.bench.dashboard import run_dashboard
from tests.fakes import HashingEmbedder


def test_every_view_is_opened_and_timed() -> None:
    result = run_dashboard(repeats=2, embedder=HashingEmbedder())
    table = result.table()
    for view in ("profile", "search explain + context", "graph", "timeline", "health"):
        assert f"| {view} |" in table
    assert all(len(values) == 2 and min(values) > 0 for values in result.timings.values())
    assert "bundle:" in table and result.seed_seconds > 0
