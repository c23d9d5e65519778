"""Every error leaves the server as ``{"error": {"code", "message"}}`` with its status; stack
traces go to the log, never to the client."""

from __future__ import annotations

import logging
import uuid
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from madeleine.errors import (
    ItemNotFoundError,
    StaleVersionError,
    StoreClosedError,
    StoreDamagedError,
    StoreReadOnlyError,
)
from madeleine.server.access_log import redact_target
from madeleine.server.grants import ScopeError

log = logging.getLogger("madeleine.server")


class ApiError(Exception):
    def __init__(
        self, status: int, code: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers


def error_response(
    status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(
        {"error": {"code": code, "message": message}}, status_code=status, headers=headers
    )


_HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "too_large",
    415: "unsupported_media_type",
    429: "rate_limited",
}


def _validation_message(errors: list[dict[str, Any]]) -> str:
    parts = []
    for error in errors[:5]:
        where = ".".join(str(p) for p in error.get("loc", ()) if p != "body")
        parts.append(f"{where or 'body'}: {error.get('msg', 'invalid')}")
    more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
    return "; ".join(parts) + more


def install(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc.status, exc.code, exc.message, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = list(exc.errors())
        if any(e.get("type") == "json_invalid" for e in errors):
            return error_response(400, "malformed_json", "the request body is not valid JSON")
        return error_response(422, "invalid_request", _validation_message(errors))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        code = _HTTP_CODES.get(exc.status_code, "error")
        message = str(exc.detail)
        if isinstance(exc.__cause__, RecursionError):  # FastAPI's "error parsing the body"
            message = "the request body is nested too deeply to read as JSON"
        return error_response(exc.status_code, code, message, dict(exc.headers or {}))

    @app.exception_handler(ScopeError)
    async def out_of_scope(request: Request, exc: ScopeError) -> JSONResponse:
        return error_response(403, "forbidden", str(exc))

    @app.exception_handler(ValueError)
    async def bad_value(request: Request, exc: ValueError) -> JSONResponse:
        return error_response(400, "bad_request", str(exc))

    @app.exception_handler(ItemNotFoundError)
    async def not_found(request: Request, exc: ItemNotFoundError) -> JSONResponse:
        return error_response(404, "not_found", str(exc))

    @app.exception_handler(StaleVersionError)
    async def stale(request: Request, exc: StaleVersionError) -> JSONResponse:
        return error_response(409, "stale_version", str(exc))

    @app.exception_handler(TypeError)
    async def bad_type(request: Request, exc: TypeError) -> JSONResponse:
        return error_response(400, "bad_request", str(exc))

    @app.exception_handler(StoreReadOnlyError)
    async def read_only(request: Request, exc: StoreReadOnlyError) -> JSONResponse:
        return error_response(409, "read_only", str(exc))

    @app.exception_handler(StoreClosedError)
    async def closed(request: Request, exc: StoreClosedError) -> JSONResponse:
        return error_response(503, "unavailable", "the server is shutting down")

    @app.exception_handler(StoreDamagedError)
    async def damaged(request: Request, exc: StoreDamagedError) -> JSONResponse:
        log.error("damaged store: %s", exc)
        return error_response(500, "store_damaged", "the store is damaged; see the server log")

    @app.exception_handler(Exception)
    async def internal(request: Request, exc: Exception) -> JSONResponse:
        incident = uuid.uuid4().hex[:12]
        where = redact_target(request.url.path)  # ids in a path may carry PII
        log.exception("internal error %s on %s %s", incident, request.method, where)
        return error_response(500, "internal", f"internal error (incident {incident})")
