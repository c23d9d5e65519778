"""A real Redis server for the tests: ``redis-server`` (Debian package) started once per run
on a Unix socket in a temporary directory, with persistence off. ``MADELEINE_TEST_REDIS_URL``
points the tests at a server of your own. Without the binary the Redis tests are skipped,
unless ``MADELEINE_TEST_REQUIRE_SERVERS=1`` (CI) makes that an error."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    given = os.environ.get("MADELEINE_TEST_REDIS_URL")
    if given:
        yield given
        return
    binary = shutil.which("redis-server")
    if binary is None:
        message = "redis-server is not installed (apt-get install -y redis-server)"
        if os.environ.get("MADELEINE_TEST_REQUIRE_SERVERS") == "1":
            pytest.fail(message)
        pytest.skip(message)
    directory: Path = tmp_path_factory.mktemp("redis")
    socket = directory / "redis.sock"
    server = subprocess.Popen(
        [
            binary,
            "--port", "0",
            "--unixsocket", str(socket),
            "--unixsocketperm", "700",
            "--save", "",
            "--appendonly", "no",
            "--dir", str(directory),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 10
        while not socket.exists():
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail("redis-server did not start")
            time.sleep(0.02)
        yield f"unix://{socket}"
    finally:
        server.terminate()
        server.wait(timeout=10)


@pytest.fixture
def redis_prefix(redis_url: str) -> Iterator[str]:
    """A key prefix of the test's own, its keys deleted afterwards."""
    import uuid

    import redis

    prefix = f"t{uuid.uuid4().hex[:10]}"
    yield prefix
    client = redis.Redis.from_url(redis_url)
    keys = list(client.scan_iter(f"{prefix}:*"))
    if keys:
        client.delete(*keys)
    client.close()
