"""Fair admission for search work: one tenant's flood waits on itself, not on everyone.

All tenants of a server share one embedder and the machine's cores, and a search was taken
first come, first served: four long queries from tenant A once put tenant B's 40 ms
search behind seconds of A's work. Here a search, a context or a KB search first takes a
*slot*. At most ``slots`` run at once (about the core count: more only interleave on the
same cores). A tenant alone on the server may use them all; while another tenant is active
(it asked within the last ``active_seconds``), one tenant holds at most ``tenant_slots``
(default: all but one), so the other finds a slot free instead of waiting for one of the
flood's searches to end. The requests that wait are admitted round-robin over tenants, and
within a tenant round-robin over its API keys (FIFO per key): a tenant with 100 queued
searches and a tenant with 1 alternate. A request waits at most ``timeout`` seconds, and a
key has at most ``key_queue`` requests waiting; past either it is refused with a retry
hint (``Busy``), and a waiter that is cancelled or gives up leaves the queue, or hands back
the slot it had just been given.

Admission alone left one tenant's long queries doubling another's short ones: two admitted
searches share the cores. So an admitted search also *steps aside* (``step_aside``, called
at the engine's checkpoints: ``courtesy.py``): while a search of another tenant runs that
is at most half its size (the query tokens its embedding reads), it waits at its next
checkpoint, for at most ``max_pause`` seconds in all, so that it always ends. The costly
search waits on the cheap one, never the reverse: shortest job first, between tenants.
The embedding engine runs one query at a time and cannot be interrupted, so before a costly
search takes it, it also waits while such a cheap search *ended* within ``anticipation``
seconds (anticipatory scheduling: that tenant's next search is likely on its way, and would
otherwise wait behind the whole costly embedding). The price is the costly tenant's: while
cheap searches keep the server busy, its searches run about one per ``max_pause``
(``madeleine bench serve --noisy-neighbour``: docs/benchmarks.md).

``FairQueue`` is the bookkeeping alone (thread-safe, no waiting, tested with fakes);
``FairScheduler`` puts an ``async with`` in front of it for the REST and MCP servers, so a
queued request holds no worker thread while it waits."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections import Counter, OrderedDict, deque
from collections.abc import AsyncIterator, Callable, Hashable
from contextlib import asynccontextmanager
from contextvars import Token
from dataclasses import dataclass, field
from functools import partial

from madeleine import courtesy
from madeleine.courtesy import Pause

_REMEMBERED_ENDS = 64  # tenants whose last search end anticipation looks at (most recent)


class Busy(Exception):
    """Admission refused; ``status`` is 429 (this key has too many requests waiting) or 503
    (no slot within the timeout); ``retry_after`` seconds is a fair guess for the client."""

    def __init__(self, status: int, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.retry_after = retry_after


@dataclass(eq=False)
class Ticket:
    """One request's place: ``wake`` is called once, when it is admitted."""

    tenant: Hashable
    key: Hashable
    wake: Callable[[], None] = field(default=lambda: None)
    admitted: bool = False
    done: bool = False
    size: float = 0.0  # the largest size its checkpoints announced (0: none yet)
    paused: float = 0.0  # seconds spent stepping aside
    stepping_aside: bool = False
    courtesy: Token[Pause | None] | None = None  # the request's installed pause


class FairQueue:
    """Who runs and who waits, and whose turn is next (the module says how). Thread-safe:
    requests arrive on the event loop, slots come back from handler threads."""

    def __init__(
        self,
        slots: int,
        tenant_slots: int | None = None,
        key_queue: int = 64,
        active_seconds: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
        max_pause: float = 0.5,
        yield_ratio: float = 2.0,
        anticipation: float = 0.02,
    ) -> None:
        if slots < 1:
            raise ValueError(f"slots must be 1 or more, got {slots}")
        tenant_slots = max(1, slots - 1) if tenant_slots is None else tenant_slots
        if not 1 <= tenant_slots <= slots:
            raise ValueError(f"tenant_slots must be from 1 to slots ({slots}), got {tenant_slots}")
        if key_queue < 1:
            raise ValueError(f"key_queue must be 1 or more, got {key_queue}")
        if max_pause < 0:
            raise ValueError(f"max_pause must be 0 or more, got {max_pause}")
        if yield_ratio <= 1:
            raise ValueError(f"yield_ratio must be more than 1, got {yield_ratio}")
        if anticipation < 0:
            raise ValueError(f"anticipation must be 0 or more, got {anticipation}")
        self.slots = slots
        self.tenant_slots = tenant_slots
        self.key_queue = key_queue
        self.max_pause = max_pause
        self.yield_ratio = yield_ratio
        self._lock = threading.Lock()
        self._turns = threading.Condition(self._lock)  # a running search ended
        self._admitted: set[Ticket] = set()
        self.anticipation = anticipation
        # per tenant: the size of its last search that announced one, and when it ended
        self._ended: OrderedDict[Hashable, tuple[float, float]] = OrderedDict()
        # tenants with someone waiting, in turn order; per tenant its keys in turn order
        self._waiting: OrderedDict[Hashable, OrderedDict[Hashable, deque[Ticket]]] = OrderedDict()
        self._running: Counter[Hashable] = Counter()
        self._busy = 0
        self.active_seconds = active_seconds
        self._clock = clock
        self._seen: OrderedDict[Hashable, float] = OrderedDict()  # tenant -> last arrival

    def arrive(self, ticket: Ticket) -> None:
        """Queue ``ticket``; it is woken (maybe at once) when its turn comes. ``Busy`` (429)
        when its key already has ``key_queue`` requests waiting."""
        with self._lock:
            keys = self._waiting.get(ticket.tenant)
            queued = None if keys is None else keys.get(ticket.key)
            if queued is not None and len(queued) >= self.key_queue:
                raise Busy(
                    429,
                    f"this key already has {len(queued)} searches waiting; send fewer at once",
                    1.0,
                )
            if keys is None:
                keys = self._waiting[ticket.tenant] = OrderedDict()
            keys.setdefault(ticket.key, deque()).append(ticket)
            self._note(ticket.tenant)
            admitted = self._dispatch()
        _wake(admitted)

    def release(self, ticket: Ticket) -> None:
        """An admitted ticket's work is over: its slot goes to the next in turn."""
        with self._lock:
            if not ticket.admitted or ticket.done:
                return
            ticket.done = True
            self._admitted.discard(ticket)
            if ticket.size > 0:
                self._ended[ticket.tenant] = (ticket.size, time.monotonic())
                self._ended.move_to_end(ticket.tenant)
                while len(self._ended) > _REMEMBERED_ENDS:
                    self._ended.popitem(last=False)
            self._busy -= 1
            self._running[ticket.tenant] -= 1
            if self._running[ticket.tenant] <= 0:
                del self._running[ticket.tenant]
            admitted = self._dispatch()
            self._turns.notify_all()  # whoever stepped aside for it may go on
        _wake(admitted)

    def step_aside(self, ticket: Ticket, size: float | None = None) -> None:
        """At a checkpoint of an admitted search (``size``: how big it is, when known):
        wait while another tenant's search at most ``1 / yield_ratio`` its size runs, for
        at most ``max_pause`` seconds over the whole search. Blocks: call it from the
        thread that does the search's work, never from the event loop."""
        with self._turns:
            if not ticket.admitted or ticket.done:
                return
            if size is not None:
                ticket.size = max(ticket.size, float(size))
            # the checkpoint that announces a size is the one before the embedding
            anticipate = size is not None and self.anticipation > 0
            while ticket.paused < self.max_pause and self._outranked(ticket, anticipate):
                ticket.stepping_aside = True
                began = time.monotonic()
                left = self.max_pause - ticket.paused
                # an anticipated search may never come: look again once the window passed
                self._turns.wait(min(left, self.anticipation) if anticipate else left)
                ticket.paused += time.monotonic() - began
            ticket.stepping_aside = False

    def _outranked(self, ticket: Ticket, anticipate: bool = False) -> bool:
        """Whether a search of another tenant, much smaller than ``ticket``'s, is running
        (not itself stepping aside), or, with ``anticipate``, ended within
        ``anticipation`` seconds."""
        if ticket.size <= 0:
            return False
        bound = ticket.size / self.yield_ratio
        if anticipate:
            since = time.monotonic() - self.anticipation
            if any(
                tenant != ticket.tenant and ended >= since and 0 < size <= bound
                for tenant, (size, ended) in self._ended.items()
            ):
                return True
        return any(
            other.tenant != ticket.tenant and not other.stepping_aside and 0 < other.size <= bound
            for other in self._admitted
        )

    def abandon(self, ticket: Ticket) -> None:
        """The request gave up (cancelled, timed out): out of the queue, or, if it was
        admitted meanwhile, its slot handed on."""
        with self._lock:
            if not ticket.admitted:
                keys = self._waiting.get(ticket.tenant)
                queued = None if keys is None else keys.get(ticket.key)
                if keys is not None and queued is not None and ticket in queued:
                    queued.remove(ticket)
                    if not queued:
                        del keys[ticket.key]
                    if not keys:
                        del self._waiting[ticket.tenant]
                ticket.done = True
                return
        self.release(ticket)

    def state(self) -> dict[str, int]:
        """Slots in use and requests waiting (for metrics and tests)."""
        with self._lock:
            waiting = sum(len(q) for keys in self._waiting.values() for q in keys.values())
            return {"running": self._busy, "waiting": waiting}

    def _dispatch(self) -> list[Ticket]:
        """Admit waiters while slots are free: the first tenant in turn order that is under
        its share, then that tenant's next key; both go to the back of their turn order."""
        admitted: list[Ticket] = []
        share = self.tenant_slots if self._others_active() else self.slots
        while self._busy < self.slots:
            tenant = next((t for t in self._waiting if self._running[t] < share), None)
            if tenant is None:
                break
            keys = self._waiting[tenant]
            key, queued = next(iter(keys.items()))
            ticket = queued.popleft()
            if queued:
                keys.move_to_end(key)
            else:
                del keys[key]
            if keys:
                self._waiting.move_to_end(tenant)
            else:
                del self._waiting[tenant]
            ticket.admitted = True
            self._admitted.add(ticket)
            self._running[tenant] += 1
            self._busy += 1
            admitted.append(ticket)
        return admitted

    def _note(self, tenant: Hashable) -> None:
        self._seen[tenant] = self._clock()
        self._seen.move_to_end(tenant)

    def _others_active(self) -> bool:
        """Whether more than one tenant asked within ``active_seconds`` (older arrivals are
        forgotten here)."""
        since = self._clock() - self.active_seconds
        while self._seen and next(iter(self._seen.values())) < since:
            self._seen.popitem(last=False)
        return len(self._seen) > 1


def _wake(tickets: list[Ticket]) -> None:
    for ticket in tickets:  # outside the lock: a waker may call back into the queue
        ticket.wake()


class FairScheduler:
    """``async with scheduler.turn(tenant, key):`` runs the block in a slot, in fair turn.
    ``slots`` defaults to the core count; see the module for the rest."""

    def __init__(
        self,
        slots: int | None = None,
        tenant_slots: int | None = None,
        key_queue: int = 64,
        timeout: float = 30.0,
        max_pause: float = 0.5,
    ) -> None:
        if timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout}")
        self.queue = FairQueue(
            slots or os.cpu_count() or 1, tenant_slots, key_queue, max_pause=max_pause
        )
        self.timeout = timeout

    async def acquire(self, tenant: Hashable, key: Hashable) -> Ticket:
        """Wait for a slot in fair turn; ``release`` the ticket when the work is over.
        ``Busy`` when the key's queue is full or no slot came within the timeout."""
        loop = asyncio.get_running_loop()
        admitted: asyncio.Future[None] = loop.create_future()

        def wake() -> None:  # from whichever thread released the slot
            loop.call_soon_threadsafe(_settle, admitted)

        ticket = Ticket(tenant, key, wake)
        self.queue.arrive(ticket)
        try:
            await asyncio.wait_for(asyncio.shield(admitted), self.timeout)
        except TimeoutError:
            self.queue.abandon(ticket)
            raise Busy(
                503, f"the server is busy: no search slot came free in {self.timeout:g} s", 1.0
            ) from None
        except BaseException:  # cancelled: the client went away
            self.queue.abandon(ticket)
            raise
        # this request's searches step aside at the engine's checkpoints (in the request's
        # context, which its worker thread copies)
        ticket.courtesy = courtesy.install(partial(self.queue.step_aside, ticket))
        return ticket

    def release(self, ticket: Ticket) -> None:
        if ticket.courtesy is not None:
            courtesy.uninstall(ticket.courtesy)
            ticket.courtesy = None
        self.queue.release(ticket)

    @asynccontextmanager
    async def turn(self, tenant: Hashable, key: Hashable) -> AsyncIterator[None]:
        ticket = await self.acquire(tenant, key)
        try:
            yield
        finally:
            self.release(ticket)


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
