from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from madeleine.server.app import ServerSettings, create_app
from tests.fakes import HashingEmbedder

KEY_A = "test-key-alpha"
KEY_B = "test-key-beta"
A = {"Authorization": f"Bearer {KEY_A}"}
B = {"Authorization": f"Bearer {KEY_B}"}


@pytest.fixture
def server_settings(tmp_path: Path) -> ServerSettings:
    return ServerSettings(data=tmp_path / "data", api_keys={KEY_A: "alpha", KEY_B: "beta"})


@pytest.fixture
def client(server_settings: ServerSettings) -> Iterator[TestClient]:
    app = create_app(server_settings, embedder=HashingEmbedder())
    with TestClient(app, raise_server_exceptions=False) as test_client:
        yield test_client


class LiveServer:
    """An ASGI app (default: the REST app over ``settings``) served by uvicorn on a free
    loopback port, in a thread of this process."""

    def __init__(
        self,
        settings: ServerSettings | None = None,
        app: Any = None,
        log_config: dict[str, Any] | None = None,
    ) -> None:
        import threading
        import time

        import uvicorn

        assert (settings is None) != (app is None), "give the settings or an app"
        self.app = app if app is not None else create_app(settings, embedder=HashingEmbedder())
        options: dict[str, Any] = {"log_level": "warning"}
        if log_config is not None:  # logging as `madeleine serve` configures it
            options = {"log_level": "info", "log_config": log_config}
        config = uvicorn.Config(self.app, host="127.0.0.1", port=0, **options)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.02)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)


@pytest.fixture
def live(server_settings: ServerSettings) -> Iterator[LiveServer]:
    server = LiveServer(server_settings)
    yield server
    server.stop()
