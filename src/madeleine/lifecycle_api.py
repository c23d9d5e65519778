"""The lifecycle half of ``Memory``: archive and restore, pins and importance, consolidation
(``maintain``), undo, and timelines. Kept apart from ``api.py`` so each file stays readable;
``Memory`` inherits these methods."""

from __future__ import annotations

from collections.abc import Sequence

from madeleine.engine import Engine
from madeleine.maintain.consolidate import MaintenanceReport
from madeleine.maintain.lifecycle import ItemLifecycle
from madeleine.maintain.timeline import Timeline, build_timeline
from madeleine.read.request import TimeBound, epoch_of, require_limit
from madeleine.store.records import LifecycleEntry
from madeleine.write.normalize import require_id, require_text


class LifecycleMethods:
    """Needs ``_open()`` (the engine) from the class it is mixed into."""

    def _open(self) -> Engine:  # pragma: no cover - provided by Memory
        raise NotImplementedError

    # -- one item ------------------------------------------------------------------------------

    def archive(self, item_id: str, *, user_id: str, reason: str = "by request") -> bool:
        """Take a turn (``ep_…``) or fact (``fact_…``) out of search and context, keeping it
        (``restore`` brings it back; ``include_archived=True`` shows it). False when it was
        archived already. Deleting for good is ``delete``."""
        require_id(user_id, "user_id")
        require_text(reason, "reason")
        return self._open().lifecycle.archive(user_id, item_id, reason)

    def restore(self, item_id: str, *, user_id: str) -> bool:
        """Bring an archived turn or fact back into search; its strength starts afresh."""
        require_id(user_id, "user_id")
        return self._open().lifecycle.restore(user_id, item_id)

    def pin(self, item_id: str, *, user_id: str) -> bool:
        """Pinned: never fades, never archived, and first in the user's profile."""
        require_id(user_id, "user_id")
        return self._open().lifecycle.pin(user_id, item_id, True)

    def unpin(self, item_id: str, *, user_id: str) -> bool:
        require_id(user_id, "user_id")
        return self._open().lifecycle.pin(user_id, item_id, False)

    def set_importance(self, item_id: str, importance: float, *, user_id: str) -> bool:
        """Importance from 0 to 1, set by the caller (it wins over rules and LLM); at
        ``lifecycle.protect_importance`` (0.8) and above the item never fades."""
        require_id(user_id, "user_id")
        return self._open().lifecycle.set_importance(user_id, item_id, importance)

    def lifecycle(self, item_id: str, *, user_id: str, now: float | None = None) -> ItemLifecycle:
        """Where an item stands: archived, pinned, importance, strength, recalls, and why it
        is protected from fading if it is. Raises LookupError for an unknown item."""
        require_id(user_id, "user_id")
        return self._open().lifecycle.describe(user_id, item_id, now)

    # -- maintenance -----------------------------------------------------------------------------

    def consolidate(self, user_id: str, *, now: float | None = None) -> MaintenanceReport:
        """Consolidate one user's memory now: importance by rules, duplicate cards merged,
        restated turns archived, old sessions digested, repeated procedures abstracted,
        faded items archived. ``report.changes`` lists what changed (empty when nothing was
        left to do); ``undo(report.run, user_id=…)`` puts it all back. Pending recalls and
        queued messages are written first, so the run sees the latest state."""
        require_id(user_id, "user_id")
        engine = self._open()
        engine.lifecycle.write_recalls()
        return engine.consolidator.run(user_id, now)

    def maintain(
        self, user_ids: Sequence[str] | None = None, *, now: float | None = None
    ) -> list[MaintenanceReport]:
        """``consolidate`` for these users (default: every user in the store)."""
        engine = self._open()
        users = list(user_ids) if user_ids is not None else engine.store.user_ids()
        return [self.consolidate(user, now=now) for user in users]

    def undo(self, run: str, *, user_id: str) -> list[LifecycleEntry]:
        """Put back what a lifecycle run changed (a ``consolidate`` report's ``run``, or one
        edit's run from ``lifecycle_log``); the entries undone."""
        require_id(user_id, "user_id")
        require_text(run, "run")
        return self._open().lifecycle.undo(user_id, run)

    def lifecycle_log(
        self, user_id: str, *, run: str | None = None, limit: int = 100
    ) -> list[LifecycleEntry]:
        """Lifecycle changes to this user's memory, newest first (one run's with ``run``)."""
        require_id(user_id, "user_id")
        require_limit(limit, "limit", 100_000)
        return self._open().store.lifecycle.entries(user_id, run, limit)

    # -- timeline --------------------------------------------------------------------------------

    def timeline(
        self,
        user_id: str,
        query: str | None = None,
        *,
        start: TimeBound = None,
        end: TimeBound = None,
        include_archived: bool = False,
        limit: int = 1000,
    ) -> Timeline:
        """What happened, in order: ``.items`` (turns, facts and digests, each with ``.id
        .kind .timestamp .text``; superseded facts carry ``superseded_by``), ``.groups`` (by
        day and session) and ``.narrative``. With ``query``, only what a search for it finds
        (and the facts and turns linked to that). At most ``limit`` items, the latest."""
        require_id(user_id, "user_id")
        require_limit(limit, "limit", 100_000)
        if not isinstance(include_archived, bool):
            raise TypeError("include_archived must be a bool")
        low = None if start is None else epoch_of(start, "start")
        high = None if end is None else epoch_of(end, "end")
        if low is not None and high is not None and low > high:
            raise ValueError("start is after end")
        engine = self._open()
        only: set[str] | None = None
        if query is not None:
            only = self._timeline_matches(engine, user_id, query, low, high, include_archived)
        with engine.store.reading():
            return build_timeline(
                engine.store,
                user_id,
                start=low,
                end=high,
                only=only,
                include_archived=include_archived,
                limit=limit,
                llm=engine.llm,
                query=query,
            )

    def _timeline_matches(
        self,
        engine: Engine,
        user_id: str,
        query: str,
        low: float | None,
        high: float | None,
        include_archived: bool,
    ) -> set[str]:
        from madeleine.read.request import build_request

        request = build_request(
            query,
            user_id,
            50,
            None,
            None if low is None and high is None else (low, high),
            None,
            None,
            None,
            True,
            engine.searcher.default_stages,
            include_archived=include_archived,
        )
        with engine.store.reading():
            if not engine.store.has_user(user_id):
                return set()
            hits = engine.searcher.search(request)
        # what a channel recalled, not what a stage brought along (a neighbouring turn)
        found = {
            h.id
            for h in hits
            if any(e.get("score", 1.0) > 0 for e in h.explain.get("channels", {}).values())
        }
        numbers = [int(h.id[5:]) for h in hits if h.id.startswith("fact_")]
        for fact in engine.store.facts.get_many(numbers).values():
            linked = _chain_ids(fact.card.supersedes, fact.card.superseded_by)
            found.update(f"fact_{n}" for n in linked)
        return found


def _chain_ids(*ids: str | None) -> list[int]:
    return [int(i[5:]) for i in ids if i is not None and i.startswith("fact_")]


__all__ = ["LifecycleMethods"]
