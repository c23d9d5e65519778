"""The fair admission scheduler: order, per-key turns, no starvation, and slots that come
back when a waiter is cancelled or times out. The queue is driven directly (no threads, no
sleeps); the async scheduler with short timeouts."""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from madeleine import courtesy
from madeleine.server.app import ServerSettings, create_app
from madeleine.server.fairness import Busy, FairQueue, FairScheduler, Ticket
from madeleine.server.limits import RateLimiter
from tests.fakes import HashingEmbedder
from tests.server.conftest import A


class Recorder:
    """Tickets that note the order in which they were admitted."""

    def __init__(self) -> None:
        self.order: list[str] = []

    def ticket(self, tenant: str, key: str = "k", name: str = "") -> Ticket:
        label = name or f"{tenant}/{key}"
        return Ticket(tenant, key, lambda: self.order.append(label))


def _drain(queue: FairQueue, tickets: list[Ticket]) -> None:
    """Release admitted tickets one at a time until all have run."""
    for _ in range(len(tickets) + 1):
        running = [t for t in tickets if t.admitted and not t.done]
        if not running:
            return
        queue.release(running[0])


def test_waiting_tenants_are_served_round_robin_not_first_come() -> None:
    queue = FairQueue(slots=1, tenant_slots=1)
    seen = Recorder()
    flood = [seen.ticket("A", name=f"A{i}") for i in range(5)]
    for ticket in flood:
        queue.arrive(ticket)
    late = [seen.ticket("B", name=f"B{i}") for i in range(2)]
    for ticket in late:  # arrive after A's five
        queue.arrive(ticket)
    _drain(queue, [*flood, *late])
    assert seen.order == ["A0", "A1", "B0", "A2", "B1", "A3", "A4"]


def test_keys_of_one_tenant_take_turns() -> None:
    queue = FairQueue(slots=1, tenant_slots=1)
    seen = Recorder()
    blocker = seen.ticket("T", "x", "blocker")
    queue.arrive(blocker)
    tickets = [seen.ticket("T", "k1", f"k1-{i}") for i in range(3)]
    tickets += [seen.ticket("T", "k2", "k2-0")]
    for ticket in tickets:
        queue.arrive(ticket)
    _drain(queue, [blocker, *tickets])
    assert seen.order == ["blocker", "k1-0", "k2-0", "k1-1", "k1-2"]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_lone_tenant_uses_every_slot_and_holds_its_share_while_another_is_active() -> None:
    clock = Clock()
    queue = FairQueue(slots=3, clock=clock, active_seconds=2.0)  # tenant_slots: 3 - 1
    seen = Recorder()
    flood = [seen.ticket("A", name=f"A{i}") for i in range(6)]
    for ticket in flood:
        queue.arrive(ticket)
    assert seen.order == ["A0", "A1", "A2"]  # alone: every slot
    newcomer = seen.ticket("B", name="B0")
    queue.arrive(newcomer)
    queue.release(flood[0])  # A is ahead in turn but over its share now: B goes
    assert seen.order[-1] == "B0"
    queue.release(flood[1])
    assert seen.order[-1] == "A3" and queue.state() == {"running": 3, "waiting": 2}
    queue.release(newcomer)  # a slot is free, but B was active just now: A keeps to 2 of 3
    assert queue.state() == {"running": 2, "waiting": 2}
    clock.now = 2.5  # B quiet for longer than active_seconds: A alone again
    queue.release(flood[2])
    assert queue.state() == {"running": 3, "waiting": 0}


def test_a_lone_tenant_uses_every_slot_when_its_share_allows() -> None:
    queue = FairQueue(slots=3, tenant_slots=3)
    tickets = [Ticket("A", "k") for _ in range(4)]
    for ticket in tickets:
        queue.arrive(ticket)
    assert [t.admitted for t in tickets] == [True, True, True, False]


def test_nobody_starves_under_a_steady_flood() -> None:
    queue = FairQueue(slots=2, tenant_slots=2)
    seen = Recorder()
    tickets = [seen.ticket("A", name="A") for _ in range(4)]
    for ticket in tickets:
        queue.arrive(ticket)
    quiet = [seen.ticket("B", name="B") for _ in range(3)]
    for ticket in quiet:
        queue.arrive(ticket)
    for _ in range(20):  # A sends one more each time one of its searches ends
        running = next(t for t in [*quiet, *tickets] if t.admitted and not t.done)
        queue.release(running)
        tickets.append(seen.ticket("A", name="A"))
        queue.arrive(tickets[-1])
    # two A's run, then A (waiting before B) and B take turns: B's three are admitted
    # 4th, 6th and 8th, however many A keeps sending
    assert all(t.admitted for t in quiet)
    assert [i for i, name in enumerate(seen.order) if name == "B"] == [3, 5, 7]


def test_a_key_with_a_full_queue_is_refused_with_429_and_others_are_not() -> None:
    queue = FairQueue(slots=1, tenant_slots=1, key_queue=2)
    queue.arrive(Ticket("A", "k1"))  # running
    queue.arrive(Ticket("A", "k1"))
    queue.arrive(Ticket("A", "k1"))
    with pytest.raises(Busy) as refused:
        queue.arrive(Ticket("A", "k1"))
    assert refused.value.status == 429
    queue.arrive(Ticket("A", "k2"))  # another key of the same tenant still queues
    assert queue.state() == {"running": 1, "waiting": 3}


def test_an_abandoned_waiter_leaves_the_queue_and_an_admitted_one_hands_its_slot_on() -> None:
    queue = FairQueue(slots=1, tenant_slots=1)
    running, waiting, next_one = Ticket("A", "k"), Ticket("B", "k"), Ticket("C", "k")
    for ticket in (running, waiting, next_one):
        queue.arrive(ticket)
    queue.abandon(waiting)
    assert queue.state() == {"running": 1, "waiting": 1}
    queue.release(running)
    assert next_one.admitted and not waiting.admitted
    queue.abandon(next_one)  # admitted, then gave up: the slot is free again
    assert queue.state() == {"running": 0, "waiting": 0}
    queue.release(next_one)  # a second release changes nothing
    assert queue.state() == {"running": 0, "waiting": 0}


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="slots"):
        FairQueue(slots=0)
    with pytest.raises(ValueError, match="tenant_slots"):
        FairQueue(slots=2, tenant_slots=3)
    with pytest.raises(ValueError, match="key_queue"):
        FairQueue(slots=2, key_queue=0)
    with pytest.raises(ValueError, match="timeout"):
        FairScheduler(slots=2, timeout=0)


def test_the_scheduler_times_out_a_waiter_with_503_and_the_slot_stays_usable() -> None:
    async def scenario() -> None:
        scheduler = FairScheduler(slots=1, timeout=0.05)
        holder = await scheduler.acquire("A", "k")
        with pytest.raises(Busy) as waited:
            await scheduler.acquire("B", "k")
        assert waited.value.status == 503
        assert scheduler.queue.state() == {"running": 1, "waiting": 0}
        scheduler.release(holder)
        async with scheduler.turn("B", "k"):
            assert scheduler.queue.state()["running"] == 1
        assert scheduler.queue.state() == {"running": 0, "waiting": 0}

    asyncio.run(scenario())


def test_a_cancelled_waiter_frees_its_place_and_a_failed_block_frees_its_slot() -> None:
    async def scenario() -> None:
        scheduler = FairScheduler(slots=1, timeout=5)
        holder = await scheduler.acquire("A", "k")
        waiter = asyncio.create_task(scheduler.acquire("B", "k"))
        await asyncio.sleep(0.01)
        assert scheduler.queue.state() == {"running": 1, "waiting": 1}
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        assert scheduler.queue.state() == {"running": 1, "waiting": 0}
        scheduler.release(holder)
        with pytest.raises(RuntimeError):
            async with scheduler.turn("C", "k"):
                raise RuntimeError("the search failed")
        assert scheduler.queue.state() == {"running": 0, "waiting": 0}

    asyncio.run(scenario())


def test_a_slot_released_from_a_worker_thread_wakes_the_waiter_on_its_loop() -> None:
    async def scenario() -> list[str]:
        scheduler = FairScheduler(slots=1, timeout=5)
        order: list[str] = []
        holder = await scheduler.acquire("A", "k")

        async def second() -> None:
            async with scheduler.turn("B", "k"):
                order.append("B")

        task = asyncio.create_task(second())
        await asyncio.sleep(0.01)
        await asyncio.to_thread(scheduler.release, holder)  # as a handler thread would
        await asyncio.wait_for(task, 2)
        return order

    assert asyncio.run(scenario()) == ["B"]


# -- stepping aside: a costly search waits at its checkpoints for another tenant's cheap one --


def _admitted(queue: FairQueue, tenant: str) -> Ticket:
    ticket = Ticket(tenant, "k")
    queue.arrive(ticket)
    assert ticket.admitted
    return ticket


def _step_aside_in_thread(queue: FairQueue, ticket: Ticket, size: float | None) -> threading.Thread:
    thread = threading.Thread(target=queue.step_aside, args=(ticket, size), daemon=True)
    thread.start()
    return thread


def test_a_costly_search_steps_aside_while_a_much_cheaper_one_of_another_tenant_runs() -> None:
    queue = FairQueue(slots=2, tenant_slots=1, anticipation=0)
    costly, cheap = _admitted(queue, "A"), _admitted(queue, "B")
    queue.step_aside(cheap, 16)  # the cheap one never waits for the costly one
    assert cheap.paused == 0
    waiting = _step_aside_in_thread(queue, costly, 48)
    waiting.join(0.1)
    assert waiting.is_alive() and costly.stepping_aside
    queue.release(cheap)  # the cheap search ended: the costly one goes on at once
    waiting.join(2)
    assert not waiting.is_alive() and not costly.stepping_aside
    assert 0.1 <= costly.paused < 1.0


def test_searches_of_one_tenant_or_of_like_sizes_never_step_aside() -> None:
    queue = FairQueue(slots=3, tenant_slots=3, anticipation=0)
    own_costly, own_cheap = _admitted(queue, "A"), _admitted(queue, "A")
    queue.step_aside(own_cheap, 10)
    queue.step_aside(own_costly, 100)  # its own tenant's cheap search does not outrank it
    queue.release(own_cheap)
    other = _admitted(queue, "B")
    queue.step_aside(other, 60)  # more than half of 100: a like size
    assert own_costly.paused == 0 and other.paused == 0
    unsized = Ticket("C", "k")
    queue.arrive(unsized)
    queue.step_aside(unsized)  # no size announced: nothing to compare
    assert unsized.paused == 0


def test_stepping_aside_is_bounded_over_the_whole_search() -> None:
    queue = FairQueue(slots=2, tenant_slots=1, max_pause=0.1, anticipation=0)
    costly, cheap = _admitted(queue, "A"), _admitted(queue, "B")
    queue.step_aside(cheap, 8)
    queue.step_aside(costly, 64)  # the cheap search never ends: the costly one goes on
    assert 0.1 <= costly.paused < 0.5
    queue.step_aside(costly)  # its pause is spent: later checkpoints do not wait
    assert costly.paused < 0.5
    assert not FairQueue(slots=2, max_pause=0).max_pause  # 0: never step aside


def test_before_the_embedding_a_costly_search_leaves_room_for_a_cheap_one_just_ended() -> None:
    queue = FairQueue(slots=2, tenant_slots=1, anticipation=0.15)
    costly, cheap = _admitted(queue, "A"), _admitted(queue, "B")
    queue.step_aside(cheap, 8)
    queue.release(cheap)
    queue.step_aside(costly)  # a checkpoint without a size (not the embedding's): no wait
    assert costly.paused == 0
    began = time.monotonic()
    queue.step_aside(costly, 64)  # the embedding's checkpoint: B's next search may be coming
    assert 0.1 <= time.monotonic() - began < 1.0


def test_settings_of_stepping_aside_are_checked() -> None:
    for bad in ({"max_pause": -1}, {"yield_ratio": 1.0}, {"anticipation": -0.1}):
        with pytest.raises(ValueError):
            FairQueue(slots=2, **bad)


def test_a_checkpoint_outside_a_request_does_nothing_and_a_pause_follows_its_context() -> None:
    courtesy.checkpoint(12)  # the library and the CLI: nothing installed
    heard: list[float | None] = []
    token = courtesy.install(heard.append)
    try:
        courtesy.checkpoint(12)
        context = contextvars.copy_context()  # as a request's worker thread gets it
        thread = threading.Thread(target=context.run, args=(courtesy.checkpoint,))
        thread.start()
        thread.join()
        other = threading.Thread(target=courtesy.checkpoint)  # another request's thread
        other.start()
        other.join()
    finally:
        courtesy.uninstall(token)
    courtesy.checkpoint(3)
    assert heard == [12, None]


# -- the REST server ---------------------------------------------------------------------


def test_a_request_s_searches_step_aside_through_its_own_scheduler_ticket(
    server_settings: ServerSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = create_app(server_settings, embedder=HashingEmbedder())
    with TestClient(app, raise_server_exceptions=False) as client:
        queue: FairQueue = app.state.fair.queue
        heard: list[tuple[Hashable, float | None]] = []
        step_aside = queue.step_aside

        def recorded(ticket: Ticket, size: float | None = None) -> None:
            heard.append((ticket.tenant, size))
            step_aside(ticket, size)

        monkeypatch.setattr(queue, "step_aside", recorded)
        body = {"user_id": "u1", "messages": [{"role": "user", "content": "I live in Lyon."}]}
        assert client.post("/v1/memories", headers=A, json=body).status_code < 300
        assert client.post("/v1/wait", headers=A, json={"timeout": 60}).status_code == 200
        assert not heard  # writes take no search turn
        asked = {"query": "where does the user live?", "user_id": "u1"}
        assert client.post("/v1/search", headers=A, json=asked).status_code == 200
        sizes = [size for _, size in heard if size is not None]
        assert sizes and all(size > 0 for size in sizes)  # the embedding's checkpoint
        assert len(heard) > len(sizes)  # and the channels' and stages'
        assert {tenant for tenant, _ in heard} == {"alpha"}
        assert queue.state() == {"running": 0, "waiting": 0}
    courtesy.checkpoint(5)  # nothing stayed installed in this (the test's) context


def test_search_context_and_kb_search_wait_for_a_slot_and_other_routes_do_not(
    server_settings: ServerSettings,
) -> None:
    server_settings.search_slots = 1
    server_settings.search_timeout = 0.2
    app = create_app(server_settings, embedder=HashingEmbedder())
    with TestClient(app, raise_server_exceptions=False) as client:
        queue: FairQueue = app.state.fair.queue
        other = Ticket("another tenant", "its key")
        queue.arrive(other)  # holds the only slot
        asks = {
            "/v1/search": {"query": "where?", "user_id": "u1"},
            "/v1/context": {"query": "where?", "user_id": "u1"},
            "/v1/kb/search": {"query": "where?"},
        }
        for route, body in asks.items():
            waited = client.post(route, headers=A, json=body)
            assert waited.status_code == 503, route
            assert waited.json()["error"]["code"] == "busy"
            assert int(waited.headers["Retry-After"]) >= 1
        assert client.get("/v1/stats", headers=A).status_code == 200
        queue.release(other)
        for route, body in asks.items():
            assert client.post(route, headers=A, json=body).status_code == 200, route
        assert queue.state() == {"running": 0, "waiting": 0}  # every slot came back


def test_a_rate_limit_is_on_by_default_and_configurable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MADELEINE_RATE_LIMIT", raising=False)
    defaults = ServerSettings()
    assert defaults.rate_limit == 50.0
    limiter = RateLimiter(defaults.rate_limit, defaults.rate_burst)
    allowed = sum(limiter.retry_after("key") == 0 for _ in range(101))
    assert allowed == 100  # a burst of twice the rate, then 429
    monkeypatch.setenv("MADELEINE_RATE_LIMIT", "0")
    assert ServerSettings().rate_limit == 0  # off


# -- the MCP server over HTTP --------------------------------------------------------------


def test_mcp_tools_are_rate_limited_per_key_and_searches_wait_for_a_fair_slot(
    tmp_path: Path,
) -> None:
    import httpx
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    from madeleine.config import Settings
    from madeleine.server.keys import key_ring
    from madeleine.server.mcp_server import Admission, KeyVerifier, build_mcp, tenant_memory
    from madeleine.server.tenants import Tenants
    from tests.server.conftest import LiveServer

    tenants = Tenants(tmp_path / "data", Settings(), HashingEmbedder())
    ring = key_ring(tmp_path / "data", {"key-a": "alpha"})
    scheduler = FairScheduler(slots=1, timeout=0.2)
    heard: list[float | None] = []
    step_aside = scheduler.queue.step_aside

    def recorded(ticket: Ticket, size: float | None = None) -> None:
        heard.append(size)  # the tool's search reached its ticket's checkpoints
        step_aside(ticket, size)

    scheduler.queue.step_aside = recorded  # type: ignore[method-assign]
    admission = Admission(RateLimiter(0.5, 6), scheduler)  # 6 calls, then 1 per 2 s
    verifier = KeyVerifier(ring)
    server = build_mcp(
        tenant_memory(tenants, verifier),
        "dev",
        port=0,
        token_verifier=verifier,
        admission=admission,
    )
    live = LiveServer(app=server.streamable_http_app())

    async def run() -> list[Any]:
        headers = {"Authorization": "Bearer key-a"}
        async with (
            httpx.AsyncClient(headers=headers, timeout=60) as http,
            streamable_http_client(f"{live.url}/mcp", http_client=http) as (read, write, _),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            said = await session.call_tool("remember", {"text": "I live in Lyon."})
            assert not said.isError  # a user to search (an unknown one is no search at all)
            other = Ticket("another tenant", "its key")
            scheduler.queue.arrive(other)  # holds the only search slot
            results = [
                await session.call_tool("recall", {"query": "where?"}),
                await session.call_tool("profile", {}),  # not a search: no slot needed
            ]
            scheduler.queue.release(other)
            results.append(await session.call_tool("recall", {"query": "where?"}))
            results += [await session.call_tool("profile", {}) for _ in range(5)]
            return results

    try:
        busy, profile, recalled, *burst = asyncio.run(run())
    finally:
        live.stop()
        tenants.close()
    assert busy.isError and "busy" in busy.content[0].text
    assert not profile.isError and not recalled.isError
    assert scheduler.queue.state() == {"running": 0, "waiting": 0}
    assert any(size is not None and size > 0 for size in heard)
    assert burst[-1].isError and "too many requests" in burst[-1].content[0].text
