from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from madeleine.bench.tokens import (
    TokenizerUnavailable,
    compare,
    load_korquad_texts,
    load_locomo_texts,
    real_tokenizers,
    run_tokens,
    select,
    table,
)
from madeleine.cli import main


def _corpora(tmp_path: Path) -> tuple[Path, Path]:
    locomo = [
        {
            "sample_id": f"conv-{n}",
            "conversation": {
                "speaker_a": "Ana",
                "speaker_b": "Ben",
                "session_1_date_time": "1:56 pm on 8 May, 2023",
                "session_1": [
                    {"speaker": "Ana", "dia_id": "D1:1", "text": f"Hey Ben! I adopted {n} cats."},
                    {"speaker": "Ben", "dia_id": "D1:2", "text": "Wow, that's a lot of cats!"},
                ],
            },
            "qa": [{"question": "How many cats did Ana adopt?", "answer": str(n)}],
        }
        for n in range(3)
    ]
    korquad = {
        "data": [
            {
                "title": f"문서 {n}",
                "paragraphs": [
                    {
                        "context": f"서울은 대한민국의 수도이며 인구는 약 {n + 9}00만 명이다.",
                        "qas": [{"id": str(n), "question": "대한민국의 수도는?", "answers": []}],
                    }
                ],
            }
            for n in range(2)
        ]
    }
    (tmp_path / "locomo.json").write_text(json.dumps(locomo), encoding="utf-8")
    (tmp_path / "korquad.json").write_text(json.dumps(korquad, ensure_ascii=False), "utf-8")
    return tmp_path / "locomo.json", tmp_path / "korquad.json"


def test_loaders_and_the_calibration_split(tmp_path: Path) -> None:
    locomo, korquad = _corpora(tmp_path)
    conversations = load_locomo_texts(locomo)
    assert conversations[0] == [
        "Hey Ben! I adopted 0 cats.",
        "Wow, that's a lot of cats!",
        "How many cats did Ana adopt?",
    ]
    assert select(conversations, "calibration") == conversations[0] + conversations[2]
    assert select(conversations, "held-out") == conversations[1]
    assert len(select(conversations, "all")) == 9
    articles = load_korquad_texts(korquad)
    assert articles[1] == [
        "서울은 대한민국의 수도이며 인구는 약 1000만 명이다.",
        "대한민국의 수도는?",
    ]
    with pytest.raises(ValueError, match="split"):
        select(conversations, "test")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="LoCoMo"):
        load_locomo_texts(korquad)


def test_compare_with_a_stand_in_tokenizer() -> None:
    words = {"one word a token": lambda text: len(text.split())}
    rows = compare("tiny", ["two words", "three words here", ""], words)
    assert [r.estimator for r in rows] == ["default"]
    (row,) = rows
    assert (row.texts, row.real) == (3, 5)
    assert row.ratio == pytest.approx(row.estimated / 5)
    assert row.median_error == pytest.approx(0.0)
    assert "| tiny | one word a token | default | 3 | 5 |" in table(rows)


def test_bench_tokens_on_a_tiny_corpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("bpe_openai")
    locomo, korquad = _corpora(tmp_path)
    rows, speed = run_tokens(locomo, korquad, split="all")
    assert {r.corpus for r in rows} == {"LoCoMo (all)", "KorQuAD (all)", "built-in mixed"}
    assert {(r.tokenizer, r.estimator) for r in rows} == {
        ("cl100k", "default"),
        ("cl100k", "cl100k profile"),
        ("o200k", "default"),
        ("o200k", "o200k profile"),
    }
    english = next(r for r in rows if r.corpus == "LoCoMo (all)" and r.estimator == "default")
    assert english.texts == 9 and 0.9 <= english.ratio <= 1.2
    assert all(chars > 0 for chars in speed.values())
    assert main(["bench", "tokens", "--locomo", str(locomo), "--korquad", str(korquad)]) == 0
    out = capsys.readouterr().out
    assert "| LoCoMo (held-out) | cl100k | default | 3 |" in out
    assert "| KorQuAD (held-out) | o200k | o200k profile | 2 |" in out
    assert "M chars per CPU second" in out


def test_a_missing_tokenizer_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "bpe_openai", None)  # import fails
    with pytest.raises(TokenizerUnavailable, match=r"pip install 'madeleine\[bench\]'"):
        real_tokenizers()
    assert main(["bench", "tokens"]) == 1
    assert "pip install 'madeleine[bench]'" in capsys.readouterr().err
