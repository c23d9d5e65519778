"""Consolidation with a configured strategy and with an LLM: contradictions kept side by side
under 'flag' are resolved once another strategy is configured, a repeated procedure is
written by the model in one call per cluster, and the model rates the importance of what the
rules leave open."""

from __future__ import annotations

from pathlib import Path

from madeleine import Memory
from tests.fake_llm import FakeLLM, fake_llm_fixture  # noqa: F401
from tests.fakes import HashingEmbedder

DAY = 86_400.0
T0 = 1_700_000_000.0


def llm_memory(tmp_path: Path, fake_llm: FakeLLM) -> Memory:
    """A store whose LLM is the scripted server; extraction fails, so the rules take over."""
    fake_llm.script(*[500] * 40)
    return Memory(
        tmp_path / "l",
        embedder=HashingEmbedder(dim=256),
        background=False,
        llm_base_url=fake_llm.base_url,
        llm_model="m",
        llm_max_retries=0,
    )


def test_contradictions_flagged_at_write_time_are_resolved_by_the_strategy(
    tmp_path: Path,
) -> None:
    where = tmp_path / "m"
    with Memory(
        where, embedder=HashingEmbedder(dim=256), background=False, conflict_strategy="flag"
    ) as memory:
        memory.add(
            [{"role": "user", "content": "I live in Lyon.", "timestamp": T0}],
            user_id="u",
            session_id="a",
        )
        memory.add(
            [{"role": "user", "content": "I live in Berlin.", "timestamp": T0 + 10 * DAY}],
            user_id="u",
            session_id="b",
        )
        assert memory.wait(30)
        both = [c.statement for c in memory.facts("u") if c.key == "location.home"]
        assert len(both) == 2  # flagged: kept side by side
        first = memory.consolidate("u", now=T0 + 11 * DAY)
        assert not [c for c in first.changes if c.action == "contradiction"]
    with Memory(where, embedder=HashingEmbedder(dim=256), background=False) as memory:
        report = memory.consolidate("u", now=T0 + 11 * DAY)
        resolved = [c for c in report.changes if c.action == "contradiction"]
        assert len(resolved) == 1 and resolved[0].detail["strategy"] == "latest"
        assert [c.statement for c in memory.facts("u") if c.key == "location.home"] == [
            "The user lives in Berlin."
        ]
        memory.undo(report.run, user_id="u")
        assert len([c for c in memory.facts("u") if c.key == "location.home"]) == 2


def test_with_an_llm_a_procedure_is_written_in_one_call_per_cluster(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    with llm_memory(tmp_path, fake_llm) as memory:
        for n in range(3):
            memory.add(
                [
                    {
                        "role": "user",
                        "content": "To file expenses, first I scan the receipts, then I "
                        "upload them, finally I email finance.",
                        "timestamp": T0 + n * 40 * DAY,
                    }
                ],
                user_id="u",
                session_id=f"s{n}",
            )
        assert memory.wait(30)
        fake_llm.clear()
        fake_llm.requests.clear()
        fake_llm.script(
            {"ratings": []},  # the importance call: the model rates nothing
            {"procedure": "Scan the receipts, upload them, then email finance."},
            *[500] * 10,  # the timeline or anything else asking: fails over to rules
        )
        report = memory.consolidate("u", now=T0 + 130 * DAY)
        assert report.llm_calls == 2 and report.counts().get("procedure") == 1
        card = next(c for c in memory.facts("u") if c.key.startswith("procedure."))
        assert card.statement.endswith("Scan the receipts, upload them, then email finance.")
        asked = [r for r in fake_llm.requests if "procedure" in str(r.get("response_format"))]
        assert len(asked) == 1


def test_with_an_llm_importance_the_rules_leave_open_is_rated_once(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    with llm_memory(tmp_path, fake_llm) as memory:
        memory.add(
            [
                {
                    "role": "user",
                    "content": "The spare key is under the blue flowerpot.",
                    "timestamp": T0,
                },
                {"role": "user", "content": "I watched a film about bees.", "timestamp": T0 + 60},
                {"role": "user", "content": "I am allergic to peanuts.", "timestamp": T0 + 120},
            ],
            user_id="u",
            session_id="s",
        )
        assert memory.wait(30)
        fake_llm.clear()
        fake_llm.requests.clear()
        fake_llm.script(  # the two turns the rules leave open, and the film's open card
            {
                "ratings": [
                    {"id": "1", "importance": 0.95},
                    {"id": "2", "importance": 7},
                    {"id": "3", "importance": 0.2},
                ]
            }
        )
        report = memory.consolidate("u", now=T0 + DAY)
        asked = [r for r in fake_llm.requests if "importance" in str(r.get("response_format"))]
        assert report.llm_calls == 1 and len(asked) == 1
        listed = asked[0]["messages"][-1]["content"]
        assert "flowerpot" in listed and "peanuts" not in listed  # the rules decided that one
        by_llm = {
            c.item: c.detail["importance"] for c in report.changes if c.detail.get("by") == "llm"
        }
        assert sorted(by_llm.values()) == [0.2, 0.95, 1.0]  # clamped to 0..1
        key = next(i for i, v in by_llm.items() if v == 0.95)
        assert memory.lifecycle(key, user_id="u").protected == "importance"
        fake_llm.requests.clear()
        again = memory.consolidate("u", now=T0 + DAY)
        assert again.changes == [] and again.llm_calls == 0  # a rating stands
