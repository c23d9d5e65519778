"""Job notifications over a real Redis: an add in one process wakes workers subscribed in
others; without a notification a wait times out; a Redis that goes away costs a poll, never
an error on the write path."""

from __future__ import annotations

from pathlib import Path

import pytest

from madeleine import Memory
from madeleine.store.redis import connect, jobs_channel
from madeleine.store.redis.signals import RedisJobSignal
from tests.fakes import HashingEmbedder


def test_a_notification_wakes_every_subscriber(redis_url: str, redis_prefix: str) -> None:
    channel = jobs_channel(redis_prefix)
    first, second = (
        RedisJobSignal(connect(redis_url), channel),
        RedisJobSignal(connect(redis_url), channel),
    )
    sender = RedisJobSignal(connect(redis_url), channel)
    assert first.wait(0) is False and second.wait(0) is False  # subscribed, nothing yet
    sender.notify()
    sender.notify()
    assert first.wait(5) is True and second.wait(5) is True
    assert first.wait(0.2) is False  # a burst is one wake-up
    for signal in (first, second, sender):
        signal.close()


def test_an_add_notifies_the_workers(tmp_path: Path, redis_url: str, redis_prefix: str) -> None:
    worker = RedisJobSignal(connect(redis_url), jobs_channel(redis_prefix))
    assert worker.wait(0) is False
    with Memory(
        tmp_path / "m",
        embedder=HashingEmbedder(),
        background=False,
        redis_url=redis_url,
        redis_prefix=redis_prefix,
    ) as memory:
        memory.add([{"content": "wake up"}], user_id="u")
        assert worker.wait(5) is True
        assert memory.stats()["pending_jobs"] == 1  # the outbox is the queue; Redis only wakes
    worker.close()


def test_a_lost_redis_only_costs_a_poll(redis_url: str, redis_prefix: str) -> None:
    client = connect(redis_url)
    signal = RedisJobSignal(client, jobs_channel(redis_prefix))
    client.connection_pool.disconnect()
    client.connection_pool.connection_kwargs["path"] = "/nonexistent/redis.sock"
    client.connection_pool.connection_kwargs["host"] = "203.0.113.1"
    signal.notify()  # logged, not raised
    assert signal.wait(0.1) is False
    signal.close()


def test_a_wrong_redis_url_fails_at_start(tmp_path: Path) -> None:
    with pytest.raises(ConnectionError, match="cannot reach Redis"):
        Memory(tmp_path / "m", embedder=HashingEmbedder(), redis_url="unix:///nonexistent/sock")
