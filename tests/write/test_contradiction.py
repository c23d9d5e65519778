"""The contradiction check: an LLM judges the similar-but-different band, rules otherwise."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from madeleine import Memory
from madeleine.embed.base import Embedder
from madeleine.facts.contradiction import LLMJudge, Pair, Verdict
from madeleine.llm.client import OpenAICompatibleLLM
from tests.fake_llm import FakeLLM, fake_llm_fixture  # noqa: F401


def _is_judge(request: dict[str, Any]) -> bool:
    return "contradictions" in str(request["messages"][0]["content"])


def _card(statement: str, key: str, attribute: tuple[str, str], category: str = "work") -> Any:
    """An extraction reply citing the window's first message."""

    def reply(request: dict[str, Any]) -> dict[str, Any]:
        prompt = str(request["messages"])
        ids = [int(part.split("]")[0]) for part in prompt.split("[")[1:] if part[:1].isdigit()]
        return {
            "cards": [
                {
                    "statement": statement,
                    "category": category,
                    "subject": "user",
                    "key": key,
                    "multi_valued": False,
                    "attributes": [{"name": attribute[0], "type": "text", "value": attribute[1]}],
                    "sources": ids[:1],
                }
            ]
        }

    return reply


def _verdict(relation: str, reason: str) -> Any:
    def reply(request: dict[str, Any]) -> dict[str, Any]:
        pairs = str(request["messages"][1]["content"]).splitlines()[1:]
        return {
            "verdicts": [
                {"pair": n, "relation": relation, "reason": reason} for n in range(len(pairs))
            ]
        }

    return reply


def _memory(tmp_path: Path, embedder: Embedder, fake_llm: FakeLLM) -> Memory:
    return Memory(
        tmp_path / "m",
        embedder=embedder,
        llm_base_url=fake_llm.base_url,
        llm_model="test-model",
        llm_max_retries=1,
    )


def _say(memory: Memory, text: str, message_id: str, when: str) -> None:
    memory.add(
        {"role": "user", "content": text, "id": message_id},
        user_id="u",
        session_id=message_id,
        timestamp=when,
    )
    memory.wait(timeout=120)


def test_the_llm_judges_cards_that_fill_different_slots(
    tmp_path: Path, embedder: Embedder, fake_llm: FakeLLM
) -> None:
    fake_llm.script(
        _card("The user works at Google.", "work.employer", ("employer", "Google")),
        _card("The user now works at Meta.", "work.company", ("company", "Meta")),
        _verdict("contradicts", "a new employer replaces the old one"),
    )
    with _memory(tmp_path, embedder, fake_llm) as memory:
        _say(memory, "I work at Google.", "a", "2024-01-01T09:00:00Z")
        _say(memory, "These days I'm at Meta.", "b", "2024-06-01T09:00:00Z")
        judged = [r for r in fake_llm.requests if _is_judge(r)]
        assert len(judged) == 1  # one call for the window
        prompt = str(judged[0]["messages"][1]["content"])
        assert "Google" in prompt and "Meta" in prompt
        current = [c.statement for c in memory.facts("u")]
        assert current == ["The user now works at Meta."]
        superseded = next(e for e in memory.routing_log("u") if e["decision"] == "superseded")
        assert superseded["detail"]["reason"].startswith("llm:test-model: a new employer")
        assert memory.facts("u", as_of="2024-03-01")[0].statement == "The user works at Google."


def test_the_judge_overrules_the_attribute_rule_when_both_can_hold(
    tmp_path: Path, embedder: Embedder, fake_llm: FakeLLM
) -> None:
    # the rules alone would supersede: same category, same attribute, another value
    fake_llm.script(
        _card("The user works at Google.", "work.employer", ("employer", "Google")),
        _card("The user also consults for Acme.", "work.side_job", ("employer", "Acme")),
        _verdict("compatible", "a side job next to the main one"),
    )
    with _memory(tmp_path, embedder, fake_llm) as memory:
        _say(memory, "I work at Google.", "a", "2024-01-01T09:00:00Z")
        _say(memory, "I also consult for Acme on weekends.", "b", "2024-02-01T09:00:00Z")
        assert len(memory.facts("u")) == 2
        added = [e for e in memory.routing_log("u") if e["decision"] == "added"]
        judged = added[0]["detail"]["judged"]
        assert judged[0]["relation"] == "compatible" and judged[0]["by"] == "llm:test-model"


def test_a_failing_judge_is_recorded_and_the_rules_decide(
    tmp_path: Path, embedder: Embedder, fake_llm: FakeLLM
) -> None:
    fake_llm.script(
        _card("The user works at Google.", "work.employer", ("employer", "Google")),
        _card("The user also consults for Acme.", "work.side_job", ("employer", "Acme")),
        "no idea",
        "{still no json",
    )
    with _memory(tmp_path, embedder, fake_llm) as memory:
        _say(memory, "I work at Google.", "a", "2024-01-01T09:00:00Z")
        _say(memory, "I also consult for Acme on weekends.", "b", "2024-02-01T09:00:00Z")
        log = memory.routing_log("u")
        fallback = [e for e in log if e["decision"] == "contradiction_check_fallback"]
        assert fallback and fallback[0]["detail"]["used"] == "rules"
        assert "invalid output after 2 attempt(s)" in fallback[0]["detail"]["error"]
        # the attribute rule: same category, another employer → the later card wins
        assert [c.statement for c in memory.facts("u")] == ["The user also consults for Acme."]
        assert fake_llm.remaining == 0


def test_no_llm_means_no_judge_and_rules_only(tmp_path: Path, embedder: Embedder) -> None:
    with Memory(tmp_path / "m", embedder=embedder) as memory:
        _say(memory, "I live in Beijing.", "a", "2023-01-01T09:00:00Z")
        _say(memory, "I moved to Shanghai.", "b", "2024-01-01T09:00:00Z")
        decisions = [e["decision"] for e in memory.routing_log("u")]
        assert "superseded" in decisions and "contradiction_check_fallback" not in decisions


def test_judge_answers_by_pair_number(fake_llm: FakeLLM) -> None:
    pairs = [
        Pair("The user lives in Seoul.", "The user lives in Busan.", "location", "user", 1),
        Pair("The user likes tea.", "The user works at Google.", "preference", "user", 2),
        Pair("The user is vegan.", "The user eats no meat.", "preference", "user", 3),
    ]
    fake_llm.script(
        {
            "verdicts": [
                {"pair": 2, "relation": "duplicate", "reason": "same diet"},
                {"pair": 0, "relation": "contradicts", "reason": "moved"},
                {"pair": 0, "relation": "compatible", "reason": "ignored: second answer"},
                {"pair": 7, "relation": "compatible", "reason": "ignored: no such pair"},
            ]
        }
    )
    with OpenAICompatibleLLM(fake_llm.base_url, "m") as llm:
        verdicts = LLMJudge(llm).judge(pairs)
    assert verdicts == [
        Verdict("contradicts", "moved"),
        None,  # unanswered: the rules decide this pair
        Verdict("duplicate", "same diet"),
    ]
    sent = str(fake_llm.requests[0]["messages"][1]["content"])
    assert sent.count('"pair"') == 3
