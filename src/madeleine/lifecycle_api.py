"""The lifecycle half of ``Memory``: archive and restore, pins and importance, consolidation
(``maintain``), undo, and timelines. Kept apart from ``api.py`` so each file stays readable;
``Memory`` inherits these methods."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from madeleine.engine import Engine
from madeleine.facts.cards import Card
from madeleine.inputs import require_id, require_short_text
from madeleine.maintain.consolidate import MaintenanceReport
from madeleine.maintain.lifecycle import ItemLifecycle
from madeleine.maintain.timeline import Timeline, build_timeline, restored_timeline
from madeleine.read.request import TimeBound, epoch_of, require_limit
from madeleine.store.records import LifecycleEntry
from madeleine.text.pii import policy_from
from madeleine.write.privacy import Privacy

_MAX_WORDS = 2_000  # a reason or a run id, as a person would write one


class LifecycleMethods:
    """Needs ``_open()`` (the engine) and ``_cut`` (the query cost cap) from the class it is
    mixed into."""

    _cut: Callable[[str], str]

    def _open(self) -> Engine:  # pragma: no cover - provided by Memory
        raise NotImplementedError

    # -- one item ------------------------------------------------------------------------------

    def archive(self, item_id: str, *, user_id: str, reason: str = "by request") -> bool:
        """Take a turn (``ep_…``) or fact (``fact_…``) out of search and context, keeping it
        (``restore`` brings it back; ``include_archived=True`` shows it). False when it was
        archived already. Deleting for good is ``delete``."""
        require_id(user_id, "user_id")
        _require_words(reason, "reason")
        engine = self._open()
        # the reason is kept in the lifecycle log: under the PII policy, as a message is
        said = Privacy(engine.store, policy_from(engine.settings.pii.policy)).text(user_id, reason)
        return engine.lifecycle.archive(user_id, item_id, said)

    def restore(self, item_id: str, *, user_id: str) -> bool:
        """Bring an archived turn or fact back into search; its strength starts afresh.
        False, changing nothing, when it was not archived."""
        require_id(user_id, "user_id")
        return self._open().lifecycle.restore(user_id, item_id)

    def pin(self, item_id: str, *, user_id: str) -> bool:
        """Pinned: never fades, never archived by maintenance (``archive`` still can), and
        first in the user's profile."""
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

    def edit_fact(
        self, fact_id: str, statement: str, *, user_id: str, reason: str = "edited by a person"
    ) -> Card:
        """Correct a card: a new version with ``statement`` supersedes it (same slot, sources
        and importance; confidence 1.0; PII policy applied; a pin carries over). The old
        version stays in ``history``; the routing log says who and why. StaleVersionError
        when ``fact_id`` was superseded already (edit the newest version)."""
        require_id(user_id, "user_id")
        _require_words(reason, "reason")
        engine = self._open()
        number, replaced = engine.editor.edit(user_id, fact_id, statement, reason)
        if replaced.card.pinned:
            engine.lifecycle.pin(user_id, f"fact_{number}", True)
        edited = engine.store.facts.get(number)
        assert edited is not None  # just written
        return engine.restorer.card(edited.card)

    def lifecycle(self, item_id: str, *, user_id: str, now: TimeBound = None) -> ItemLifecycle:
        """Where an item stands: archived, pinned, importance, strength, recalls, and why it
        is protected from fading if it is. Raises LookupError for an unknown item."""
        require_id(user_id, "user_id")
        return self._open().lifecycle.describe(user_id, item_id, _moment(now))

    # -- maintenance -----------------------------------------------------------------------------

    def consolidate(self, user_id: str, *, now: TimeBound = None) -> MaintenanceReport:
        """Consolidate one user's memory now: importance by rules, duplicate cards merged,
        restated turns archived, old sessions digested, repeated procedures abstracted,
        faded items archived. ``report.changes`` lists what changed (empty when nothing was
        left to do); ``undo(report.run, user_id=…)`` puts it all back. Pending recalls and
        queued messages are written first, so the run sees the latest state."""
        require_id(user_id, "user_id")
        moment = _moment(now)
        engine = self._open()
        engine.lifecycle.write_recalls()
        return engine.consolidator.run(user_id, moment)

    def maintain(
        self, user_ids: Sequence[str] | None = None, *, now: TimeBound = None
    ) -> list[MaintenanceReport]:
        """``consolidate`` for these users (default: every user in the store)."""
        if isinstance(user_ids, str) or not isinstance(user_ids, Sequence | None):
            raise TypeError(
                "user_ids must be a list of user ids (or None for every user); "
                "for one user: consolidate(user_id)"
            )
        users = list(user_ids) if user_ids is not None else None
        for user in users or ():
            require_id(user, "user_ids")
        moment = _moment(now)
        engine = self._open()
        every = users if users is not None else engine.store.user_ids()
        return [self.consolidate(user, now=moment) for user in every]

    def undo(self, run: str, *, user_id: str) -> list[LifecycleEntry]:
        """Put back what a lifecycle run changed (a ``consolidate`` report's ``run``, or one
        edit's run from ``lifecycle_log``); the entries undone. An item a later run changed
        again keeps its newer state (undo the later run first); an empty list when the run
        was undone already; ItemNotFoundError when the user has no such run."""
        require_id(user_id, "user_id")
        _require_words(run, "run")
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
            timeline = build_timeline(
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
            # built (and narrated, perhaps by an LLM) on vault placeholders; the owner reads
            # the values, as facts() and search() give them
            return restored_timeline(timeline, lambda text: engine.restorer.text(user_id, text))

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
        request = replace(request, query=self._cut(request.query))
        with engine.store.reading():
            if not engine.store.has_user(user_id):
                return set()
            hits = engine.searcher.search(request)
        # what the query's words or meaning found, not what a stage brought along (a
        # neighbouring turn) nor the dense channel's long tail (every item is some distance
        # from any query)
        found = {h.id for h in hits if _matched(h.explain.get("channels", {}))}
        numbers = [int(i[5:]) for i in found if i.startswith("fact_")]
        for fact in engine.store.facts.get_many(numbers).values():
            linked = _chain_ids(fact.card.supersedes, fact.card.superseded_by)
            found.update(f"fact_{n}" for n in linked)
        return found


_TIMELINE_DENSE_FLOOR = 0.5  # calibrated similarity: the middle of the embedder's range


def _matched(channels: dict[str, Any]) -> bool:
    words = float(channels.get("bm25", {}).get("score", 0.0)) > 0
    near = float(channels.get("dense", {}).get("calibrated", 0.0)) >= _TIMELINE_DENSE_FLOOR
    return words or near


def _moment(now: TimeBound) -> float | None:
    """``now`` as epoch seconds, checked before anything is written."""
    if now is None:
        return None
    moment = epoch_of(now, "now")
    if moment < 0:
        raise ValueError(f"now must be a time after 1970-01-01, got {now!r}")
    return moment


def _require_words(value: object, field: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{field} must be a string, got {type(value).__name__}")
    if not value.strip():
        raise ValueError(f"{field} must not be empty")
    return require_short_text(value, field, _MAX_WORDS)  # kept in the lifecycle log as given


def _chain_ids(*ids: str | None) -> list[int]:
    return [int(i[5:]) for i in ids if i is not None and i.startswith("fact_")]


__all__ = ["LifecycleMethods"]
