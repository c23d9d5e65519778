"""The rolling summary with an LLM configured: one call folds the new messages into the
previous summary; a failing model falls back to the heuristic one."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from madeleine.llm.client import OpenAICompatibleLLM
from madeleine.shortterm.summary import LLMSummarizer
from madeleine.store.records import BufferedMessage
from tests.fake_llm import FakeLLM, fake_llm_fixture  # noqa: F401

MESSAGES = [
    BufferedMessage("user", "I want to fly to Tokyo on Friday. Morning if possible.", 1.0),
    BufferedMessage("assistant", "JAL at 9am or ANA at 1pm?", 2.0),
]


@pytest.fixture
def llm(fake_llm: FakeLLM) -> Iterator[OpenAICompatibleLLM]:
    client = OpenAICompatibleLLM(
        fake_llm.base_url, "test-model", retries=0, backoff_seconds=0.01, timeout_seconds=5.0
    )
    yield client
    client.close()


def test_the_llm_folds_new_messages_into_the_summary(
    fake_llm: FakeLLM, llm: OpenAICompatibleLLM
) -> None:
    fake_llm.script({"summary": "Mina wants a Friday morning flight to Tokyo (JAL 9am?)."})
    summary = LLMSummarizer(llm)("Mina is planning a trip.", MESSAGES)
    assert summary == "Mina wants a Friday morning flight to Tokyo (JAL 9am?)."
    prompt = fake_llm.requests[0]["messages"][-1]["content"]
    assert "Mina is planning a trip." in prompt and "JAL at 9am" in prompt


def test_a_failing_llm_falls_back_to_the_heuristic(
    fake_llm: FakeLLM, llm: OpenAICompatibleLLM
) -> None:
    fake_llm.script(500)
    summary = LLMSummarizer(llm)("", MESSAGES)
    assert summary.splitlines() == [
        "- user: I want to fly to Tokyo on Friday.",
        "- assistant: JAL at 9am or ANA at 1pm?",
    ]
