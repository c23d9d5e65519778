from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from madeleine import Memory
from madeleine.bench.longmemeval import (
    load_longmemeval,
    parse_date,
    run_longmemeval,
    score_ranked,
    select_questions,
    turn_id,
)
from madeleine.cli import main
from madeleine.embed.base import Embedder
from tests.postgres import BACKEND


def _turn(role: str, content: str, has_answer: bool | None = None) -> dict[str, Any]:
    turn: dict[str, Any] = {"role": role, "content": content}
    if has_answer is not None:
        turn["has_answer"] = has_answer
    return turn


FILLER = {
    "filler_bike": [
        _turn("user", "My bicycle chain keeps slipping on steep hills."),
        _turn("assistant", "Check the derailleur alignment and replace a worn chain."),
    ],
    "filler_soup": [
        _turn("user", "Give me a quick recipe for a lentil soup."),
        _turn("assistant", "Simmer red lentils with onion, cumin and stock for 20 minutes."),
    ],
}


def _question(
    qid: str,
    qtype: str,
    question: str,
    answer_sessions: dict[str, list[dict[str, Any]]],
) -> dict[str, Any]:
    sessions = {**FILLER, **answer_sessions}
    return {
        "question_id": qid,
        "question_type": qtype,
        "question": question,
        "answer": 42 if qid.startswith("q3") else "see sessions",
        "question_date": "2023/06/30 (Fri) 18:00",
        "haystack_session_ids": list(sessions),
        "haystack_dates": [f"2023/05/{20 + n} (Sat) 02:21" for n in range(len(sessions))],
        "haystack_sessions": list(sessions.values()),
        "answer_session_ids": list(answer_sessions),
    }


def _mini(path: Path) -> Path:
    """Four questions: user-turn evidence, assistant-only evidence, unmarked, abstention."""
    data = [
        _question(
            "q1",
            "single-session-user",
            "What classes did I start taking at the community center?",
            {
                "answer_pottery": [
                    _turn(
                        "user",
                        "I started pottery classes at the community center on Tuesdays.",
                        True,
                    ),
                    _turn("assistant", "That sounds like a relaxing hobby!", False),
                    _turn("user", "   ", False),  # empty turns are skipped, ids stay aligned
                ]
            },
        ),
        _question(
            "q2",
            "single-session-assistant",
            "Which hiking trail near Boulder did you recommend to me?",
            {
                "answer_trail": [
                    _turn("user", "Can you suggest somewhere to hike this weekend?", False),
                    _turn(
                        "assistant",
                        "I recommend the Royal Arch trail in Boulder, a steep 3.4 mile hike.",
                        True,
                    ),
                ]
            },
        ),
        _question(
            "q3",
            "multi-session",
            "How many pets do I have in total?",
            {
                "answer_cat": [_turn("user", "We adopted a grey cat called Dubu last month.")],
                "answer_dog": [_turn("user", "Our dog Bori turned five years old today.")],
            },
        ),
        _question(
            "q4_abs",
            "single-session-user",
            "What is the name of my pet hamster?",
            {"answer_cat": [_turn("user", "We adopted a grey cat called Dubu last month.")]},
        ),
    ]
    path.write_text(json.dumps(data))
    return path


def test_parse_date() -> None:
    assert parse_date("2023/05/20 (Sat) 02:21") == datetime(2023, 5, 20, 2, 21, tzinfo=UTC)
    assert parse_date("2023/05/20") == datetime(2023, 5, 20, tzinfo=UTC)
    assert parse_date("2023-05-20T02:21:00") == datetime(2023, 5, 20, 2, 21, tzinfo=UTC)
    with pytest.raises(ValueError, match="haystack date"):
        parse_date("2023/13/40 (Sat) 02:21", "haystack date")
    with pytest.raises(ValueError, match="question_date"):
        parse_date("yesterday", "question_date")


def test_loader_reads_the_mini_file(tmp_path: Path) -> None:
    questions = load_longmemeval(_mini(tmp_path / "lme.json"))
    assert [q.question_id for q in questions] == ["q1", "q2", "q3", "q4_abs"]
    q1, q2, q3, q4 = questions
    assert q1.date == datetime(2023, 6, 30, 18, 0, tzinfo=UTC)
    assert q1.sessions[0].date == datetime(2023, 5, 20, 2, 21, tzinfo=UTC)
    assert q1.answer_sessions == {"answer_pottery"}
    assert q1.evidence_turns() == {turn_id("answer_pottery", 0)}
    assert q2.evidence_turns() == {"answer_trail:1"}
    assert q3.evidence_turns() == frozenset() and q3.answer == "42"
    assert q4.abstention and not q1.abstention
    assert q1.indexed_turns() == 6  # the blank turn is dropped
    assert q1.indexed_turns(official=True) == 3
    assert q2.evidence_turns(official=True) == frozenset()  # an assistant turn


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: {"questions": d}, "expected a JSON list"),
        (lambda d: [*d[:1], "oops"], r"question \[1\] must be an object"),
        (lambda d: [{k: v for k, v in d[0].items() if k != "haystack_dates"}], "haystack_dates"),
        (lambda d: [{**d[0], "haystack_dates": d[0]["haystack_dates"][:-1]}], "same length"),
        (lambda d: [{**d[0], "question_date": "next week"}], "question_date"),
        (
            lambda d: [
                {**d[0], "haystack_sessions": [[{"role": "user"}], *d[0]["haystack_sessions"][1:]]}
            ],
            r"turn \[0\]: 'content'",
        ),
    ],
)
def test_loader_names_the_problem(tmp_path: Path, mutate: Any, message: str) -> None:
    path = _mini(tmp_path / "lme.json")
    path.write_text(json.dumps(mutate(json.loads(path.read_text()))))
    with pytest.raises(ValueError, match=message):
        load_longmemeval(path)
    path.write_text("[{")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_longmemeval(path)


def test_selection_skips_abstention(tmp_path: Path) -> None:
    questions = load_longmemeval(_mini(tmp_path / "lme.json"))
    selected, skipped = select_questions(questions)
    assert [q.question_id for q in selected] == ["q1", "q2", "q3"] and skipped == 1
    selected, skipped = select_questions(questions, types=["single-session-user"], limit=5)
    assert [q.question_id for q in selected] == ["q1"] and skipped == 1
    assert len(select_questions(questions, limit=2)[0]) == 2
    with pytest.raises(ValueError, match="no LongMemEval questions of type"):
        select_questions(questions, types=["nope"])


def test_score_ranked() -> None:
    scores = score_ranked(["a", "x", "a", "y", "z", "q", "b"], frozenset({"a", "b"}), "S")
    assert scores["S_any@5"] == 1.0 and scores["S_all@5"] == 0.0
    assert scores["S_all@10"] == 1.0  # distinct ids: a x y z q b
    assert scores["S_NDCG@10"] == pytest.approx((1 + 1 / 2.807354922) / (1 + 1 / 1.5849625))
    assert score_ranked([], frozenset({"a"}), "T")["T_any@10"] == 0.0


def test_runner_finds_easy_evidence(tmp_path: Path, embedder: Embedder) -> None:
    store = tmp_path / "store"
    result = run_longmemeval(
        _mini(tmp_path / "lme.json"), data_dir=store, memory_options={"embedder": embedder}
    )
    assert result.skipped_abstention == 1 and result.without_turn_evidence == 1
    assert result.overall.sessions.count == 3 and result.overall.turns.count == 2
    # Tiny haystacks: every session and every turn fits in the top 10.
    for metric in ("S_any@10", "S_all@10", "T_any@10", "T_all@10"):
        assert result.overall.mean(metric) == 1.0, metric
    assert result.by_type["single-session-user"].mean("T_any@5") == 1.0
    assert result.by_type["single-session-user"].mean("S_NDCG@10") > 0.6
    assert result.ingest_turns == 6 + 6 + 6 and len(result.latencies_ms) == 3
    table = result.table()
    assert "single-session-assistant" in table and "| overall" in table
    assert "multi-session" in table and "T_NDCG@10" in table
    assert "1 abstention skipped" in result.summary() and "p95" in result.summary()
    with Memory(store, embedder=embedder, background=False) as memory:
        assert memory.search("hamster", user_id="q4_abs") == []  # never ingested
        hits = memory.search("pottery classes", user_id="q1", limit=3)
        assert hits[0].source_ids == ["answer_pottery:0"]
        assert hits[0].session_id == "answer_pottery"
    if BACKEND == "sqlite":  # a store directory that holds data is refused
        with pytest.raises(ValueError, match="not empty"):
            run_longmemeval(tmp_path / "lme.json", data_dir=store)


def test_official_indexes_user_turns_only(tmp_path: Path, embedder: Embedder) -> None:
    result = run_longmemeval(
        _mini(tmp_path / "lme.json"), official=True, memory_options={"embedder": embedder}
    )
    assert result.ingest_turns == 3 + 3 + 4
    assistant = result.by_type["single-session-assistant"]
    # the evidence was only said by the assistant: no user turn to find, no turn metric
    assert assistant.turns.count == 0
    assert result.without_turn_evidence == 2  # and q3 has no marked turns at all
    assert assistant.mean("S_any@10") == 1.0  # its session is still found via the user turn
    assert result.by_type["single-session-user"].mean("T_any@10") == 1.0
    assert "official" in result.summary()


def test_cli_bench_longmemeval(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _mini(tmp_path / "lme.json")
    code = main(["bench", "longmemeval", str(path), "--questions", "2", "--official"])
    out = capsys.readouterr().out
    assert code == 0
    assert "single-session-user" in out and "single-session-assistant" in out
    assert "multi-session" not in out  # --questions 2 stops before q3
    assert "user turns only" in out and "p50" in out and "turns/s" in out

    code = main(["bench", "longmemeval", str(path), "--types", "multi-session"])
    out = capsys.readouterr().out
    assert code == 0 and "multi-session" in out and "single-session-user" not in out

    workdir = tmp_path / "busy"
    workdir.mkdir()
    (workdir / "file").write_text("x")
    code = main(["bench", "longmemeval", str(path), "--workdir", str(workdir)])
    assert code == 2 and "not empty" in capsys.readouterr().err
