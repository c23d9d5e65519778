"""Issue 30: the access log `madeleine serve` writes holds no query values and no PII from a
path; the serve command wires it into uvicorn for one worker and for several."""

from __future__ import annotations

import logging
import logging.config
from pathlib import Path
from typing import Any

import pytest

from madeleine.cli import main
from madeleine.server import app as app_module
from madeleine.server.access_log import log_config, redact_target


@pytest.mark.parametrize(
    ("target", "logged"),
    [
        ("/v1/graph?user_id=mina&around=555-123-4567", "/v1/graph?user_id=…&around=…"),
        (
            "/v1/timeline?user_id=mina&query=my%20password%20is%20x9",
            "/v1/timeline?user_id=…&query=…",
        ),
        ("/v1/kb/c/documents/4155550172/versions", "/v1/kb/c/documents/[pii:phone]/versions"),
        ("/v1/kb/c/documents/mina%40example.org", "/v1/kb/c/documents/[pii:email]"),
        ("/v1/sessions?user_id=", "/v1/sessions?user_id=…"),
        ("/health", "/health"),
    ],
)
def test_a_target_is_logged_without_what_it_said(target: str, logged: str) -> None:
    assert redact_target(target) == logged


def test_the_access_log_writes_redacted_lines(tmp_path: Path) -> None:
    log_file = tmp_path / "access.log"
    logging.config.dictConfig(log_config(log_file))
    try:
        access = logging.getLogger("uvicorn.access")
        target = "/v1/graph?user_id=mina&around=4155550172"
        access.info('%s - "%s %s HTTP/%s" %d', "127.0.0.1:5000", "GET", target, "1.1", 200)
    finally:
        for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
            for handler in list(logging.getLogger(name).handlers):
                logging.getLogger(name).removeHandler(handler)
                handler.close()
    written = log_file.read_text()
    assert "GET /v1/graph?user_id=…&around=… HTTP/1.1" in written
    assert "mina" not in written and "4155550172" not in written


@pytest.mark.parametrize("workers", ["1", "2"])
def test_serve_runs_uvicorn_with_the_redacting_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: str
) -> None:
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr("uvicorn.run", lambda *args, **kwargs: calls.append(kwargs))
    monkeypatch.setattr(app_module, "create_app", lambda settings: object())
    monkeypatch.setattr("madeleine.embed.factory.share_cores_with_other_processes", lambda: None)
    monkeypatch.setenv("MADELEINE_API_KEYS", '{"k": "t"}')
    monkeypatch.setenv("MADELEINE_DATA", str(tmp_path))  # serve sets it: restored afterwards
    assert main(["serve", "--data", str(tmp_path), "--workers", workers]) == 0
    config = calls[0]["log_config"]
    assert "redact_query" in config["handlers"]["access"]["filters"]
