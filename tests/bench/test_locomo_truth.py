"""``bench truth --locomo``: changes drawn from LoCoMo, scored by the turns hits come from."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from madeleine.bench import locomo_truth
from madeleine.bench.locomo_truth import TruthCase, load_cases, run_locomo_truth
from madeleine.records import Hit
from tests.fakes import HashingEmbedder

CASE = TruthCase(
    "conv-1",
    "Ana",
    "change",
    frozenset({"D1:1"}),
    frozenset({"D2:1"}),
    True,
    (
        {"query": "Which city is Ana living in?", "as_of": None},
        {"query": "Where was Ana living?", "as_of": "2023-05-10", "current_then": ["D1:1"]},
    ),
)


def _hit(text: str, sources: list[str]) -> Hit:
    return Hit(
        id=f"ep_{len(text)}",
        kind="turn",
        text=text,
        score=1.0,
        timestamp=datetime(2023, 5, 8, tzinfo=UTC),
        source_ids=sources,
        session_id="s",
        speaker="Ana",
        explain={},
    )


def _fixture(tmp_path: Path) -> tuple[Path, Path]:
    conversation = {
        "speaker_a": "Ana",
        "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ana", "dia_id": "D1:1", "text": "I live in Boston, near the harbour."},
            {"speaker": "Ben", "dia_id": "D1:2", "text": "Nice city."},
        ],
        "session_2_date_time": "10:00 am on 20 June, 2023",
        "session_2": [
            {"speaker": "Ana", "dia_id": "D2:1", "text": "We left Boston, I live in Denver now."},
            {"speaker": "Ben", "dia_id": "D2:2", "text": "Big move!"},
        ],
    }
    locomo = tmp_path / "locomo.json"
    locomo.write_text(json.dumps([{"sample_id": "conv-1", "conversation": conversation}]))
    observations = tmp_path / "observations.json"
    labels = {"conv-1": {"speaker_a": "Ana", "speaker_b": "Ben", "sessions": {}}}
    observations.write_text(json.dumps(labels))
    return locomo, observations


def test_the_shipped_cases_name_turns_only_and_split_by_conversation() -> None:
    cases = load_cases()
    assert len(cases) >= 20
    for case in cases:
        assert case.stale and case.current and not case.stale & case.current
        assert all(i.startswith("D") and ":" in i for i in case.stale | case.current)
        assert all(q["query"].strip() for q in case.questions)
    assert {c.conversation for c in cases} >= {"conv-26", "conv-41"}


def test_the_first_hit_from_a_case_turn_decides() -> None:
    first_is = locomo_truth._first_is
    hits = [_hit("Ben: hi", ["D9:9"]), _hit("Ana: Denver", ["D2:1"]), _hit("Ana: Boston", ["D1:1"])]
    assert first_is(hits, CASE.current, CASE.stale)
    assert not first_is(hits[::-1], CASE.current, CASE.stale)
    assert first_is([_hit("both", ["D1:1", "D2:1"])], CASE.current, CASE.stale)
    assert not first_is(hits[:1], CASE.current, CASE.stale)  # neither: a miss


def test_a_stale_line_must_be_marked() -> None:
    stale = _hit("Ana: I live in Boston, near the harbour.", ["D1:1"])
    fresh = _hit("Ana: We left Boston, I live in Denver now.", ["D2:1"])
    marked = "- Ana: I live in Boston, near the harbour. (outdated: said …)\n- Ana: We left …"
    plain = "- Ana: I live in Boston, near the harbour.\n- Ana: We left Boston …"
    assert locomo_truth._stale_marked(marked, [stale, fresh], CASE)
    assert not locomo_truth._stale_marked(plain, [stale, fresh], CASE)


def test_it_runs_on_a_tiny_conversation(tmp_path: Path) -> None:
    locomo, observations = _fixture(tmp_path)
    options = {"embedder": HashingEmbedder()}
    result = run_locomo_truth(
        locomo, observations, split="test", cases=[CASE], memory_options=options
    )
    now, then = result.outcomes
    assert now.as_of is None and now.context_has is not None
    assert then.as_of == "2023-05-10" and then.first  # only the Boston turn was said by then
    assert "| test | 1 | 1 |" in result.table()
    with pytest.raises(ValueError, match="lacks the conversation"):
        other = TruthCase("conv-9", "Ana", "change", CASE.stale, CASE.current, True, ())
        run_locomo_truth(locomo, observations, split="all", cases=[other])
