"""The dashboard: the static bundle built from ``dashboard/`` (npm, at development time) and
shipped in the package, served at ``/`` on the API's origin, so it uses the same keys and
needs no Node.js and no CDN at run time."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import HTMLResponse
from starlette.exceptions import HTTPException
from starlette.middleware.gzip import GZipMiddleware
from starlette.routing import Match, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

BUNDLE = Path(__file__).parent / "dashboard"

# the bundle loads only its own files and talks only to its own origin
_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
        "object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",  # file names are fixed: always revalidate after an upgrade
}

_NOT_BUILT = """<!doctype html><title>Madeleine</title>
<p>The dashboard bundle is missing from this installation
(<code>madeleine/server/dashboard/index.html</code>).
Build it with <code>cd dashboard &amp;&amp; npm ci &amp;&amp; npm run build</code>.
The REST API works without it: see <a href="/docs">/docs</a>.</p>"""


class _Bundle(StaticFiles):
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [(k.lower().encode(), v.encode()) for k, v in _HEADERS.items()]
                message["headers"] = headers
            await send(message)

        await super().__call__(scope, receive, with_headers)


class _MethodsFirst:
    """The bundle's catch-all mount would answer a GET on a POST-only API route with the
    bundle's 404; this answers 405 with ``Allow`` there, as the router does without it."""

    def __init__(self, app: FastAPI, files: ASGIApp) -> None:
        self._app = app
        self._files = files

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            allowed: set[str] = set()
            for route in self._app.router.routes:
                if isinstance(route, Route) and route.matches(scope)[0] is Match.PARTIAL:
                    allowed |= route.methods or set()
            if allowed:
                raise HTTPException(
                    405,
                    f"{scope.get('method')} is not allowed here; use {', '.join(sorted(allowed))}",
                    headers={"Allow": ", ".join(sorted(allowed))},
                )
        await self._files(scope, receive, send)


def mount_dashboard(app: FastAPI, bundle: Path = BUNDLE) -> None:
    """Serve ``bundle`` at ``/`` (after every API route, which match first)."""
    if (bundle / "index.html").is_file():
        # gzip: the graph library alone is 560 KiB, 170 KiB compressed
        files = GZipMiddleware(_Bundle(directory=bundle, html=True), minimum_size=1024)
        app.mount("/", _MethodsFirst(app, files), name="dashboard")
        return

    @app.get("/", include_in_schema=False)
    def missing() -> HTMLResponse:
        return HTMLResponse(_NOT_BUILT, status_code=503)
