"""The server's access log, without what a request said.

uvicorn's access line prints the path with its query string: user ids, ``around=`` graph
terms, ``as_of`` dates, whatever a client put there. Searches and contexts travel in POST
bodies, which are never logged; for every other route the query keeps its parameter names
and loses its values (``/v1/facts?user_id=…&as_of=…``), and PII the detector finds in the
path itself (a document id that is a phone number) is masked.
"""

from __future__ import annotations

import copy
import logging
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote

from madeleine.text.pii import Action, PiiCategory, scrub

_MASK_ALL: dict[PiiCategory, Action] = dict.fromkeys(PiiCategory, "mask")
_HIDDEN = "…"


def _no_vault(category: PiiCategory, value: str) -> str:
    raise AssertionError("the access log masks, it never vaults")  # pragma: no cover


def redact_target(target: str) -> str:
    """A request target as it may be logged: query values dropped, PII in the path masked."""
    path, question, query = target.partition("?")
    segments = unquote(path).split("/")
    shown = "/".join(scrub(segment, _MASK_ALL, _no_vault).text for segment in segments)
    if not question:
        return shown
    names = [name for name, _ in parse_qsl(query, keep_blank_values=True)]
    return shown + "?" + "&".join(f"{name}={_HIDDEN}" for name in names)


class RedactQuery(logging.Filter):
    """Rewrites uvicorn's access record (client, method, target, version, status)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) == 5 and isinstance(args[2], str):
            record.args = (args[0], args[1], redact_target(args[2]), args[3], args[4])
        return True


def log_config(access_file: Path | None = None) -> dict[str, Any]:
    """uvicorn's own logging configuration with the access log redacted (and written to
    ``access_file`` when given, as a test reads it)."""
    from uvicorn.config import LOGGING_CONFIG

    config: dict[str, Any] = copy.deepcopy(LOGGING_CONFIG)
    config.setdefault("filters", {})["redact_query"] = {"()": RedactQuery}
    config["handlers"]["access"].setdefault("filters", []).append("redact_query")
    if access_file is not None:
        for name in ("access", "default"):
            config["handlers"][name] = {
                "formatter": name,
                "class": "logging.FileHandler",
                "filename": str(access_file),
                "filters": ["redact_query"],
            }
    return config
