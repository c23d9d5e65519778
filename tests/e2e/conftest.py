"""Fixtures of the dashboard's end-to-end tests: one seeded server and one headless Chromium
per module. Without Playwright or Chromium the tests are skipped, unless
``MADELEINE_TEST_REQUIRE_SERVERS=1`` (CI) makes that an error. ``MADELEINE_E2E_CHROMIUM``
names another Chromium binary; ``MADELEINE_E2E_SCREENSHOTS`` keeps the screenshots there."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import pytest

from madeleine.api import Memory
from madeleine.server.app import ServerSettings
from madeleine.server.demo import seed_demo
from tests.server.conftest import LiveServer

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

KEY = "e2e-dashboard-key"
TENANT = "demo"
DASHBOARD = Path(__file__).resolve().parents[2] / "src" / "madeleine" / "server" / "dashboard"


def _unavailable(message: str) -> NoReturn:
    if os.environ.get("MADELEINE_TEST_REQUIRE_SERVERS") == "1":
        pytest.fail(message)
    pytest.skip(message)


def seed(memory: Memory) -> None:
    """The demo memory (``madeleine demo``'s user alex: a job change, a move, a new seat
    preference, a passport alert, a knowledge base with an ACL), and a second user."""
    seed_demo(memory)
    memory.add(
        [{"role": "user", "name": "Bea", "content": "I'm Bea, I play the cello in Paris."}],
        user_id="bea",
        session_id="b1",
        timestamp="2026-02-01T10:00:00Z",
    )
    assert memory.wait(60), "the seed data was not indexed in time"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """The REST app over a seeded data directory (hashing embedder), the dashboard at ``/``."""
    if not (DASHBOARD / "index.html").is_file():
        _unavailable("the dashboard is not built: cd dashboard && npm ci && npm run build")
    data = tmp_path_factory.mktemp("e2e-data")
    live = LiveServer(ServerSettings(data=data, api_keys={KEY: TENANT}))
    with live.app.state.tenants.lease(TENANT) as memory:
        seed(memory)
    yield live
    live.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One headless Chromium for the module (never downloaded: the system's binary)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install playwright)")
    executable = os.environ.get("MADELEINE_E2E_CHROMIUM", "/usr/bin/chromium")
    if shutil.which(executable) is None:
        _unavailable(f"no Chromium at {executable} (apt-get install -y chromium)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, headless=True)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get("MADELEINE_E2E_SCREENSHOTS")
    directory = Path(given) if given else tmp_path_factory.mktemp("screenshots")
    directory.mkdir(parents=True, exist_ok=True)
    return directory


@pytest.fixture
def page(browser: Browser, request: pytest.FixtureRequest, screenshots: Path) -> Iterator[Page]:
    """A fresh browser context (empty sessionStorage) at 1280×800, in a time zone far from
    UTC (the dashboard shows and reads times in UTC whatever the browser's zone); its
    screenshot is saved under the test's name, pass or fail."""
    context = browser.new_context(
        viewport={"width": 1280, "height": 800}, timezone_id="America/Denver"
    )
    context.set_default_timeout(10_000)
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    opened.on(  # the bundle must live within the server's Content-Security-Policy
        "console",
        lambda message: (
            errors.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    yield opened
    opened.screenshot(path=str(screenshots / f"{request.node.name}.png"), full_page=True)
    context.close()
    assert not errors, f"errors in the page: {errors}"
