"""``madeleine bench serve`` end to end on a tiny load: a real server process, no errors."""

from __future__ import annotations

from typing import Any

from madeleine.bench.serve import run_serve


def test_bench_serve_runs_a_mixed_load_without_errors() -> None:
    result = run_serve(seconds=1.5, clients=2, users=1, turns_per_user=20, write_share=0.3)
    assert not result.errors
    assert result.seed_turns == 20
    assert result.latencies.get("search")
    table = result.table()
    assert "| all |" in table and "errors: 0" in table


def test_bench_serve_noisy_neighbour_measures_both_phases() -> None:
    from madeleine.bench.noisy import run_noisy_neighbour

    result = run_noisy_neighbour(seconds=1.5, flood_clients=2, query_chars=600, turns_per_user=20)
    assert not result.errors and not result.flood_errors
    assert result.seed_turns == 40
    assert result.idle and result.flooded and result.flood_answered > 0
    table = result.table()
    assert "| idle |" in table and "| while A floods |" in table and "tenant A:" in table


def test_the_flood_queries_are_long_and_never_repeat() -> None:
    import random

    from madeleine.bench.noisy import long_query
    from madeleine.bench.scale.synthetic import generate_user

    user = generate_user(20, seed=0, queries=5)
    rng = random.Random(0)
    queries = [long_query(user, 2000, rng) for _ in range(20)]
    assert all(len(q) == 2000 for q in queries) and len(set(queries)) == 20


def test_no_search_in_either_phase_repeats_an_earlier_text(monkeypatch: Any) -> None:
    """A repeated text would be answered from the query cache and flatter the flooded phase."""
    from madeleine.bench import noisy

    sent: list[str] = []
    real = noisy._searches

    async def spy(http: Any, user: Any, query: Any, *rest: Any) -> int:
        def recorded(rng: Any, n: int) -> str:
            text: str = query(rng, n)
            sent.append(text)
            return text

        return await real(http, user, recorded, *rest)

    monkeypatch.setattr(noisy, "_searches", spy)
    noisy.run_noisy_neighbour(seconds=1.0, flood_clients=1, query_chars=300, turns_per_user=20)
    assert len(sent) == len(set(sent)) > 2
