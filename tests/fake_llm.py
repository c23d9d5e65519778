"""A real OpenAI-compatible chat server for tests: scripted replies over local HTTP.

``FakeLLM`` listens on 127.0.0.1 (port 0, so parallel runs never clash) and answers
``POST /v1/chat/completions`` from a queue of scripted responses, recording every request.
A scripted response is one of:

- a ``dict`` or ``list``: the model's message content is its JSON;
- a ``str``: the message content verbatim (fenced, prose-wrapped, malformed — anything);
- an ``int``: that HTTP status with an OpenAI-style error body;
- ``Raw(body, status, delay, content_type, headers)``: exactly that HTTP reply (e.g. a
  non-JSON 200, a 400 naming ``response_format``, a 429 with Retry-After), optionally after a
  delay (for timeouts);
- a callable taking the request body (a dict) and returning any of the above;
- ``tool_calls((name, arguments), ...)``: an assistant turn calling those tools.

When the queue is empty the server answers 500 and counts it in ``unscripted``.
Use the ``fake_llm`` fixture: ``from tests.fake_llm import fake_llm_fixture  # noqa: F401``.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeAlias

import pytest


@dataclass(frozen=True)
class Raw:
    """An exact HTTP reply, bypassing the chat-completion envelope."""

    body: str | bytes
    status: int = 200
    delay: float = 0.0
    content_type: str = "application/json"
    headers: tuple[tuple[str, str], ...] = ()


Response: TypeAlias = (
    dict[str, Any] | list[Any] | str | int | Raw | Callable[[dict[str, Any]], "Response"]
)


def error_reply(status: int, message: str) -> Raw:
    """An OpenAI-style error body with that status."""
    body = {"error": {"message": message, "type": "invalid_request_error", "code": status}}
    return Raw(json.dumps(body), status=status)


class FakeLLM:
    """The scripted server. ``requests`` holds every request body (parsed JSON) in order,
    ``headers`` the matching request headers (lower-cased names)."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.unscripted = 0
        self._queue: deque[Response] = deque()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None
        host, port = self._server.server_address[:2]
        self.base_url = f"http://{host!s}:{port}/v1"

    def script(self, *responses: Response) -> None:
        """Queue replies, served one per request in order."""
        with self._lock:
            self._queue.extend(responses)

    def clear(self) -> None:
        """Drop replies nobody asked for (a background request that gave up early)."""
        with self._lock:
            self._queue.clear()

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._queue)

    def start(self) -> FakeLLM:
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening: later connections are refused."""
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join()
            self._thread = None
        self._server.server_close()

    def _next(self, body: dict[str, Any], headers: dict[str, str]) -> Raw:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            if not self._queue:
                self.unscripted += 1
                return error_reply(500, "fake_llm: no scripted response left")
            response = self._queue.popleft()
        return _render(response, body)


def tool_calls(*calls: tuple[str, dict[str, Any]]) -> Raw:
    """An assistant turn that calls tools: (function name, arguments) each."""
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{i}_{time.monotonic_ns()}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
            for i, (name, arguments) in enumerate(calls)
        ],
    }
    envelope = {
        "id": f"chatcmpl-fake-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": "fake",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }
    return Raw(json.dumps(envelope))


def _render(response: Response, request: dict[str, Any]) -> Raw:
    if isinstance(response, Raw):
        return response
    if callable(response):
        return _render(response(request), request)
    if isinstance(response, bool):
        raise TypeError("a scripted response cannot be a bool")
    if isinstance(response, int):
        return error_reply(response, f"fake_llm: scripted HTTP {response}")
    content = response if isinstance(response, str) else json.dumps(response, ensure_ascii=False)
    envelope = {
        "id": f"chatcmpl-fake-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model", "fake"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": len(json.dumps(request.get("messages", []))) // 4,
            "completion_tokens": len(content) // 4,
            "total_tokens": 0,
        },
    }
    return Raw(json.dumps(envelope, ensure_ascii=False))


def _handler_for(fake: FakeLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length)
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._send(error_reply(404, f"fake_llm: no route {self.path}"))
                return
            try:
                body = json.loads(raw)
            except json.JSONDecodeError:
                self._send(error_reply(400, "fake_llm: request body is not JSON"))
                return
            headers = {name.lower(): value for name, value in self.headers.items()}
            self._send(fake._next(body, headers))

        def _send(self, reply: Raw) -> None:
            if reply.delay:
                time.sleep(reply.delay)
            data = reply.body.encode() if isinstance(reply.body, str) else reply.body
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", reply.content_type)
                self.send_header("Content-Length", str(len(data)))
                for name, value in reply.headers:
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test): nothing to answer

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output clean

    return Handler


@pytest.fixture(name="fake_llm")
def fake_llm_fixture() -> Iterator[FakeLLM]:
    """A started ``FakeLLM``, stopped after the test."""
    server = FakeLLM().start()
    yield server
    server.stop()
