"""``madeleine bench extraction``: evidence parsing, the matcher, the metrics' definitions on a
hand-made set, and end-to-end runs on a tiny LoCoMo-shaped fixture, with rules and with a
scripted LLM on loopback."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from madeleine import cli
from madeleine.bench import extraction
from madeleine.bench.extraction import (
    Counts,
    ExtractedCard,
    ExtractionResult,
    Observation,
    SpeakerRun,
    content_words,
    count,
    dropped_words,
    evidence_of,
    judge,
    states,
)
from tests.fake_llm import FakeLLM, fake_llm_fixture  # noqa: F401
from tests.fakes import HashingEmbedder

NAMES = ("Caroline", "Melanie")


def test_evidence_parser_reads_several_and_malformed_ids() -> None:
    assert evidence_of("D1:3") == {"D1:3"}
    assert evidence_of("D1:3; D1:5") == {"D1:3", "D1:5"}
    assert evidence_of("D8:6; D9:17") == {"D8:6", "D9:17"}
    assert evidence_of("D:11:26") == {"D11:26"}
    assert evidence_of(["D15:3", "D15:5"]) == {"D15:3", "D15:5"}
    assert evidence_of([["D2:1"], "D2:4, D2:6"]) == {"D2:1", "D2:4", "D2:6"}
    for nothing in ("", "n/a", None, 17, {"D1:1": 1}):
        assert evidence_of(nothing) == frozenset()


def test_parse_observations_keeps_bare_statements_and_rejects_strangers() -> None:
    speakers, found = extraction.parse_observations(
        "conv-9",
        {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "sessions": {
                "S2": {
                    "date_time": "1:00 pm on 2 May, 2023",
                    "observations": {
                        "Ana": [["Ana paints.", "D2:1"], "Ana sings.", [], [3, "D2:2"]],
                        "Ben": [["Ben runs.", ["D2:3", "D2:5"]]],
                    },
                }
            },
        },
    )
    assert speakers == ("Ana", "Ben")
    assert [(o.speaker, o.session, o.statement, set(o.evidence)) for o in found] == [
        ("Ana", 2, "Ana paints.", {"D2:1"}),
        ("Ana", 2, "Ana sings.", set()),
        ("Ben", 2, "Ben runs.", {"D2:3", "D2:5"}),
    ]
    with pytest.raises(ValueError, match="unknown speaker"):
        extraction.parse_observations(
            "c",
            {"speaker_a": "A", "speaker_b": "B", "sessions": {"S1": {"observations": {"C": []}}}},
        )


def test_content_words_drop_stop_words_names_and_the_user_and_stem() -> None:
    dropped = dropped_words(NAMES)
    assert content_words("Caroline adopted two kids.", dropped) == {"adopt", "two", "kid"}
    assert content_words("The user's kids: adopting!", dropped) == {"kid", "adopt"}
    assert content_words("Melanie's users and Caroline", dropped) == frozenset()
    # other people's names stay: they carry the fact
    assert "max" in content_words("Caroline has a dog named Max", dropped)


def test_states_needs_at_least_half_of_the_content_words() -> None:
    dropped = dropped_words(NAMES)
    observation = content_words("Caroline adopted a dog named Max in Boston", dropped)
    assert observation == {"adopt", "dog", "name", "max", "boston"}

    def said(text: str) -> bool:
        return states(content_words(text, dropped), observation)

    assert said("The user adopted a dog named Rex.")  # adopt, dog, name: 3 of 5
    assert not said("The user adopted a dog.")  # 2 of 5: less than half
    four = content_words("Caroline adopted a dog named Max", dropped)
    assert states(content_words("The user is adopting dogs.", dropped), four)  # 2 of 4: half
    assert not states(content_words("The user has a dog.", dropped), four)  # 1 of 4
    assert not states(frozenset({"anything"}), frozenset())  # nothing to state


def _card(statement: str, *turns: str, status: str = "current") -> ExtractedCard:
    return ExtractedCard("other.x", statement, status, "rules", frozenset(turns))


def _obs(statement: str, *evidence: str, speaker: str = "Caroline") -> Observation:
    return Observation(speaker, 1, statement, frozenset(evidence))


def test_metrics_follow_the_definitions_on_a_hand_made_set() -> None:
    observations = (
        _obs("Caroline adopted a dog named Max.", "D1:1"),  # stated by a card of its turn
        _obs("Caroline lives in Boston with her partner.", "D1:3"),  # a card of its turn, unrelated
        _obs("Caroline is allergic to peanuts.", "D2:1", "D2:2"),  # stated, but from another turn
        _obs("Caroline went hiking with Melanie last weekend.", "D2:5"),  # no card at all
    )
    cards = (
        _card("The user adopted a dog named Rex.", "D1:1"),
        _card("The user likes jazz.", "D1:3", status="superseded"),
        _card("The user is allergic to peanuts.", "D1:9"),
        _card("The user lives in Boston.", "D2:2"),  # grounds the allergy, states Boston
    )
    verdicts = judge(observations, cards, NAMES)
    assert verdicts.observations == ((True, True), (True, False), (True, False), (False, False))
    assert verdicts.cards == (True, False, True, True)
    run = SpeakerRun("conv-1", "Caroline", NAMES, observations, cards, 2, 40, 20, 4.0)
    counts = count(run, verdicts)
    assert (counts.grounded_rate, counts.matched_rate, counts.precision) == (0.75, 0.25, 0.75)
    assert (counts.cards, counts.superseded, counts.digests) == (4, 1, 2)
    assert counts.cards_per_100 == 20.0 and counts.turns_per_second == 10.0

    # micro-averages over both speakers, not means of their rates
    other = SpeakerRun(
        "conv-1",
        "Melanie",
        NAMES,
        (_obs("Melanie paints sunsets.", "D1:2", speaker="Melanie"),),
        (_card("The user paints sunsets.", "D1:2"),),
        0,
        40,
        20,
        4.0,
    )
    result = ExtractionResult("rules", [run, other])
    total = result.total()
    assert total == result.by_conversation()["conv-1"]
    assert (total.observations, total.grounded, total.matched) == (5, 4, 2)
    assert total.matched_rate == 0.4 and total.precision == 0.8
    assert total.cards_per_100 == 12.5 and total.turns_per_second == 10.0
    table = result.table(per_speaker=True)
    assert "| conv-1 | 5 | 0.800 | 0.400 | 5 | 1 | 0.800 | 12.5 | 10.0 |" in table
    assert "| conv-1 Melanie | 1 | 1.000 | 1.000 | 1 | 0 | 1.000 | 5.0 | 10.0 |" in table
    assert table.splitlines()[-1].startswith("| all | 5 |")
    assert Counts() + Counts() == Counts()


def _write_fixture(tmp_path: Path) -> tuple[Path, Path]:
    """Two sessions of Ana (the user in her store) and Ben, and their observations."""
    conversation = {
        "speaker_a": "Ana",
        "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ana", "dia_id": "D1:1", "text": "I'm allergic to peanuts, sadly."},
            {"speaker": "Ben", "dia_id": "D1:2", "text": "Oh no! My daughter Sarah is too."},
            {"speaker": "Ana", "dia_id": "D1:3", "text": "Anyway, I live in Boston now."},
            {"speaker": "Ben", "dia_id": "D1:4", "text": "Nice city."},
        ],
        "session_2_date_time": "10:00 am on 20 May, 2023",
        "session_2": [
            {"speaker": "Ana", "dia_id": "D2:1", "text": "I painted a lake at sunrise."},
            {"speaker": "Ben", "dia_id": "D2:2", "text": "Beautiful!"},
        ],
    }
    locomo = tmp_path / "locomo.json"
    locomo.write_text(json.dumps([{"sample_id": "conv-1", "conversation": conversation}]))
    labels = {
        "conv-1": {
            "speaker_a": "Ana",
            "speaker_b": "Ben",
            "sessions": {
                "S1": {
                    "date_time": "1:56 pm on 8 May, 2023",
                    "observations": {
                        "Ana": [
                            ["Ana is allergic to peanuts.", "D1:1"],
                            ["Ana lives in Boston.", "D1:3; D1:4"],
                        ],
                        "Ben": [["Ben has a daughter named Sarah.", "D:1:2"]],
                    },
                },
                "S2": {
                    "date_time": "10:00 am on 20 May, 2023",
                    "observations": {"Ana": [["Ana painted a lake sunrise.", ["D2:1"]]]},
                },
            },
        }
    }
    observations = tmp_path / "observations.json"
    observations.write_text(json.dumps(labels))
    return locomo, observations


@pytest.fixture
def hashing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every store of the bench embeds with the instant test embedder."""
    monkeypatch.setattr(
        extraction, "memory_options", lambda embedder: {"embedder": HashingEmbedder()}
    )
    for name in ("MADELEINE_LLM_BASE_URL", "MADELEINE_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)


def _observation(report: dict[str, Any], speaker: str, statement: str) -> dict[str, Any]:
    found = report["conversations"]["conv-1"]["speakers"][speaker]["observations"]
    return next(o for o in found if o["statement"] == statement)


def test_cli_runs_the_rules_offline_on_a_tiny_fixture(
    tmp_path: Path, hashing: None, capsys: pytest.CaptureFixture[str]
) -> None:
    locomo, observations = _write_fixture(tmp_path)
    out = tmp_path / "report.json"
    code = cli.main(
        ["bench", "extraction", str(locomo), str(observations), "--json", str(out), "--verbose"]
    )
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "extractor: rules" in printed and "| conv-1 Ana | 3 |" in printed
    report = json.loads(out.read_text())
    assert report["extractor"] == "rules"
    ana = report["conversations"]["conv-1"]["speakers"]["Ana"]
    assert ana["counts"]["turns"] == 6 and ana["counts"]["user_turns"] == 3
    allergy = _observation(report, "Ana", "Ana is allergic to peanuts.")
    assert allergy["grounded"] and allergy["matched"]
    cards = {c["statement"]: c for c in ana["cards"]}
    assert cards["The user is allergic to peanuts."]["turns"] == ["D1:1"]
    assert _observation(report, "Ben", "Ben has a daughter named Sarah.")["evidence"] == ["D1:2"]
    total = report["total"]
    assert total["observations"] == 4 and total["turns"] == 12
    assert total["grounded"] >= 1 and total["matched"] >= 1

    # the first session only: its observations only
    assert (
        cli.main(["bench", "extraction", str(locomo), str(observations), "--limit-sessions", "1"])
        == 0
    )
    assert "| all | 3 |" in capsys.readouterr().out


def test_cli_refuses_bad_input_with_exit_code_2(
    tmp_path: Path, hashing: None, capsys: pytest.CaptureFixture[str]
) -> None:
    locomo, observations = _write_fixture(tmp_path)
    listed = tmp_path / "list.json"
    listed.write_text("[]")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    bad_calls = [
        [str(tmp_path / "missing.json"), str(observations)],
        [str(locomo), str(tmp_path / "missing.json")],
        [str(locomo), str(listed)],
        [str(observations), str(observations)],  # the files swapped
        [str(locomo), str(broken)],
        [str(locomo), str(observations), "--conversations", "conv-404"],
        [str(locomo), str(observations), "--limit-sessions", "0"],
        [str(locomo), str(observations), "--json", str(tmp_path / "no" / "such.json")],
    ]
    for args in bad_calls:
        assert cli.main(["bench", "extraction", *args]) == 2, args
        errors = capsys.readouterr().err.strip().splitlines()
        assert len(errors) == 1 and errors[0].startswith("madeleine: error:"), errors


def _llm_reply(request: dict[str, Any]) -> dict[str, Any]:
    """A model that knows one fact: whoever says 'peanuts' as the user is allergic to them."""
    system = str(request["messages"][0]["content"])
    prompt = str(request["messages"][-1]["content"])
    if "contradictions" in system:
        pairs = prompt.splitlines()[1:]
        return {
            "verdicts": [
                {"pair": n, "relation": "compatible", "reason": "test"} for n in range(len(pairs))
            ]
        }
    cards = []
    for event_id in re.findall(r"^\[(\d+)\] \([^)]*\) [^:]*/user: .*peanuts", prompt, re.M):
        cards.append(
            {
                "statement": "The user has a peanut allergy.",
                "category": "health",
                "subject": "user",
                "key": "health.allergy",
                "multi_valued": True,
                "attributes": [{"name": "allergen", "type": "text", "value": "peanuts"}],
                "sources": [int(event_id)],
            }
        )
    return {"cards": cards}


def test_cli_reports_the_llm_extractor_and_its_grounded_card(
    tmp_path: Path,
    hashing: None,
    fake_llm: FakeLLM,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    locomo, observations = _write_fixture(tmp_path)
    fake_llm.script(*[_llm_reply] * 40)
    monkeypatch.setenv("MADELEINE_LLM_BASE_URL", fake_llm.base_url)
    monkeypatch.setenv("MADELEINE_LLM_MODEL", "bench-model")
    monkeypatch.setenv("MADELEINE_LLM_MAX_RETRIES", "0")
    out = tmp_path / "report.json"
    code = cli.main(["bench", "extraction", str(locomo), str(observations), "--json", str(out)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "extractor: llm:bench-model" in printed
    assert fake_llm.requests and fake_llm.unscripted == 0
    report = json.loads(out.read_text())
    assert report["extractor"] == "llm:bench-model"
    ana = report["conversations"]["conv-1"]["speakers"]["Ana"]
    llm_cards = [c for c in ana["cards"] if c["extractor"] == "llm:bench-model"]
    assert [(c["statement"], c["turns"]) for c in llm_cards] == [
        ("The user has a peanut allergy.", ["D1:1"])
    ]
    allergy = _observation(report, "Ana", "Ana is allergic to peanuts.")
    assert allergy["grounded"] and allergy["matched"]
