"""``bench seed-suite``: the book's evaluation layout, its measure and its table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from madeleine.bench.seed_suite import first_words, found, load_cases, run_seed_suite
from tests.bench.test_cli_and_bench import _cli
from tests.fakes import HashingEmbedder


def _case(case_id: str, layer: str, facts: list[str]) -> dict[str, object]:
    filler = ["Perfect.", "Great, thank you so much!", "Is there anything else today?"]
    turns = []
    for n, text in enumerate(
        [
            "Hi, I'd like to open a checking account please.",
            *filler,
            "Your checking account number is 4429853327 and the routing number is 123006800.",
            *filler,
            "Your appointment is on November 21st at 2:30 PM with Dr. Robert Chen.",
            *filler,
        ],
        1,
    ):
        speaker = "user" if n % 2 else "assistant"
        turns.append({"turn_id": f"{case_id}_s1_{n}", "speaker": speaker, "text": text})
    return {
        "case_id": case_id,
        "sessions": [{"session_id": "s1", "date": "2024-11-15 10:30:00", "turns": turns}],
        "questions": [
            {
                "question": "What was my checking account number?",
                "category": layer,
                "key_facts": facts,
            }
        ],
    }


def _suite(directory: Path) -> Path:
    directory.mkdir()
    cases = [
        _case("a", "layer1", ["4429853327", "123006800"]),
        _case("b", "layer3", ["November 21st", "2:30 PM", "Robert Chen", "never said"]),
    ]
    lines = "\n".join(json.dumps(case) for case in cases)
    (directory / "cases.jsonl").write_text(lines + "\n", encoding="utf-8")
    return directory


def test_a_key_fact_is_its_normalised_tokens_in_order() -> None:
    assert found("$18,500", "she had 18,500 dollars")
    assert found("8:00-9:15 AM", "class runs 8:00 - 9:15 am daily")
    assert found("Robert Chen", "Dr. ROBERT CHEN will see you")
    assert not found("March 20", "issued March 20th")  # a token is whole: 20 is not 20th
    assert not found("Chen Robert", "Robert Chen")  # in order
    assert not found("$", "anything")  # nothing to find
    assert first_words("a b  c\nd", 3) == "a b c"


def test_cases_load_with_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"cases\.jsonl"):
        load_cases(tmp_path)
    (tmp_path / "cases.jsonl").write_text('{"case_id": "x"}\n')
    with pytest.raises(ValueError, match=r"cases.jsonl:1: not a seed-suite case"):
        load_cases(tmp_path)
    cases = load_cases(_suite(tmp_path / "suite"))
    assert [c.case_id for c in cases] == ["a", "b"] and cases[0].turns == 12
    assert cases[1].questions[0].layer == "layer3"
    assert cases[0].sessions[0][2][0] == {
        "role": "user",
        "content": "Hi, I'd like to open a checking account please.",
        "id": "a_s1_1",
    }


def test_recall_per_layer_budget_and_source(tmp_path: Path) -> None:
    cases = load_cases(_suite(tmp_path / "suite"))
    result = run_seed_suite(
        cases, budgets=(20, 200), memory_options={"embedder": HashingEmbedder()}
    )
    assert result.recall("context", 200, "layer1") == 1.0  # both numbers, one sentence
    assert result.recall("context", 200, "layer3") == 0.75  # "never said" never is
    assert result.recall("context", 200) == pytest.approx((1.0 + 0.75) / 2)
    assert result.recall("search", 200, "layer1") == 1.0
    small = [o for o in result.outcomes if o.budget == 20]
    assert small and all(o.words <= 20 for o in small)
    table = result.table()
    assert "| context() | 200 | 0.875 | 1.000 | 0.750 |" in table
    assert "| search() | 20 |" in table and "layer3 (n=1)" in table
    assert "never said" in result.failures()


def test_the_command_prints_the_table(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "suite")
    result = _cli("bench", "seed-suite", str(suite), "--budgets", "50", data=tmp_path / "x")
    assert result.returncode == 0, result.stderr
    assert "| context() | 50 |" in result.stdout and "| search() | 50 |" in result.stdout
    missing = _cli("bench", "seed-suite", str(tmp_path), data=tmp_path / "x")
    assert missing.returncode != 0 and "cases.jsonl" in missing.stderr
