"""``Memory``: the facade a developer uses. One directory, one SQLite file, no server."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import shutil
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from madeleine.config import Settings
from madeleine.embed.base import Embedder
from madeleine.embed.factory import load_embedder
from madeleine.errors import StoreClosedError
from madeleine.read.assemble import assemble
from madeleine.read.dense import DenseIndex
from madeleine.read.search import CHANNELS, Searcher, SearchRequest, Stages, neighbour_hits
from madeleine.records import AddResult, Context, Hit
from madeleine.store.sqlite import SQLiteStore
from madeleine.text.analyzer import Analyzer, MultilingualAnalyzer
from madeleine.text.timeparse import parse_timestamp, to_epoch
from madeleine.text.tokens import TokenCounter, estimate_tokens
from madeleine.write.normalize import normalize_messages, require_id
from madeleine.write.worker import BackgroundWorker, Indexer

log = logging.getLogger(__name__)

_MEMORY_ID = re.compile(r"^(ep|ev)_(\d+)$")
_MAX_LIMIT = 1000
_MAX_QUERY_CHARS = 10_000

TimeBound = datetime | str | float | int | None


class Memory:
    """Long-term memory for an agent's users, stored in ``path``.

    ``add`` returns once messages are durably logged; indexing happens in a background worker
    (call ``wait`` to block until it has caught up). Every read is scoped to one user.
    ``rebuild=True`` drops every derived index and re-indexes the whole log, e.g. to switch
    embedders.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] = "./memory-data",
        *,
        embedder: Embedder | str | None = None,
        settings: Settings | None = None,
        token_counter: TokenCounter | None = None,
        rebuild: bool = False,
        **overrides: Any,
    ) -> None:
        if settings is not None and overrides:
            raise TypeError("pass either settings=Settings(...) or keyword overrides, not both")
        self.settings = settings or Settings.from_env(dict(os.environ), **overrides)
        self.path = Path(path)
        if self.path.exists() and not self.path.is_dir():
            raise ValueError(f"path must be a directory, but {self.path} is a file")
        self.path.mkdir(parents=True, exist_ok=True)
        self._store = SQLiteStore(self.path / "memory.db", self.settings.busy_timeout_ms)
        self._embedder: Embedder = (
            embedder
            if embedder is not None and not isinstance(embedder, str)
            else load_embedder(embedder or self.settings.embedder)
        )
        self._analyzer: Analyzer = MultilingualAnalyzer()
        self._count_tokens: TokenCounter = token_counter or estimate_tokens
        try:
            if rebuild:
                queued = self._store.reset_indexes(self._embedder.name, self._embedder.dim)
                self._store.set_meta("analyzer", self._analyzer.name)
                shutil.rmtree(self.path / "ann", ignore_errors=True)
                log.info("indexes dropped; %d logged events queued for re-indexing", queued)
            self._store.bind_embedder(self._embedder.name, self._embedder.dim)
            self._check_analyzer()
            self._store.rebuild_missing_digests()
        except Exception:
            self._store.close()
            raise
        self._dense = DenseIndex(self._store, self.path / "ann", self.settings.ann_threshold)
        self._searcher = Searcher(
            self._store, self._dense, self._embedder, self._analyzer, self.settings
        )
        self._indexer = Indexer(
            self._store,
            self._embedder,
            self._analyzer,
            batch_size=self.settings.worker_batch,
            lease_seconds=self.settings.lease_seconds,
            context_chars=self.settings.context_chars,
        )
        self._worker = BackgroundWorker(self._indexer) if self.settings.background else None
        self._closed = False

    # -- writing --------------------------------------------------------------------------------

    def add(
        self,
        messages: Sequence[dict[str, Any]] | dict[str, Any],
        *,
        user_id: str,
        session_id: str = "default",
        timestamp: datetime | str | float | None = None,
    ) -> AddResult:
        """Append messages to the user's log. Re-adding a message (same id, or same content,
        session and time) creates nothing new. Raises ``ValueError``/``TypeError`` and writes
        nothing if any message is invalid."""
        self._ensure_open()
        require_id(user_id, "user_id")
        require_id(session_id, "session_id")
        events = normalize_messages(
            messages,
            user_id=user_id,
            session_id=session_id,
            timestamp=timestamp,
            now=datetime.now(UTC),
            max_chars=self.settings.max_message_chars,
            max_messages=self.settings.max_batch_messages,
        )
        added, duplicates = self._store.append_events(events)
        if added and self._worker is not None:
            self._worker.notify()
        return AddResult(added=added, duplicates=duplicates)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until every queued indexing job is done; False if ``timeout`` passed first."""
        self._ensure_open()
        if self._worker is not None:
            return self._worker.wait_idle(timeout)
        self._indexer.drain()
        return self._store.pending_jobs() == 0

    def index_pending(self, progress: Any = None) -> int:
        """Index queued work in the calling thread (for CLIs and batch jobs); returns jobs done."""
        self._ensure_open()
        return self._indexer.drain(progress)

    # -- reading --------------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        user_id: str,
        limit: int = 10,
        channels: Sequence[str] | None = None,
        time_range: tuple[TimeBound, TimeBound] | None = None,
        stages: dict[str, Any] | None = None,
        now: datetime | str | float | None = None,
    ) -> list[Hit]:
        """Hybrid search of one user's memories; an unknown user gets an empty list.

        ``stages`` switches pipeline stages for this query: ``fusion`` ('weighted'/'rrf'),
        ``windows``, ``sessions``, ``dated``, ``time``, ``decay`` (bools), ``diversify``
        (True/False/'auto'). ``now`` is the reference time for "last week", "3일 전" etc.
        (default: the present)."""
        self._ensure_open()
        request = self._request(query, user_id, limit, channels, time_range, stages, now)
        if not self._store.has_user(user_id):
            return []
        return self._searcher.search(request)

    def context(
        self,
        query: str,
        *,
        user_id: str,
        budget_tokens: int = 2000,
        limit: int = 50,
        channels: Sequence[str] | None = None,
        time_range: tuple[TimeBound, TimeBound] | None = None,
        stages: dict[str, Any] | None = None,
        now: datetime | str | float | None = None,
        window: int = 1,
    ) -> Context:
        """The most relevant memories as a text block of at most ``budget_tokens`` tokens,
        in sections per session; ``window`` neighbouring turns on each side of a hit are added
        while budget remains (0: hits only)."""
        if isinstance(budget_tokens, bool) or not isinstance(budget_tokens, int):
            raise TypeError(f"budget_tokens must be an int, got {type(budget_tokens).__name__}")
        if budget_tokens <= 0:
            raise ValueError(f"budget_tokens must be positive, got {budget_tokens}")
        if isinstance(window, bool) or not isinstance(window, int) or not 0 <= window <= 10:
            raise ValueError(f"window must be an int from 0 to 10, got {window!r}")
        hits = self.search(
            query,
            user_id=user_id,
            limit=limit,
            channels=channels,
            time_range=time_range,
            stages=stages,
            now=now,
        )
        store = self._store

        def neighbours(packed: Sequence[Hit]) -> dict[str, list[Hit]]:
            return neighbour_hits(store, packed, window)

        return assemble(hits, budget_tokens, self._count_tokens, neighbours if window else None)

    # -- deleting and exporting ---------------------------------------------------------------

    def delete(self, memory_id: str, *, user_id: str | None = None) -> bool:
        """Delete a memory (``ep_…`` from a hit, or ``ev_…``) and the message it came from, from
        the log and every index. Returns False if it did not exist, or, when ``user_id`` is
        given, if it belongs to another user."""
        self._ensure_open()
        if user_id is not None:
            require_id(user_id, "user_id")
        if not isinstance(memory_id, str):
            raise TypeError(f"memory_id must be a str, got {type(memory_id).__name__}")
        match = _MEMORY_ID.match(memory_id)
        if match is None:
            raise ValueError(f"memory_id must look like 'ep_123' or 'ev_123', got {memory_id!r}")
        kind, number = match.group(1), int(match.group(2))
        event_id = self._store.episode_focus(number) if kind == "ep" else number
        if event_id is None:
            return False
        deleted = self._store.delete_event(event_id, user_id=user_id)
        if deleted and self._worker is not None:
            self._worker.notify()
        return deleted

    def delete_message(self, message_id: str, *, user_id: str) -> bool:
        """Delete a message by the external id it was added with."""
        self._ensure_open()
        require_id(user_id, "user_id")
        event_id = self._store.event_by_external_id(user_id, str(message_id))
        return False if event_id is None else self.delete(f"ev_{event_id}", user_id=user_id)

    def forget_user(self, user_id: str) -> dict[str, int]:
        """Erase everything about a user: log, episodes, vectors, lexical index, ANN files."""
        self._ensure_open()
        require_id(user_id, "user_id")
        counts = self._store.forget_user(user_id)
        self._dense.forget(user_id)
        return counts

    def export_user(self, user_id: str) -> dict[str, Any]:
        """Everything stored about a user, as JSON-serializable data."""
        self._ensure_open()
        require_id(user_id, "user_id")
        return self._store.export_user(user_id)

    def stats(self) -> dict[str, Any]:
        self._ensure_open()
        stats = self._store.stats()
        stats["path"] = str(self.path)
        return stats

    def integrity(self) -> dict[str, int]:
        """Counts across the indexes; consistent when episodes == vectors == fts, no orphans."""
        self._ensure_open()
        return self._store.integrity()

    # -- lifecycle ------------------------------------------------------------------------------

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._worker is not None:
            self._worker.stop()
        self._searcher.close()
        self._store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _ensure_open(self) -> None:
        if self._closed:
            raise StoreClosedError("this Memory is closed")

    def _check_analyzer(self) -> None:
        recorded = self._store.meta("analyzer")
        if recorded is None:
            self._store.set_meta("analyzer", self._analyzer.name)
        elif recorded != self._analyzer.name:
            log.warning(
                "the lexical index was built with analyzer %s, this version uses %s; "
                "run `madeleine reindex` for best results",
                recorded,
                self._analyzer.name,
            )

    def _request(
        self,
        query: object,
        user_id: object,
        limit: object,
        channels: Sequence[str] | None,
        time_range: object,
        stages: object = None,
        now: object = None,
    ) -> SearchRequest:
        if not isinstance(query, str):
            raise TypeError(f"query must be a str, got {type(query).__name__}")
        if not query.strip():
            raise ValueError("query must be a non-empty string")
        if len(query) > _MAX_QUERY_CHARS:
            raise ValueError(f"query is longer than {_MAX_QUERY_CHARS:,} characters")
        user = require_id(user_id, "user_id")
        if isinstance(limit, bool) or not isinstance(limit, int):
            raise TypeError(f"limit must be an int, got {type(limit).__name__}")
        if not 1 <= limit <= _MAX_LIMIT:
            raise ValueError(f"limit must be between 1 and {_MAX_LIMIT}, got {limit}")
        return SearchRequest(
            query=query,
            user_id=user,
            limit=limit,
            channels=_validate_channels(channels),
            time_range=_validate_time_range(time_range),
            stages=Stages.parse(stages, self._searcher.default_stages),
            now=(
                datetime.now(UTC).timestamp()
                if now is None
                else to_epoch(parse_timestamp(now, "now"))
            ),
        )


def _validate_channels(channels: Sequence[str] | None) -> tuple[str, ...]:
    if channels is None:
        return CHANNELS
    if isinstance(channels, str) or not isinstance(channels, Sequence):
        raise TypeError("channels must be a list of channel names, e.g. ['dense', 'bm25']")
    chosen = tuple(dict.fromkeys(channels))
    if not chosen:
        raise ValueError("channels must name at least one channel")
    unknown = [c for c in chosen if c not in CHANNELS]
    if unknown:
        raise ValueError(f"channels has unknown names {unknown}; choose from {list(CHANNELS)}")
    return chosen


def _validate_time_range(time_range: object) -> tuple[float, float] | None:
    if time_range is None:
        return None
    if not isinstance(time_range, tuple | list) or len(time_range) != 2:
        raise TypeError("time_range must be a (start, end) pair; use None for an open end")
    start_raw, end_raw = time_range
    start = (
        float("-inf")
        if start_raw is None
        else to_epoch(parse_timestamp(start_raw, "time_range[0]"))
    )
    end = float("inf") if end_raw is None else to_epoch(parse_timestamp(end_raw, "time_range[1]"))
    if start > end:
        raise ValueError("time_range start is after its end")
    return (start, end)


class AsyncMemory:
    """The asyncio twin of ``Memory``: the same methods, run in a worker thread."""

    def __init__(self, path: str | os.PathLike[str] = "./memory-data", **kwargs: Any) -> None:
        self._memory = Memory(path, **kwargs)

    @property
    def sync(self) -> Memory:
        return self._memory

    async def add(self, messages: Any, **kwargs: Any) -> AddResult:
        return await asyncio.to_thread(self._memory.add, messages, **kwargs)

    async def wait(self, timeout: float | None = None) -> bool:
        return await asyncio.to_thread(self._memory.wait, timeout)

    async def search(self, query: str, **kwargs: Any) -> list[Hit]:
        return await asyncio.to_thread(self._memory.search, query, **kwargs)

    async def context(self, query: str, **kwargs: Any) -> Context:
        return await asyncio.to_thread(self._memory.context, query, **kwargs)

    async def delete(self, memory_id: str) -> bool:
        return await asyncio.to_thread(self._memory.delete, memory_id)

    async def forget_user(self, user_id: str) -> dict[str, int]:
        return await asyncio.to_thread(self._memory.forget_user, user_id)

    async def export_user(self, user_id: str) -> dict[str, Any]:
        return await asyncio.to_thread(self._memory.export_user, user_id)

    async def stats(self) -> dict[str, Any]:
        return await asyncio.to_thread(self._memory.stats)

    async def close(self) -> None:
        await asyncio.to_thread(self._memory.close)

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
