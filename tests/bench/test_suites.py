"""Madeleine's own suites (``bench truth``, ``bench context``): the JSON files are well formed
and fair, the scoring rules say what the docs say, and a tiny subset runs end to end."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from madeleine import cli
from madeleine.bench import scenarios as scenario_module
from madeleine.bench.keyfacts import KINDS, KeyFactQuestion, parse_budgets, recall, run_context
from madeleine.bench.scenarios import (
    LANGUAGES,
    SPLITS,
    Scenario,
    alternatives,
    load_distractors,
    load_suite,
    mentions,
    suite_files,
)
from madeleine.bench.truth import TruthQuestion, first_mention, presents_current, run_truth
from madeleine.records import Hit
from tests.fakes import HashingEmbedder

SUITES = ("truth", "context")


def _own(scenario: Scenario) -> list[str]:
    """The scenario's own messages, distractor sessions left out."""
    return [
        str(m["content"])
        for s in scenario.sessions
        if not s.id.startswith(("smalltalk-", "other-"))
        for m in s.messages
    ]


def _values(suite: str, raw: dict[str, Any]) -> list[tuple[str, ...]]:
    if suite == "truth":
        question = TruthQuestion.parse(raw)
        return [question.answer, question.other]
    return list(KeyFactQuestion.parse(raw).facts)


@pytest.mark.parametrize("suite", SUITES)
def test_both_languages_and_both_splits_are_present(suite: str) -> None:
    assert suite_files(suite) == [f"{suite}_{language}.json" for language in LANGUAGES]
    for language in LANGUAGES:
        for split in SPLITS:
            chosen = load_suite(suite, split=split, languages=[language])
            assert chosen, f"{suite} {language} {split} is empty"
            assert all(s.language == language and s.split == split for s in chosen)
    everything = load_suite(suite, split="all")
    assert len({s.id for s in everything}) == len(everything)
    minimum = 20 if suite == "truth" else 10
    for language in LANGUAGES:
        assert sum(s.language == language for s in everything) >= minimum


@pytest.mark.parametrize("suite", SUITES)
def test_every_value_and_key_fact_is_said_in_its_scenario(suite: str) -> None:
    for scenario in load_suite(suite, distractors=False):
        assert scenario.questions, scenario.id
        said = _own(scenario)
        for raw in scenario.questions:
            for value in _values(suite, raw):
                assert any(mentions(text, value) for text in said), (scenario.id, value)


@pytest.mark.parametrize("suite", SUITES)
def test_distractors_say_no_value_or_key_fact(suite: str) -> None:
    """Small talk must not mention an answer by accident (it would score or cost for free)."""
    for language in LANGUAGES:
        small_talk = [str(m["content"]) for session in load_distractors(language) for m in session]
        for scenario in load_suite(suite, languages=[language], distractors=False):
            for raw in scenario.questions:
                for value in _values(suite, raw):
                    leaked = [t for t in small_talk if mentions(t, value)]
                    assert not leaked, (scenario.id, value, leaked)


def test_truth_questions_ask_about_times_the_scenario_covers() -> None:
    for scenario in load_suite("truth", distractors=False):
        sessions = sorted(scenario.sessions, key=lambda s: s.time)
        kinds = set()
        for raw in scenario.questions:
            question = TruthQuestion.parse(raw)
            assert not set(map(str.casefold, question.answer)) & set(
                map(str.casefold, question.other)
            )
            if question.as_of is None:
                kinds.add("now")
                # the current value is said in the last session that mentions either value
                deciding = [
                    s
                    for s in sessions
                    if any(
                        mentions(str(m["content"]), question.answer)
                        or mentions(str(m["content"]), question.other)
                        for m in s.messages
                    )
                ][-1]
                assert any(
                    mentions(str(m["content"]), question.answer) for m in deciding.messages
                ), (scenario.id, question.query)
                continue
            kinds.add("as_of")
            before = [s for s in sessions if s.time <= question.as_of]
            assert before, (scenario.id, "as_of before the first session")
            assert any(
                mentions(str(m["content"]), question.answer) for s in before for m in s.messages
            ), (scenario.id, question.query, "the answer was not said by then")
        assert "now" in kinds, scenario.id
    as_of = [
        raw
        for language in LANGUAGES
        for s in load_suite("truth", languages=[language])
        for raw in s.questions
        if raw.get("as_of")
    ]
    assert len(as_of) >= 20


def test_context_suite_has_every_kind_in_each_language() -> None:
    for language in LANGUAGES:
        kinds = {
            KeyFactQuestion.parse(raw).kind
            for s in load_suite("context", languages=[language])
            for raw in s.questions
        }
        assert kinds == set(KINDS), language


def test_distractors_name_the_user_and_sit_between_sessions() -> None:
    scenario = load_suite("truth", languages=["en"])[0]
    small_talk = [s for s in scenario.sessions if s.id.startswith("smalltalk-")]
    assert len(small_talk) == scenario_module.DISTRACTORS_PER_SCENARIO
    texts = [str(m["content"]) for s in scenario.sessions for m in s.messages]
    assert not any("{name}" in t for t in texts)
    assert [s.time for s in scenario.sessions] == sorted(s.time for s in scenario.sessions)
    users = {m.get("name") for s in scenario.sessions for m in s.messages if m["role"] == "user"}
    assert users == {scenario.user}


def _hit(text: str) -> Hit:
    return Hit("ep_1", "turn", text, 1.0, datetime(2024, 1, 1), ["m1"], "s1", None, {})


def test_first_mention_decides_current_first() -> None:
    answer, other = ("Denver",), ("Austin",)
    assert first_mention([_hit("hello"), _hit("I live in Denver")], answer, other) == "answer"
    assert first_mention([_hit("I live in Austin"), _hit("Denver!")], answer, other) == "other"
    assert first_mention([_hit("moved from Austin to denver")], answer, other) == "answer"
    assert first_mention([_hit("nothing here")], answer, other) is None
    assert first_mention([], answer, other) is None


def test_presents_current_needs_the_answer_and_marks_on_stale_lines() -> None:
    answer, other = ("Tuesday",), ("Monday",)
    assert presents_current("- dentist on Tuesday", answer, other)
    assert not presents_current("- dentist on Monday", answer, other)
    assert not presents_current("- dentist on Tuesday\n- dentist on Monday", answer, other)
    marked = "- dentist on Tuesday\n- dentist on Monday (outdated since 2024-03-06)"
    assert presents_current(marked, answer, other)
    assert presents_current("- Tuesday, not Monday", answer, other)


def test_key_fact_recall_and_alternatives() -> None:
    facts = [("end of March",), ("Harbor Federal", "credit union")]
    assert recall("Closing at the END OF MARCH; moving to the credit union", facts) == 1.0
    assert recall("closing at the end of march", facts) == 0.5
    assert recall("", facts) == 0.0
    assert alternatives("x") == ("x",)
    with pytest.raises(ValueError):
        alternatives([])
    with pytest.raises(ValueError):
        alternatives(["ok", " "])
    assert parse_budgets("200, 500,1000") == (200, 500, 1000)
    for bad in ("", "0", "a,b", "-5"):
        with pytest.raises(ValueError):
            parse_budgets(bad)
    with pytest.raises(ValueError):
        KeyFactQuestion.parse({"kind": "other", "query": "q", "facts": ["x"]})
    with pytest.raises(ValueError):
        TruthQuestion.parse({"query": " ", "answer": "a", "other": "b"})


def _fake_memory() -> dict[str, Any]:
    return {"embedder": HashingEmbedder(), "background": False}


def test_truth_runs_end_to_end_on_a_tiny_subset(tmp_path: Path) -> None:
    chosen = [s for s in load_suite("truth") if s.id in ("en-move-city", "ko-move-city")]
    assert len(chosen) == 2
    seen: dict[str, int] = {}
    result = run_truth(
        scenarios=chosen,
        data_dir=tmp_path / "store",
        memory_kwargs=_fake_memory(),
        progress=lambda stage, n: seen.__setitem__(stage, seen.get(stage, 0) + n),
    )
    questions = sum(len(s.questions) for s in chosen)
    assert len(result.outcomes) == questions == seen["questions"]
    assert seen["index"] >= sum(s.turns for s in chosen)
    assert result.scenarios == {"en": 1, "ko": 1}
    # every question reaches some hit that names one of the two values
    assert all(o.first is not None for o in result.outcomes)
    assert all((o.context_ok is None) == (o.question.as_of is not None) for o in result.outcomes)
    table = result.table()
    assert "| en | 1 |" in table and "| ko | 1 |" in table and "| overall | 2 |" in table
    assert result.failures()


def test_context_runs_end_to_end_on_a_tiny_subset(tmp_path: Path) -> None:
    chosen = [s for s in load_suite("context") if s.id in ("en-ctx-checking", "ko-ctx-account")]
    result = run_context(
        scenarios=chosen,
        budgets=(100, 400),
        data_dir=tmp_path / "store",
        memory_kwargs=_fake_memory(),
    )
    assert len(result.outcomes) == 2 * sum(len(s.questions) for s in chosen)
    assert all(o.tokens <= o.budget for o in result.outcomes)
    # a bigger budget never recalls less on these small stores
    for small, large in zip(result.outcomes[::2], result.outcomes[1::2], strict=True):
        assert small.budget == 100 and large.budget == 400
        assert large.recall >= small.recall
    table = result.table()
    for kind in ("single-session", "multi-session", "proactive", "all kinds"):
        assert f"| {kind} | 100 |" in table
    assert "en recall (n)" in table and "ko recall (n)" in table


def test_cli_bench_truth_and_context(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    original = scenario_module.load_suite

    def tiny(suite: str, **kwargs: Any) -> list[Scenario]:
        return original(suite, **kwargs)[:1]

    monkeypatch.setattr(scenario_module, "load_suite", tiny)
    monkeypatch.setattr(scenario_module, "memory_options", lambda embedder: _fake_memory())
    assert cli.main(["bench", "truth", "--language", "ko", "--verbose"]) == 0
    out = capsys.readouterr().out
    assert "split dev" in out and "| ko | 1 |" in out and "Misses:" in out
    code = cli.main(
        [
            "bench",
            "context",
            "--split",
            "test",
            "--budgets",
            "150,300",
            "--workdir",
            str(tmp_path / "w"),
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "split test" in out and "| proactive | 300 |" in out
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "x").write_text("x")
    assert cli.main(["bench", "truth", "--workdir", str(tmp_path / "busy")]) == 2
    assert cli.main(["bench", "context", "--budgets", "0"]) == 2


def test_mentions_matches_whole_words_and_korean_stems() -> None:
    assert mentions("Everything is at Ally now", "Ally")
    assert not mentions("Really lovely weather", "Ally")
    assert mentions("it starts at 11:00 now.", "11:00")
    assert not mentions("21:00", "1:00")
    assert mentions("해운대로 이사 왔어요", "해운대")
    assert mentions("Moved to DENVER", ["Boulder", "denver"])


def test_suites_are_declared_as_package_data() -> None:
    import tomllib

    root = Path(__file__).resolve().parents[2]
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["madeleine"]
    assert "bench/suites/*.json" in patterns
    shipped = root / "src" / "madeleine" / "bench" / "suites"
    assert {p.name for p in shipped.glob("*.json")} == {
        f"{kind}_{language}.json"
        for kind in ("truth", "context", "distractors")
        for language in LANGUAGES
    } | {"locomo_truth.json"}  # turn ids into LoCoMo, read at run time (bench truth --locomo)


def test_context_scenarios_get_more_small_talk_than_truth_ones() -> None:
    context = load_suite("context", languages=["ko"])[0]
    truth = load_suite("truth", languages=["ko"])[0]
    small = [s for s in context.sessions if s.id.startswith("smalltalk-")]
    assert len(small) == 8
    assert sum(s.id.startswith("smalltalk-") for s in truth.sessions) == 3
    assert len({tuple(m["content"] for m in s.messages) for s in small}) == 8


def test_companion_sessions_compete_but_do_not_give_answers_away() -> None:
    plain = {s.id: s for s in load_suite("context", distractors=False)}
    borrowed_any = False
    for scenario in load_suite("context"):
        borrowed = [s for s in scenario.sessions if s.id.startswith("other-")]
        borrowed_any = borrowed_any or bool(borrowed)
        own_last = max(s.time for s in plain[scenario.id].sessions)
        assert all(s.time < own_last for s in borrowed)
        assert scenario.last_time == max(s.time for s in scenario.sessions)
        names = {m.get("name") for s in borrowed for m in s.messages if m["role"] == "user"}
        assert names <= {scenario.user}
        owners = {s.id.rsplit("-", 1)[0].removeprefix("other-") for s in borrowed}
        assert all(plain[o].split == scenario.split for o in owners), scenario.id
        texts = [str(m["content"]) for s in borrowed for m in s.messages]
        for raw in scenario.questions:
            for fact in KeyFactQuestion.parse(raw).facts:
                leaked = [t for t in texts if mentions(t, fact)]
                assert not leaked, (scenario.id, fact, leaked)
    assert borrowed_any


@pytest.mark.parametrize("suite", SUITES)
def test_questions_are_asked_after_every_session(suite: str) -> None:
    for scenario in load_suite(suite):
        assert scenario.last_time == max(s.time for s in scenario.sessions)
        for raw in scenario.questions:
            if raw.get("now"):
                assert datetime.fromisoformat(raw["now"]) > scenario.last_time
