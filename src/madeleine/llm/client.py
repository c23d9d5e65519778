"""An LLM behind a small protocol, and a client for any OpenAI-compatible chat endpoint.

The write path only ever needs one thing from a model: a JSON object shaped by a schema. The
client asks for schema-constrained output and degrades, once per server and remembered, to
JSON mode and then to a plain request (the schema then travels in the prompt), because
vLLM, Ollama, LiteLLM and older OpenAI-style servers differ in what they accept. Prompts may
carry user data, so only the model, HTTP status and sizes are logged — never contents.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from typing import Any, Literal, Protocol, cast

import httpx

from madeleine.config import Settings
from madeleine.errors import MadeleineError

log = logging.getLogger(__name__)

Messages = list[dict[str, str]]
ResponseFormatMode = Literal["json_schema", "json_object", "none"]
_MODES: tuple[ResponseFormatMode, ...] = ("json_schema", "json_object", "none")


class LLMError(MadeleineError):
    """The model could not deliver a usable answer; callers fall back to rules."""


class LLMUnavailable(LLMError):
    """The endpoint could not be reached or kept failing (after retries)."""


class LLMInvalidOutput(LLMError):
    """The model answered, but not with a JSON object. ``raw`` is what it said (for a repair
    turn); ``error`` says what is wrong. The message itself never quotes the raw text."""

    def __init__(self, error: str, raw: str) -> None:
        super().__init__(f"invalid JSON from the model ({len(raw)} chars): {error}")
        self.error = error
        self.raw = raw


class LLM(Protocol):
    """A chat model that answers with one JSON object matching ``schema``."""

    name: str

    def complete_json(
        self, messages: Messages, schema: dict[str, Any], schema_name: str
    ) -> dict[str, Any]: ...


# Keywords that OpenAI's strict mode (and several guided-decoding backends) refuse; pydantic
# still checks lengths and ranges after the fact, and a repair turn fixes what slips through.
_UNENFORCED_KEYWORDS = frozenset(
    {"default", "title", "minLength", "maxLength", "minimum", "maximum", "minItems", "maxItems"}
)


def strict_json_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of a (pydantic) JSON schema that strict structured output accepts: every object
    closed (``additionalProperties: false``) with all its properties required (optional ones
    stay nullable), and the keywords strict mode rejects removed."""
    return cast(dict[str, Any], _strict_node(schema))


def _strict_node(node: Any) -> Any:
    if isinstance(node, list):
        return [_strict_node(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _UNENFORCED_KEYWORDS:
            continue
        if key in ("properties", "$defs"):  # maps of names to schemas: keep the names
            out[key] = {name: _strict_node(sub) for name, sub in value.items()}
        else:
            out[key] = _strict_node(value)
    if "properties" in out:
        out["required"] = list(out["properties"])
        out["additionalProperties"] = False
    return out


def extract_json_object(text: str) -> dict[str, Any]:
    """The outermost JSON object in a model's reply, tolerating ```json fences, leading prose
    and trailing chatter — models add them even when told not to.

    Raises ``ValueError`` (a ``json.JSONDecodeError`` when the JSON itself is broken).
    """
    candidates = [*_fenced_blocks(text), text]
    first_error: ValueError | None = None
    decoder = json.JSONDecoder()
    for candidate in candidates:
        start = candidate.find("{")
        if start < 0:
            first_error = first_error or ValueError("no JSON object found in the reply")
            continue
        try:
            value, _ = decoder.raw_decode(candidate, start)
        except json.JSONDecodeError as exc:
            first_error = first_error or exc
            continue
        assert isinstance(value, dict)  # decoding started at "{"
        return cast(dict[str, Any], value)
    assert first_error is not None
    raise first_error


def _fenced_blocks(text: str) -> list[str]:
    """Bodies of ``` fenced blocks, in order (the info string, e.g. 'json', is dropped)."""
    blocks: list[str] = []
    parts = text.split("```")
    for body in parts[1:-1:2]:  # odd parts sit between an opening and a closing fence
        newline = body.find("\n")
        head = body[:newline] if newline >= 0 else ""
        blocks.append(body[newline + 1 :] if head.strip().isalnum() or not head.strip() else body)
    return blocks


class OpenAICompatibleLLM:
    """POST {base_url}/chat/completions over httpx (OpenAI, vLLM, Ollama, LiteLLM, ...).

    Transport errors, 429 and 5xx are retried with exponential backoff; other HTTP errors
    fail at once (a wrong key or model will not fix itself). Thread-safe: one connection pool.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        timeout_seconds: float = 60.0,
        retries: int = 3,
        backoff_seconds: float = 0.5,
        max_backoff_seconds: float = 8.0,
        max_tokens: int | None = None,
    ) -> None:
        if retries < 0:
            raise ValueError("retries must be >= 0")
        self.name = model
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.timeout_seconds = timeout_seconds
        self._url = f"{self.base_url}/chat/completions"
        self._retries = retries
        self._backoff = backoff_seconds
        self._max_backoff = max_backoff_seconds
        self._max_tokens = max_tokens
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(timeout=httpx.Timeout(timeout_seconds), headers=headers)
        self._mode_index = 0
        self._lock = threading.Lock()

    @property
    def response_format_mode(self) -> ResponseFormatMode:
        """What this server accepted last: 'json_schema', 'json_object' or 'none'."""
        return _MODES[self._mode_index]

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> OpenAICompatibleLLM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def complete_json(
        self, messages: Messages, schema: dict[str, Any], schema_name: str
    ) -> dict[str, Any]:
        content = self._complete(messages, schema, schema_name)
        try:
            return extract_json_object(content)
        except ValueError as exc:
            raise LLMInvalidOutput(str(exc), content) from exc

    def _complete(self, messages: Messages, schema: dict[str, Any], schema_name: str) -> str:
        while True:
            mode_index = self._mode_index
            mode = _MODES[mode_index]
            response = self._post(self._payload(messages, schema, schema_name, mode))
            if mode != "none" and _rejects_response_format(response):
                with self._lock:  # remember for every later call; never step back up
                    self._mode_index = max(self._mode_index, mode_index + 1)
                log.warning(
                    "LLM endpoint %s rejected response_format %s (HTTP %d); using %s from now on",
                    self.base_url,
                    mode,
                    response.status_code,
                    _MODES[self._mode_index],
                )
                continue
            if response.status_code != 200:
                raise LLMUnavailable(
                    f"{self._url} answered HTTP {response.status_code}: {_error_text(response)}"
                )
            return _message_content(response)

    def _payload(
        self, messages: Messages, schema: dict[str, Any], schema_name: str, mode: str
    ) -> dict[str, Any]:
        payload: dict[str, Any] = {"model": self.model, "temperature": 0}
        if self._max_tokens is not None:
            payload["max_tokens"] = self._max_tokens
        if mode == "json_schema":
            payload["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "schema": schema, "strict": True},
            }
            payload["messages"] = messages
            return payload
        if mode == "json_object":
            payload["response_format"] = {"type": "json_object"}
        # The server will not enforce the schema: the model has to read it. It joins the first
        # system message, because many chat templates refuse a system turn anywhere else.
        instruction = (
            "Answer with one JSON object only (no prose, no code fences) that matches this "
            f"JSON schema named {schema_name!r}:\n{json.dumps(schema, ensure_ascii=False)}"
        )
        if messages and messages[0].get("role") == "system":
            first = {**messages[0], "content": f"{messages[0]['content']}\n\n{instruction}"}
            payload["messages"] = [first, *messages[1:]]
        else:
            payload["messages"] = [{"role": "system", "content": instruction}, *messages]
        return payload

    def _post(self, payload: dict[str, Any]) -> httpx.Response:
        """One request, retried on transport errors, 429 and 5xx."""
        body = json.dumps(payload, ensure_ascii=False).encode()
        for attempt in range(self._retries + 1):
            started = time.perf_counter()
            try:
                response = self._http.post(
                    self._url, content=body, headers={"Content-Type": "application/json"}
                )
            except httpx.TransportError as exc:
                problem = f"{type(exc).__name__}: {exc}"
                delay = self._delay(attempt, None)
            else:
                log.info(
                    "LLM %s: HTTP %d, request %d bytes, reply %d bytes, %.2f s%s",
                    self.model,
                    response.status_code,
                    len(body),
                    len(response.content),
                    time.perf_counter() - started,
                    _usage_note(response),
                )
                if response.status_code != 429 and response.status_code < 500:
                    return response
                problem = f"HTTP {response.status_code}: {_error_text(response)}"
                delay = self._delay(attempt, response.headers.get("retry-after"))
            if attempt < self._retries:
                log.warning(
                    "LLM %s request failed (%s); retry %d/%d in %.2f s",
                    self.model,
                    problem,
                    attempt + 1,
                    self._retries,
                    delay,
                )
                time.sleep(delay)
        raise LLMUnavailable(
            f"{self._url} failed after {self._retries + 1} attempt(s); last: {problem}"
        )

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        delay = self._backoff * 2.0**attempt
        if retry_after is not None:
            with contextlib.suppress(ValueError):  # an HTTP date: keep our own backoff
                delay = max(delay, float(retry_after))
        return min(delay, self._max_backoff)


def from_settings(settings: Settings) -> OpenAICompatibleLLM | None:
    """The configured endpoint, or None: with no LLM configured everything runs on rules."""
    if not settings.llm.base_url or not settings.llm.model:
        return None
    return OpenAICompatibleLLM(
        settings.llm.base_url,
        settings.llm.model,
        settings.llm.api_key,
        timeout_seconds=settings.llm.timeout_seconds,
    )


def _rejects_response_format(response: httpx.Response) -> bool:
    if response.status_code not in (400, 422):
        return False
    text = response.text.lower()
    return any(word in text for word in ("response_format", "json_schema", "json_object"))


def _message_content(response: httpx.Response) -> str:
    try:
        message = response.json()["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise LLMUnavailable(
            f"the endpoint's reply is not a chat completion ({len(response.content)} bytes): "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str) or not content.strip():
        refusal = message.get("refusal") if isinstance(message, dict) else None
        reason = "the model refused" if refusal else "the reply has no message content"
        raise LLMInvalidOutput(reason, content if isinstance(content, str) else "")
    return content


def _error_text(response: httpx.Response, limit: int = 300) -> str:
    """The server's error message, short: it names the problem, not the prompt."""
    try:
        data = response.json()
        error = data.get("error", data) if isinstance(data, dict) else data
        text = error.get("message", error) if isinstance(error, dict) else error
        text = text if isinstance(text, str) else json.dumps(text)
    except ValueError:
        text = response.text
    text = " ".join(text.split())
    return text[:limit] + ("…" if len(text) > limit else "")


def _usage_note(response: httpx.Response) -> str:
    try:
        usage = response.json().get("usage") or {}
        return f", {usage['prompt_tokens']}+{usage['completion_tokens']} tokens"
    except (ValueError, AttributeError, KeyError, TypeError):
        return ""
