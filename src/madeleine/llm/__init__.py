"""LLM access for the write path: a protocol and an OpenAI-compatible HTTP client."""

from madeleine.llm.client import (
    LLM,
    LLMError,
    LLMInvalidOutput,
    LLMUnavailable,
    OpenAICompatibleLLM,
    extract_json_object,
    from_settings,
    strict_json_schema,
)

__all__ = [
    "LLM",
    "LLMError",
    "LLMInvalidOutput",
    "LLMUnavailable",
    "OpenAICompatibleLLM",
    "extract_json_object",
    "from_settings",
    "strict_json_schema",
]
