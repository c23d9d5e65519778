"""The LLM client and the LLM extractor against a real local OpenAI-compatible server."""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any

import pytest

from madeleine.config import Settings
from madeleine.facts.cards import Attribute, CardDraft, Category
from madeleine.facts.extract import ExtractInput
from madeleine.facts.llm_extractor import (
    SCHEMA_NAME,
    ExtractionOutcome,
    LLMExtractor,
    cards_schema,
    system_prompt,
)
from madeleine.llm import (
    LLMInvalidOutput,
    LLMUnavailable,
    OpenAICompatibleLLM,
    extract_json_object,
    from_settings,
)
from tests.fake_llm import FakeLLM, Raw, error_reply, fake_llm_fixture  # noqa: F401

T0 = datetime(2024, 9, 15, 10, 0)
PLACEHOLDER = "[pii:loyalty_number:v3k9q2m7xa]"
SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
    "additionalProperties": False,
}
ASK = [{"role": "user", "content": "say hi"}]


class TinySeatRules:
    """A real (tiny) rule extractor: 'I prefer <x> seats' in a user message → a seat card."""

    name = "tiny-rules"

    def extract(self, window: Sequence[ExtractInput]) -> list[CardDraft]:
        drafts = []
        for message in window:
            found = re.search(r"\bI prefer (\w+) seats\b", message.text)
            if message.role == "user" and found:
                seat = {"name": "seat", "type": "text", "value": found[1]}
                draft = {
                    "statement": f"The user prefers {found[1]} seats.",
                    "category": Category.PREFERENCE,
                    "key": "preference.seat",
                    "attributes": [Attribute.model_validate(seat)],
                    "sources": [message.event_id],
                }
                drafts.append(CardDraft.model_validate(draft))
        return drafts


def msg(event_id: int, text: str, role: str = "user", speaker: str | None = "Mina") -> ExtractInput:
    return ExtractInput(
        event_id=event_id,
        session_id="trip",
        role=role,
        speaker=speaker if role == "user" else None,
        text=text,
        occurred_at=T0 + timedelta(minutes=event_id),
    )


def trip_window() -> list[ExtractInput]:
    return [
        msg(
            101,
            "Help me book a flight to Tokyo next Friday. I prefer window seats and I'm "
            f"vegetarian. Also use my United MileagePlus number {PLACEHOLDER}.",
        ),
        msg(102, "Sure — JAL at 9am or ANA at 1pm?", role="assistant"),
        msg(103, "The morning one, please."),
    ]


def card(key: str, sources: list[int], **extra: Any) -> dict[str, Any]:
    """A card as a well-behaved model writes it (every field present, as strict mode asks)."""
    base: dict[str, Any] = {
        "statement": f"Fact for {key}.",
        "category": key.split(".")[0],
        "subject": "user",
        "relationship": None,
        "backstory": None,
        "attributes": [],
        "key": key,
        "multi_valued": False,
        "memory_type": "semantic",
        "stability": "stable",
        "importance": 0.6,
        "confidence": 0.9,
        "valid_from": None,
        "valid_to": None,
        "sources": sources,
    }
    base.update(extra)
    return base


def good_reply() -> dict[str, Any]:
    seat = card(
        "preference.seat",
        [101, 101],
        attributes=[{"name": "seat", "type": "text", "value": "window", "unit": None}],
    )
    loyalty = card(
        "account.loyalty.united_mileageplus",
        [101],
        attributes=[
            {"name": "programme", "type": "text", "value": "United MileagePlus", "unit": None},
            {"name": "number", "type": "identifier", "value": PLACEHOLDER, "unit": None},
        ],
    )
    return {"cards": [seat, loyalty]}


def make_llm(fake: FakeLLM, **kwargs: Any) -> OpenAICompatibleLLM:
    options: dict[str, Any] = {"retries": 2, "backoff_seconds": 0.01, "timeout_seconds": 5.0}
    options.update(kwargs)
    return OpenAICompatibleLLM(fake.base_url, "test-model", **options)


@pytest.fixture
def llm(fake_llm: FakeLLM) -> Iterator[OpenAICompatibleLLM]:
    client = make_llm(fake_llm)
    yield client
    client.close()


def extractor(llm: OpenAICompatibleLLM, max_retries: int = 2) -> LLMExtractor:
    return LLMExtractor(llm, TinySeatRules(), max_retries=max_retries)


def user_turns(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "user"]


# --- the client ---------------------------------------------------------------------------


def test_request_asks_for_strict_json_schema(fake_llm: FakeLLM, llm: OpenAICompatibleLLM) -> None:
    fake_llm.script({"answer": "hi"})
    assert llm.complete_json(ASK, SCHEMA, "greeting") == {"answer": "hi"}
    (request,) = fake_llm.requests
    assert request["model"] == "test-model"
    assert request["temperature"] == 0
    assert request["messages"] == ASK
    assert request["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "greeting", "schema": SCHEMA, "strict": True},
    }
    assert llm.response_format_mode == "json_schema"


@pytest.mark.parametrize(
    "content",
    [
        '```json\n{"answer": "hi"}\n```',
        '```\n{"answer": "hi"}\n```',
        'Sure! Here is the JSON you asked for:\n{"answer": "hi"}\nHope this helps {:}',
        'Here you go:\n```json\n{"answer": "hi"}\n```\nAnything else?',
        '  {"answer": "hi"}  ',
    ],
)
def test_fenced_and_prose_wrapped_json_is_accepted(
    fake_llm: FakeLLM, llm: OpenAICompatibleLLM, content: str
) -> None:
    fake_llm.script(content)
    assert llm.complete_json(ASK, SCHEMA, "greeting") == {"answer": "hi"}


def test_outermost_object_is_taken_with_braces_inside_strings() -> None:
    text = 'Result: {"a": {"b": "}{"}, "c": "```"} trailing } text'
    assert extract_json_object(text) == {"a": {"b": "}{"}, "c": "```"}
    with pytest.raises(ValueError, match="no JSON object"):
        extract_json_object("I could not find anything.")
    with pytest.raises(ValueError, match="no JSON object"):
        extract_json_object("[1, 2]")
    with pytest.raises(json.JSONDecodeError):
        extract_json_object('{"a": 1,')


def test_malformed_content_raises_invalid_output_with_raw_text(
    fake_llm: FakeLLM, llm: OpenAICompatibleLLM
) -> None:
    bad = '{"answer": "hi",,}'
    fake_llm.script(bad)
    with pytest.raises(LLMInvalidOutput) as caught:
        llm.complete_json(ASK, SCHEMA, "greeting")
    assert caught.value.raw == bad
    assert "Expecting property name" in caught.value.error
    assert bad not in str(caught.value)  # the message never quotes the model's text
    assert len(fake_llm.requests) == 1  # bad content is not a transport problem: no retry


def test_http_500_then_success_is_retried(fake_llm: FakeLLM, llm: OpenAICompatibleLLM) -> None:
    fake_llm.script(500, 503, {"answer": "hi"})
    assert llm.complete_json(ASK, SCHEMA, "greeting") == {"answer": "hi"}
    assert len(fake_llm.requests) == 3


def test_429_honours_retry_after(fake_llm: FakeLLM) -> None:
    body = json.dumps({"error": {"message": "slow down"}})
    slow_down = Raw(body, status=429, headers=(("Retry-After", "0.3"),))
    fake_llm.script(slow_down, {"answer": "hi"})
    with make_llm(fake_llm, retries=1, backoff_seconds=0.01) as client:
        started = time.perf_counter()
        assert client.complete_json(ASK, SCHEMA, "greeting") == {"answer": "hi"}
        waited = time.perf_counter() - started
    assert len(fake_llm.requests) == 2
    assert 0.3 <= waited < 3.0  # the server's wish, not the 0.01 s backoff


def test_persistent_server_errors_end_in_unavailable(
    fake_llm: FakeLLM, llm: OpenAICompatibleLLM
) -> None:
    fake_llm.script(500, 502, 500)
    with pytest.raises(LLMUnavailable, match="after 3 attempt"):
        llm.complete_json(ASK, SCHEMA, "greeting")
    assert len(fake_llm.requests) == 3


def test_client_errors_are_not_retried(fake_llm: FakeLLM, llm: OpenAICompatibleLLM) -> None:
    fake_llm.script(error_reply(401, "Incorrect API key provided"))
    with pytest.raises(LLMUnavailable, match="HTTP 401: Incorrect API key"):
        llm.complete_json(ASK, SCHEMA, "greeting")
    assert len(fake_llm.requests) == 1


def test_connection_refused_is_unavailable(fake_llm: FakeLLM, llm: OpenAICompatibleLLM) -> None:
    fake_llm.stop()
    with pytest.raises(LLMUnavailable, match="ConnectError"):
        llm.complete_json(ASK, SCHEMA, "greeting")


def test_timeout_is_retried_then_unavailable(fake_llm: FakeLLM) -> None:
    fake_llm.script(Raw("{}", delay=1.0), Raw("{}", delay=1.0))
    with (
        make_llm(fake_llm, retries=1, timeout_seconds=0.2) as client,
        pytest.raises(LLMUnavailable, match="Timeout"),
    ):
        client.complete_json(ASK, SCHEMA, "greeting")
    assert len(fake_llm.requests) == 2


def test_a_reply_that_is_not_a_chat_completion_is_unavailable(
    fake_llm: FakeLLM, llm: OpenAICompatibleLLM
) -> None:
    fake_llm.script(Raw("<html>gateway</html>", content_type="text/html"))
    with pytest.raises(LLMUnavailable, match="not a chat completion"):
        llm.complete_json(ASK, SCHEMA, "greeting")


def _rejects(*kinds: str) -> Any:
    """A server that refuses these response_format types, the way vLLM/LiteLLM word it."""

    def reply(request: dict[str, Any]) -> Any:
        kind = request.get("response_format", {}).get("type")
        if kind in kinds:
            return error_reply(400, f"response_format type '{kind}' is not supported")
        return {"answer": kind or "none"}

    return reply


def test_rejected_json_schema_falls_back_to_json_object_and_remembers(
    fake_llm: FakeLLM, llm: OpenAICompatibleLLM
) -> None:
    fake_llm.script(_rejects("json_schema"), _rejects("json_schema"), _rejects("json_schema"))
    assert llm.complete_json(ASK, SCHEMA, "greeting") == {"answer": "json_object"}
    assert llm.response_format_mode == "json_object"
    assert llm.complete_json(ASK, SCHEMA, "greeting") == {"answer": "json_object"}
    kinds = [r["response_format"]["type"] for r in fake_llm.requests]
    assert kinds == ["json_schema", "json_object", "json_object"]  # remembered: no 2nd refusal
    # without server-side enforcement the model is shown the schema itself
    first = fake_llm.requests[1]["messages"][0]
    assert first["role"] == "system"
    assert json.dumps(SCHEMA) in first["content"]
    assert fake_llm.requests[1]["messages"][1:] == ASK


def test_rejected_json_object_falls_back_to_no_response_format(
    fake_llm: FakeLLM, llm: OpenAICompatibleLLM
) -> None:
    reply = _rejects("json_schema", "json_object")
    fake_llm.script(reply, reply, reply, reply)
    assert llm.complete_json(ASK, SCHEMA, "greeting") == {"answer": "none"}
    assert llm.complete_json(ASK, SCHEMA, "greeting") == {"answer": "none"}
    assert llm.response_format_mode == "none"
    assert [r.get("response_format", {}).get("type") for r in fake_llm.requests] == [
        "json_schema",
        "json_object",
        None,
        None,
    ]


def test_other_400s_do_not_change_the_response_format(
    fake_llm: FakeLLM, llm: OpenAICompatibleLLM
) -> None:
    fake_llm.script(error_reply(400, "model 'nope' does not exist"))
    with pytest.raises(LLMUnavailable, match="HTTP 400"):
        llm.complete_json(ASK, SCHEMA, "greeting")
    assert llm.response_format_mode == "json_schema"


def test_api_key_is_sent_as_bearer(fake_llm: FakeLLM) -> None:
    fake_llm.script({"answer": "hi"}, {"answer": "hi"})
    with OpenAICompatibleLLM(fake_llm.base_url, "m", api_key="sk-test-123") as client:
        client.complete_json(ASK, SCHEMA, "greeting")
    with OpenAICompatibleLLM(fake_llm.base_url, "m") as client:
        client.complete_json(ASK, SCHEMA, "greeting")
    assert fake_llm.headers[0]["authorization"] == "Bearer sk-test-123"
    assert "authorization" not in fake_llm.headers[1]


def test_from_settings(fake_llm: FakeLLM) -> None:
    assert from_settings(Settings.model_validate({})) is None
    assert from_settings(Settings.model_validate({"llm_base_url": fake_llm.base_url})) is None
    assert from_settings(Settings.model_validate({"llm_model": "m"})) is None
    environ = {
        "MADELEINE_LLM_BASE_URL": fake_llm.base_url + "/",
        "MADELEINE_LLM_MODEL": "qwen2.5-7b",
        "MADELEINE_LLM_API_KEY": "k",
        "MADELEINE_LLM_TIMEOUT_SECONDS": "7.5",
    }
    settings = Settings.from_env(environ)
    client = from_settings(settings)
    assert client is not None
    with client:
        assert client.base_url == fake_llm.base_url
        assert client.name == "qwen2.5-7b"
        assert client.timeout_seconds == 7.5
        fake_llm.script({"answer": "hi"})
        assert client.complete_json(ASK, SCHEMA, "greeting") == {"answer": "hi"}
    assert fake_llm.requests[0]["model"] == "qwen2.5-7b"
    assert fake_llm.headers[0]["authorization"] == "Bearer k"


def test_logs_carry_sizes_never_contents(
    fake_llm: FakeLLM, llm: OpenAICompatibleLLM, caplog: pytest.LogCaptureFixture
) -> None:
    secret = "my-very-private-sentence"
    fake_llm.script(500, {"answer": secret})
    with caplog.at_level(logging.DEBUG):
        llm.complete_json([{"role": "user", "content": secret}], SCHEMA, "greeting")
    assert "test-model" in caplog.text
    assert "HTTP 500" in caplog.text
    assert "HTTP 200" in caplog.text
    assert secret not in caplog.text


def test_cards_schema_is_strict_compatible() -> None:
    schema = cards_schema()

    def objects(node: Any) -> Iterator[dict[str, Any]]:
        if isinstance(node, dict):
            if node.get("type") == "object":
                yield node
            for key, value in node.items():
                if key in ("properties", "$defs"):
                    for sub in value.values():
                        yield from objects(sub)
                else:
                    yield from objects(value)
        elif isinstance(node, list):
            for item in node:
                yield from objects(item)

    found = list(objects(schema))
    assert len(found) == 3  # the envelope, CardDraft, Attribute
    for node in found:
        assert node["additionalProperties"] is False
        assert sorted(node["required"]) == sorted(node["properties"])
    text = json.dumps(schema)
    for keyword in ('"default"', '"minLength"', '"maxLength"', '"title"'):
        assert keyword not in text
    assert set(schema["$defs"]["Category"]["enum"]) == {c.value for c in Category}
    # every field of the card is in the schema, so a strict model can fill every one
    assert set(schema["$defs"]["CardDraft"]["properties"]) == set(CardDraft.model_fields)


# --- the extractor ------------------------------------------------------------------------


def test_valid_output_becomes_cards(fake_llm: FakeLLM, llm: OpenAICompatibleLLM) -> None:
    fake_llm.script(good_reply())
    ex = extractor(llm)
    drafts, outcome = ex.extract_with_outcome(trip_window())
    assert ex.name == "llm:test-model"
    assert [d.key for d in drafts] == ["preference.seat", "account.loyalty.united_mileageplus"]
    assert drafts[0].sources == [101]  # de-duplicated
    assert drafts[1].attributes[1].value == PLACEHOLDER
    assert outcome == ExtractionOutcome(
        "llm", "llm:test-model", 1, None, 0, (), event_ids=(101, 102, 103)
    )
    request = fake_llm.requests[0]
    assert request["response_format"]["json_schema"]["name"] == SCHEMA_NAME
    assert request["response_format"]["json_schema"]["schema"] == cards_schema()


def test_prompt_lists_messages_with_event_ids_and_keeps_placeholders(
    fake_llm: FakeLLM, llm: OpenAICompatibleLLM
) -> None:
    fake_llm.script({"cards": []})
    drafts = extractor(llm).extract(trip_window())
    assert drafts == []
    (request,) = fake_llm.requests
    system, user = request["messages"]
    assert system["role"] == "system"
    assert (
        "| `account.loyalty.<programme>` | no | programme (text), number (identifier) |"
        in (system["content"])
    )
    assert "verbatim" in system["content"]
    assert "sources" in system["content"]
    lines = user["content"].splitlines()
    assert lines[2].startswith("[101] (Sun 2024-09-15T11:41) Mina/user: Help me book a flight")
    assert PLACEHOLDER in lines[2]
    assert lines[3] == "[102] (Sun 2024-09-15T11:42) assistant: Sure — JAL at 9am or ANA at 1pm?"
    assert lines[4].startswith("[103] ")


def test_system_prompt_uses_the_conventions_table_of_cards() -> None:
    from madeleine.facts import cards

    assert cards.__doc__ is not None
    table_rows = [line for line in cards.__doc__.splitlines() if line.startswith("|")]
    assert len(table_rows) > 10
    prompt = system_prompt()
    for row in table_rows:
        assert row.replace("``", "`") in prompt


def test_one_call_per_window(fake_llm: FakeLLM, llm: OpenAICompatibleLLM) -> None:
    window = [
        msg(i, f"message number {i}", role="user" if i % 2 else "assistant") for i in range(1, 11)
    ]
    fake_llm.script({"cards": [card("preference.like", [1, 3, 5])]})
    drafts, outcome = extractor(llm).extract_with_outcome(window)
    assert len(fake_llm.requests) == 1
    assert [d.sources for d in drafts] == [[1, 3, 5]]
    prompt = user_turns(fake_llm.requests[0])[0]
    for i in range(1, 11):
        assert f"[{i}] (" in prompt
    assert outcome.attempts == 1


def test_malformed_json_is_repaired_with_the_exact_error(
    fake_llm: FakeLLM, llm: OpenAICompatibleLLM
) -> None:
    bad = '{"cards": [{"statement": "The user prefers window seats", category: "preference"}]}'
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(bad)
    fake_llm.script(bad, good_reply())
    drafts, outcome = extractor(llm).extract_with_outcome(trip_window())
    assert len(drafts) == 2
    assert outcome.extractor == "llm"
    assert outcome.attempts == 2
    assert outcome.error is None
    repair = fake_llm.requests[1]["messages"]
    assert repair[:2] == fake_llm.requests[0]["messages"]  # same conversation, continued
    assert repair[2] == {"role": "assistant", "content": bad}
    assert repair[3]["role"] == "user"
    assert str(expected.value) in repair[3]["content"]


def test_schema_violations_are_repaired_with_the_field_paths(
    fake_llm: FakeLLM, llm: OpenAICompatibleLLM
) -> None:
    wrong = {"cards": [card("preference.seat", [101], category="hobby", importance=3)]}
    fake_llm.script(wrong, good_reply())
    drafts, outcome = extractor(llm).extract_with_outcome(trip_window())
    assert len(drafts) == 2
    assert outcome.attempts == 2
    repair = fake_llm.requests[1]["messages"]
    assert json.loads(repair[2]["content"]) == wrong
    error = repair[3]["content"]
    assert "cards[0].category: Input should be 'identity'" in error
    assert "cards[0].importance: Input should be less than or equal to 1" in error


def test_always_malformed_falls_back_to_rules_and_records_it(
    fake_llm: FakeLLM, llm: OpenAICompatibleLLM
) -> None:
    fake_llm.script("not json at all", '{"cards": [', {"cards": "none"})
    ex = extractor(llm, max_retries=2)
    drafts = ex.extract(trip_window())
    assert [(d.key, d.sources) for d in drafts] == [("preference.seat", [101])]
    assert drafts == TinySeatRules().extract(trip_window())
    outcome = ex.last_outcome
    assert outcome is not None
    assert outcome.extractor == "rules-fallback"
    assert outcome.producer == "tiny-rules"
    assert outcome.attempts == 3
    assert outcome.error is not None
    assert outcome.error.startswith("invalid output after 3 attempt(s)")
    assert "cards: Input should be a valid list" in outcome.error  # the last problem
    assert len(fake_llm.requests) == 3
    assert fake_llm.remaining == 0


def test_no_repairs_when_max_retries_is_zero(fake_llm: FakeLLM, llm: OpenAICompatibleLLM) -> None:
    fake_llm.script("garbage", good_reply())
    drafts, outcome = extractor(llm, max_retries=0).extract_with_outcome(trip_window())
    assert outcome.extractor == "rules-fallback"
    assert outcome.attempts == 1
    assert len(fake_llm.requests) == 1
    assert len(drafts) == 1


def test_http_500_then_success_in_the_extractor(
    fake_llm: FakeLLM, llm: OpenAICompatibleLLM
) -> None:
    fake_llm.script(500, good_reply())
    drafts, outcome = extractor(llm).extract_with_outcome(trip_window())
    assert len(drafts) == 2
    assert outcome.extractor == "llm"
    assert outcome.attempts == 1  # transport retries are the client's business
    assert len(fake_llm.requests) == 2


def test_unreachable_endpoint_falls_back_without_repairs(
    fake_llm: FakeLLM, llm: OpenAICompatibleLLM
) -> None:
    fake_llm.stop()
    drafts, outcome = extractor(llm).extract_with_outcome(trip_window())
    assert [d.key for d in drafts] == ["preference.seat"]
    assert outcome.extractor == "rules-fallback"
    assert outcome.attempts == 1
    assert outcome.error is not None
    assert outcome.error.startswith("LLMUnavailable:")
    assert "ConnectError" in outcome.error


def test_response_format_rejection_in_the_extractor(
    fake_llm: FakeLLM, llm: OpenAICompatibleLLM
) -> None:
    def reply(request: dict[str, Any]) -> Any:
        if request["response_format"]["type"] == "json_schema":
            return error_reply(400, "Invalid schema for response_format 'memory_cards'")
        return good_reply()

    fake_llm.script(reply, reply)
    drafts, outcome = extractor(llm).extract_with_outcome(trip_window())
    assert len(drafts) == 2
    assert outcome.extractor == "llm"
    retry = fake_llm.requests[1]
    assert retry["response_format"] == {"type": "json_object"}
    # one system turn, first: the card instructions followed by the schema
    assert [m["role"] for m in retry["messages"]] == ["system", "user"]
    system = retry["messages"][0]["content"]
    assert system.startswith(fake_llm.requests[0]["messages"][0]["content"])
    assert json.dumps(cards_schema()) in system


def test_ungrounded_cards_are_dropped_with_reasons(
    fake_llm: FakeLLM, llm: OpenAICompatibleLLM
) -> None:
    altered = "[pii:loyalty_number:v3k9q2m7xb]"
    fake_llm.script(
        {
            "cards": [
                card("preference.seat", [101]),
                card("plan.trip.tokyo", [101, 999]),
                card("preference.airline", [102]),
                card("account.loyalty.united", [101], statement=f"Number {altered}."),
                card("preference.diet", []),
                card("plan.trip.tokyo", [103, 101]),
            ]
        }
    )
    drafts, outcome = extractor(llm).extract_with_outcome(trip_window())
    assert [(d.key, d.sources) for d in drafts] == [
        ("preference.seat", [101]),
        ("plan.trip.tokyo", [101, 103]),
    ]
    assert outcome.extractor == "llm"
    assert outcome.dropped == 4
    reasons = "\n".join(outcome.drop_reasons)
    assert "card 1 (key 'plan.trip.tokyo'): sources [999] are not in this window" in reasons
    assert "card 2 (key 'preference.airline'): no source is a user message" in reasons
    assert f"card 3 (key 'account.loyalty.united'): placeholder(s) ['{altered}']" in reasons
    assert "card 4 (key 'preference.diet'): no source event ids" in reasons


def test_empty_window_makes_no_call(fake_llm: FakeLLM, llm: OpenAICompatibleLLM) -> None:
    drafts, outcome = extractor(llm).extract_with_outcome([])
    assert drafts == []
    assert outcome.attempts == 0
    assert fake_llm.requests == []
