from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from madeleine.bench.locomo import load_locomo, parse_evidence, run_locomo, score_question
from madeleine.bench.metrics import ndcg_at, recall_at, session_recall

ROOT = Path(__file__).resolve().parents[2]
LOCOMO_DEV = ROOT.parent / "shared" / "bench" / "locomo" / "locomo-dev.json"


def _cli(*args: str, data: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run(
        [sys.executable, "-m", "madeleine.cli", "--data", str(data), *args],
        capture_output=True,
        text=True,
        input=stdin,
        env=env,
        timeout=300,
    )


def test_cli_add_search_context_stats_delete(tmp_path: Path) -> None:
    messages = [
        {"role": "user", "name": "Mina", "id": "m1", "content": "I'm allergic to peanuts."},
        {"role": "user", "name": "Mina", "id": "m2", "content": "We adopted a cat called Dubu."},
    ]
    chat = tmp_path / "chat.json"
    chat.write_text(json.dumps(messages))
    data = tmp_path / "data"
    added = _cli("add", "--user", "mina", "--session", "s1", str(chat), data=data)
    assert added.returncode == 0, added.stderr
    assert "added 2 messages" in added.stdout
    again = _cli(
        "add", "--user", "mina", "--session", "s1", "-", data=data, stdin=json.dumps(messages)
    )
    assert "added 0 messages (2 already present)" in again.stdout

    found = _cli("search", "--user", "mina", "food allergy", "--json", data=data)
    hits = json.loads(found.stdout)
    assert hits[0]["source_ids"] == ["m1"] and "channels" in hits[0]["explain"]

    ctx = _cli("context", "--user", "mina", "pets", "--budget", "60", data=data)
    assert "Dubu" in ctx.stdout and "/60 tokens" in ctx.stderr

    stats = json.loads(_cli("stats", data=data).stdout)
    assert stats["events"] == 2 and stats["integrity"]["episodes"] == 2
    # `madeleine stats | head`: a reader that goes away early is no crash
    piped = subprocess.Popen(
        [sys.executable, "-m", "madeleine.cli", "--data", str(data), "stats"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    assert piped.stdout is not None and piped.stderr is not None
    piped.stdout.close()  # before the command writes: its write meets a closed pipe
    errors = piped.stderr.read().decode()
    assert piped.wait(timeout=300) == 141 and "Traceback" not in errors, errors

    deleted = _cli("delete", hits[0]["id"], "--user", "mina", data=data)
    assert deleted.returncode == 0 and "deleted" in deleted.stdout
    exported = json.loads(_cli("export", "--user", "mina", data=data).stdout)
    assert [e["external_id"] for e in exported["events"]] == ["m2"]


def test_cli_search_lists_fact_hits_the_graph_reached(tmp_path: Path) -> None:
    """A fact reached by the graph walk has a graph score but no graph rank: the readable
    listing names the channel instead of failing on the missing rank."""
    messages = [
        {"role": "user", "name": "Mina", "id": "m1", "content": "Find me a flight to Tokyo."},
        {"role": "assistant", "id": "m2", "content": "JAL at 9am or ANA at 1pm?"},
        {"role": "user", "name": "Mina", "id": "m3", "content": "ok, book that one at 9am"},
    ]
    data = tmp_path / "data"
    _cli("add", "--user", "mina", "--session", "trip", "-", data=data, stdin=json.dumps(messages))
    listed = _cli("search", "--user", "mina", "which airline?", data=data)
    assert listed.returncode == 0, listed.stderr
    as_json = json.loads(
        _cli("search", "--user", "mina", "which airline?", "--json", data=data).stdout
    )
    assert listed.stdout.count("    id=") == len(as_json) > 0
    facts = [hit for hit in as_json if hit["kind"] == "fact"]
    assert facts, "the trip is a fact card: it should be among the hits"
    for hit in facts:
        assert f"id={hit['id']}" in listed.stdout


def test_cli_reports_bad_input_clearly(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"role": "user"}]))
    result = _cli("add", "--user", "u", str(bad), data=tmp_path / "d")
    assert result.returncode == 2
    assert "missing 'content'" in result.stderr and "Traceback" not in result.stderr
    missing = _cli("add", "--user", "u", str(tmp_path / "nope.json"), data=tmp_path / "d")
    assert missing.returncode == 2 and "nope.json" in missing.stderr


def test_metrics() -> None:
    ranked = ["a", "b", "a", "c", "d"]
    assert recall_at(ranked, {"a", "c"}, 1) == 0.5
    assert recall_at(ranked, {"a", "c"}, 3) == 1.0  # distinct ids: a, b, c
    assert ndcg_at(["x", "a"], {"a"}, 10) == pytest.approx(1 / 1.5849625, rel=1e-6)
    assert ndcg_at(["a"], {"a"}, 10) == 1.0
    assert session_recall(
        ["D1:1", "D2:3"], {"session_2", "session_3"}, 10, lambda d: "session_" + d[1:].split(":")[0]
    ) == (1.0, 0.0)
    assert parse_evidence(["D8:6; D9:17", "D:11:26", "D1:3"]) == {"D8:6", "D9:17", "D11:26", "D1:3"}
    assert score_question(["D1:3", "D2:1"], frozenset({"D1:3"}))["R@1"] == 1.0


def _tiny_locomo(path: Path) -> None:
    sample = {
        "sample_id": "tiny",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {
                    "speaker": "Ann",
                    "dia_id": "D1:1",
                    "text": "I started pottery classes last week.",
                },
                {
                    "speaker": "Ben",
                    "dia_id": "D1:2",
                    "text": "Nice! I am repairing my old bicycle.",
                },
            ],
            "session_2_date_time": "10:00 am on 20 June, 2023",
            "session_2": [
                {
                    "speaker": "Ann",
                    "dia_id": "D2:1",
                    "text": "My pottery bowl came out of the kiln!",
                    "blip_caption": "a photo of a blue ceramic bowl",
                },
                {"speaker": "Ben", "dia_id": "D2:2", "text": "I finally rode the bicycle to work."},
            ],
        },
        "qa": [
            {
                "question": "What hobby did Ann start?",
                "answer": "pottery",
                "evidence": ["D1:1"],
                "category": 4,
            },
            {
                "question": "What did Ben fix and then ride?",
                "answer": "bicycle",
                "evidence": ["D1:2", "D2:2"],
                "category": 1,
            },
            {
                "question": "What did Ann bake in a kiln?",
                "adversarial_answer": "x",
                "evidence": ["D2:1"],
                "category": 5,
            },
        ],
    }
    path.write_text(json.dumps([sample]))


def test_locomo_runner_on_a_tiny_conversation(tmp_path: Path) -> None:
    data = tmp_path / "tiny.json"
    _tiny_locomo(data)
    corpus = load_locomo(data)
    assert corpus[0].turns == 4
    assert (
        "[shares a photo: a photo of a blue ceramic bowl]" in corpus[0].sessions[1][2][0]["content"]
    )
    result = run_locomo(data, data_dir=tmp_path / "store")
    assert result.overall.count == 2 and result.by_category[5].count == 1
    assert result.overall.mean("R@10") == 1.0  # four turns: everything is in the top 10
    assert result.by_category[4].mean("R@1") == 1.0
    assert "1-4 overall" in result.table() and "turns/s" in result.summary()


def test_cli_bench_runs(tmp_path: Path) -> None:
    data = tmp_path / "tiny.json"
    _tiny_locomo(data)
    result = _cli("bench", "locomo", str(data), "--ablation", data=tmp_path / "unused")
    assert result.returncode == 0, result.stderr
    assert "single-hop" in result.stdout and "p50" in result.stdout
    ablation = result.stdout.split("Ablation")[1]
    for variant in ("no windows", "no time stage", "fusion = rrf", "bm25 only", "dense only"):
        assert f"| {variant} |" in ablation


@pytest.mark.slow
@pytest.mark.skipif(not LOCOMO_DEV.exists(), reason="LoCoMo dev split not present")
def test_locomo_dev_recall_target(tmp_path: Path) -> None:
    """The bar of the retrieval issue, on categories 1-4 of the dev split (dev numbers)."""
    result = run_locomo(LOCOMO_DEV, data_dir=tmp_path / "store")
    assert result.overall.mean("R@10") >= 0.75
    assert result.overall.mean("R@5") >= 0.65
    assert result.overall.mean("S_all@10") >= 0.85


def test_read_commands_need_a_store_and_data_goes_anywhere(tmp_path: Path) -> None:
    missing = tmp_path / "typo"
    result = _cli("stats", data=missing)
    assert result.returncode == 2 and "no memory store at" in result.stderr
    assert not missing.exists(), "a read command must not create a store"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    data = tmp_path / "d"
    added = subprocess.run(
        [sys.executable, "-m", "madeleine.cli", "add", "--user", "u", "-", "--data", str(data)],
        input='[{"content": "I live in Lisbon", "id": "a"}]',
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert added.returncode == 0, added.stderr
    assert (data / "memory.db").is_file()
