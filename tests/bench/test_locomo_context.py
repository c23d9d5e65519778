"""``bench context --locomo``: key facts from LoCoMo's own answers, no hand-written label."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from madeleine.bench.locomo_context import (
    key_facts,
    load_dialogues,
    occurs,
    run_locomo_context,
    split_of,
)
from tests.bench.test_cli_and_bench import _cli, _tiny_locomo
from tests.fakes import HashingEmbedder


def test_an_answer_splits_into_its_parts() -> None:
    assert key_facts("Pottery and painting") == ("Pottery", "painting")
    assert key_facts("a safe and loving home") == ("a safe and loving home",)
    assert key_facts("Coco, Shadow; Max.") == ("Coco", "Shadow", "Max")
    assert key_facts("Yes") == ()  # nothing a string can find
    assert key_facts("the bowl, the bowl") == ("the bowl",)


def test_a_fact_occurs_as_whole_words_case_aside() -> None:
    assert occurs("Smoky Mountains", "we hiked the smoky\nmountains in May")
    assert not occurs("That", "thatch roofs")
    assert not occurs("art", "a party")


def test_only_answers_found_literally_in_their_evidence_count(tmp_path: Path) -> None:
    data = tmp_path / "tiny.json"
    _tiny_locomo(data)
    raw = json.loads(data.read_text())
    raw[0]["qa"].append(
        {"question": "Did Ann like it?", "answer": "Yes", "evidence": ["D2:1"], "category": 4}
    )
    raw[0]["qa"].append(
        {"question": "Ben's ride?", "answer": "a racing bike", "evidence": ["D2:2"], "category": 4}
    )
    data.write_text(json.dumps(raw))
    (dialogue,) = load_dialogues(data)
    assert [q.facts for q in dialogue.questions] == [("pottery",), ("bicycle",)]
    assert dialogue.skipped == 2  # "Yes" has no key fact; "a racing bike" was never said
    assert split_of("conv-26") == "dev" and split_of("tiny") == "test"


def test_recall_per_split_and_budget(tmp_path: Path) -> None:
    data = tmp_path / "tiny.json"
    _tiny_locomo(data)
    options = {"embedder": HashingEmbedder()}
    result = run_locomo_context(data, split="test", budgets=(300,), memory_options=options)
    assert {o.recall for o in result.outcomes} == {1.0}  # four turns: all of them fit
    table = result.table()
    assert "| test | 300 |" in table and "single-hop (n)" in table
    assert "2 questions" in result.summary()
    with pytest.raises(ValueError, match="no LoCoMo conversations in the dev split"):
        run_locomo_context(data, split="dev", memory_options=options)


def test_the_cli_runs_it(tmp_path: Path) -> None:
    data = tmp_path / "tiny.json"
    _tiny_locomo(data)
    args = ("bench", "context", "--locomo", str(data), "--split", "test", "--budgets", "200")
    result = _cli(*args, data=tmp_path / "unused")
    assert result.returncode == 0, result.stderr
    assert "| test | 200 |" in result.stdout and "literally" in result.stdout
