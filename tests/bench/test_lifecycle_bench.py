"""``madeleine bench lifecycle``: the generator is seeded and tells every change, and a short
run measures before and after maintenance (fast embedder; the real numbers come from the
command, in docs/benchmarks.md)."""

from __future__ import annotations

from madeleine.bench.lifecycle import (
    RARE_IMPORTANT,
    SLOTS,
    format_result,
    generate,
    run_lifecycle,
    targets_met,
)
from tests.fakes import HashingEmbedder


def test_the_generator_is_seeded_and_tells_every_value_it_ends_with() -> None:
    first, again, other = generate(7), generate(7), generate(8)
    assert first.sessions == again.sessions and first.sessions != other.sessions
    said = " ".join(t for _, _, texts in first.sessions for t in texts)
    for slot in SLOTS:
        assert first.current[slot.name] in said
    for sentence, _, _ in RARE_IMPORTANT:
        assert said.count(sentence) == 1  # rare: said once
    times = [at for _, at, _ in first.sessions]
    assert times == sorted(times) and (times[-1] - times[0]).days > 300


def test_a_short_run_reports_before_and_after() -> None:
    result = run_lifecycle(seed=3, months=2, options={"embedder": HashingEmbedder(dim=256)})
    assert result.before.size["total"] > result.after.size["total"]
    assert result.after.duplicate_rate < result.before.duplicate_rate
    assert result.report.changes and result.report.llm_calls == 0
    table = format_result(result)
    assert "| duplicate rate |" in table and "maintenance:" in table
    assert set(targets_met(result)) == {
        "duplicates -80 %",
        "current truth top-3 >= 0.95",
        "rare-important top-5 = 1.0",
        "store size -30 %",
    }
