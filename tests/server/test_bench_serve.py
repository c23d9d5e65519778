"""``madeleine bench serve`` end to end on a tiny load: a real server process, no errors."""

from __future__ import annotations

from madeleine.bench.serve import run_serve


def test_bench_serve_runs_a_mixed_load_without_errors() -> None:
    result = run_serve(seconds=1.5, clients=2, users=1, turns_per_user=20, write_share=0.3)
    assert not result.errors
    assert result.seed_turns == 20
    assert result.latencies.get("search")
    table = result.table()
    assert "| all |" in table and "errors: 0" in table
