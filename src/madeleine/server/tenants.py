"""One ``Memory`` per tenant, each in its own directory under ``<data>/tenants/`` — or, with
the PostgreSQL store (``MADELEINE_STORE=postgresql://…``), in its own schema of that
database (``<store.schema_name>_<tenant>_<hash>``).

Separate stores make isolation structural: a tenant's key opens only its own store, so no
id guessed from another tenant can name anything there. All tenants share one embedder
(the model is loaded once per process).

Open stores are bounded: a request *leases* its tenant's store for its whole duration
(``with tenants.lease(name) as memory``), and a store nobody leases is closed once it has
been idle ``idle_seconds`` or when more than ``max_open`` stores are open (least recently
used first). A leased store is never closed, so the open count exceeds ``max_open`` only
while more tenants than that have a request in flight. Evicted stores close on a janitor
thread (a close waits for the store's indexer to finish its batch: no request pays for
another tenant's), which also notices idle stores when no request comes. A closed tenant
reopens on its next request (its data is on disk; only caches are lost)."""

from __future__ import annotations

import ctypes
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from madeleine.api import Memory
from madeleine.config import Settings
from madeleine.embed.base import Embedder
from madeleine.server.keys import require_tenant
from madeleine.store.backends import is_url, tenant_namespace

log = logging.getLogger(__name__)

DEFAULT_MAX_OPEN = 64
DEFAULT_IDLE_SECONDS = 300.0


def _libc_trim() -> Callable[[int], object] | None:
    try:
        trim: Callable[[int], object] = ctypes.CDLL("libc.so.6").malloc_trim
        return trim
    except (OSError, AttributeError):  # not glibc: nothing to do
        return None


_TRIM = _libc_trim()


def return_freed_memory() -> None:
    """Hand the C heap's free pages back to the system after stores close: SQLite's page
    caches, the tokenizers' buffers and the indexes are freed by ``close()``, but glibc keeps
    the pages, scattered among live ones, so a server that cycles through thousands of
    tenants would grow by ~16 KB a store without it."""
    if _TRIM is not None:
        _TRIM(0)


@dataclass(slots=True)
class _Open:
    memory: Memory
    leases: int = 0
    idle_since: float = 0.0


class Tenants:
    def __init__(
        self,
        data: Path,
        settings: Settings,
        embedder: Embedder,
        *,
        max_open: int = DEFAULT_MAX_OPEN,
        idle_seconds: float = DEFAULT_IDLE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if isinstance(max_open, bool) or not isinstance(max_open, int) or max_open < 1:
            raise ValueError(f"max_open must be an int >= 1, got {max_open!r}")
        if not isinstance(idle_seconds, int | float) or not 0 < idle_seconds < float("inf"):
            raise ValueError(f"idle_seconds must be a finite number > 0, got {idle_seconds!r}")
        self._root = data / "tenants"
        self._settings = settings
        self._embedder = embedder
        self._max_open = max_open
        self._idle_seconds = float(idle_seconds)
        self._clock = clock
        self._open: OrderedDict[str, _Open] = OrderedDict()  # least recently used first
        self._closing: dict[str, threading.Event] = {}  # evicted, not closed yet
        self._queue: list[tuple[str, _Open]] = []  # evicted, for the janitor to close
        self._lock = threading.Lock()
        self._closed = False
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._janitor: threading.Thread | None = None

    @contextmanager
    def lease(self, tenant: str) -> Iterator[Memory]:
        """The tenant's store (opened on first use, created when new), kept open until the
        block ends."""
        entry = self._acquire(tenant)
        try:
            yield entry.memory
        finally:
            self._release(entry)

    def known(self) -> list[str]:
        """Tenants with a store on disk, opened or not (with PostgreSQL: open ones)."""
        if is_url(self._settings.store.url):
            with self._lock:
                return sorted(self._open)
        if not self._root.is_dir():
            return []
        return sorted(p.name for p in self._root.iterdir() if p.is_dir())

    def opened(self) -> int:
        """Stores open now, leased or idle (at most ``max_open`` but for leases)."""
        return len(self._open)

    def closing(self) -> int:
        """Stores evicted and not closed yet (at most ``max_open``: beyond, requests help)."""
        return len(self._closing)

    def sweep(self) -> int:
        """Close now the stores idle longer than ``idle_seconds`` and those already evicted;
        how many were closed (the janitor thread calls this)."""
        with self._lock:
            self._queue.extend(self._evict())
            mine, self._queue = self._queue, []
            others = [e for n, e in self._closing.items() if n not in {m for m, _ in mine}]
        self._close_all(mine)
        for event in others:  # closing on the janitor's thread meanwhile
            event.wait()
        return len(mine) + len(others)

    def close(self) -> None:
        """Close every store (the server is stopping); a store still leased is closed when
        its lease ends."""
        with self._lock:
            self._closed = True
            self._stop.set()
            self._wake.set()
            for name, entry in list(self._open.items()):
                if entry.leases == 0:
                    del self._open[name]
                    self._closing[name] = threading.Event()
                    self._queue.append((name, entry))
        janitor = self._janitor
        if janitor is not None and janitor is not threading.current_thread():
            janitor.join()
        self.sweep()

    # -- internals --------------------------------------------------------------------------

    def _acquire(self, tenant: str) -> _Open:
        require_tenant(tenant)
        while True:
            with self._lock:
                if self._closed:
                    raise RuntimeError("the server is shutting down")
                closing = self._closing.get(tenant)
                if closing is None:
                    entry = self._open.get(tenant)
                    if entry is None:
                        # opened under the lock: one store per tenant, never two at once
                        entry = _Open(self._open_store(tenant))
                        self._open[tenant] = entry
                    self._open.move_to_end(tenant)
                    entry.leases += 1
                    self._queue.extend(self._evict())
                    # closing runs on the janitor's thread, off the request's time, unless
                    # closes fall behind opens: then requests help (memory stays bounded)
                    behind = len(self._closing) > self._max_open
                    self._start_janitor()
                    break
            closing.wait()  # the evicted store finishes closing before it reopens
        if behind:
            self.sweep()
        return entry

    def _release(self, entry: _Open) -> None:
        with self._lock:
            entry.leases -= 1
            entry.idle_since = self._clock()
            if not self._closed:
                self._queue.extend(self._evict())
                return
            last = entry.leases == 0
            name = next((n for n, e in self._open.items() if e is entry), None)
            if last and name is not None:  # the server stopped while this request ran
                del self._open[name]
                self._closing[name] = threading.Event()
                self._queue.append((name, entry))
        self.sweep()

    def _evict(self) -> list[tuple[str, _Open]]:
        """Take out (under the lock) the unleased stores past their idle time, then the least
        recently used ones beyond ``max_open``; they are closed outside the lock."""
        now = self._clock()
        evicted: list[tuple[str, _Open]] = []
        excess = len(self._open) - self._max_open
        for name, entry in list(self._open.items()):
            if entry.leases:
                continue
            if excess > 0 or now - entry.idle_since >= self._idle_seconds:
                evicted.append((name, entry))
                excess -= 1
        for name, _ in evicted:
            del self._open[name]
            self._closing[name] = threading.Event()
        if evicted:
            self._wake.set()
        return evicted

    def _close_all(self, evicted: list[tuple[str, _Open]]) -> None:
        for name, entry in evicted:
            try:
                entry.memory.close()
            except Exception:  # one store failing to close must not keep the others open
                log.exception("could not close the store of tenant %s", name)
            finally:
                with self._lock:
                    self._closing.pop(name).set()
        if evicted:
            return_freed_memory()

    def _start_janitor(self) -> None:
        """Evicted stores close, and idle ones are noticed without a request (started on
        first use)."""
        if self._janitor is None:
            self._janitor = threading.Thread(
                target=self._janitor_loop, name="madeleine-tenants", daemon=True
            )
            self._janitor.start()

    def _janitor_loop(self) -> None:
        period = min(60.0, max(0.05, self._idle_seconds / 4))
        while not self._stop.is_set():
            self._wake.wait(period)
            self._wake.clear()
            if self._stop.is_set():
                return  # close() closes what is left
            try:
                self.sweep()
            except Exception:
                log.exception("closing idle tenant stores failed; retrying")

    def _open_store(self, tenant: str) -> Memory:
        url = self._settings.store.url
        if url is not None and is_url(url):  # a namespace (schema) per tenant in its database
            settings = self._settings.model_copy(deep=True)
            settings.store.schema_name = tenant_namespace(url, settings.store.schema_name, tenant)
            return Memory(url, embedder=self._embedder, settings=settings)
        return Memory(self._root / tenant, embedder=self._embedder, settings=self._settings)
