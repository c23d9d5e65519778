"""``Memory``: the facade a developer uses. One directory, one SQLite file, no server.

Each method checks its arguments and calls into the engine (``engine.py``), which holds the
store, the read path and the write path; nothing here builds a query or touches storage.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from madeleine.audit_api import AuditMethods
from madeleine.config import Settings
from madeleine.embed.base import Embedder
from madeleine.embed.cut import LEXICAL_QUERY_TOKENS, QueryCut
from madeleine.engine import Engine, build_engine
from madeleine.errors import ItemNotFoundError, StoreClosedError
from madeleine.facts.cards import Card
from madeleine.facts.checks import Check
from madeleine.importers.runner import ImportReport, import_chatgpt, import_claude_code
from madeleine.inputs import (
    MIN_TTL_SECONDS,
    require_id,
    require_seconds,
    require_short_text,
    require_text,
)
from madeleine.kb.ask import Answer, run_ask
from madeleine.kb.clarify import find_clarifications
from madeleine.kb.collection import KnowledgeBase, require_collection_name
from madeleine.kb.context import kb_section
from madeleine.kb.privacy import (
    DEFAULT_KB_POLICY,
    DocumentPrivacy,
    record_policy,
    require_kb_policy,
    stored_policy,
)
from madeleine.kb.records import CollectionInfo, KBHit, Principal
from madeleine.kb.search import KBRequest, validate_channels
from madeleine.lifecycle_api import LifecycleMethods
from madeleine.maintain.items import DIGEST_KEY
from madeleine.read.context import EVIDENCE_SESSIONS, validate_budget
from madeleine.read.request import (
    SearchRequest,
    TimeBound,
    build_request,
    epoch_of,
    require_limit,
)
from madeleine.records import AddResult, Context, Hit
from madeleine.shortterm.agent import AgentState
from madeleine.shortterm.session import Session
from madeleine.shortterm.summary import summarizer_for
from madeleine.store.backends import as_location
from madeleine.store.records import MAX_ID, fact_number
from madeleine.text.pii import policy_from
from madeleine.text.timeparse import from_epoch
from madeleine.text.tokens import TokenCounter
from madeleine.write.privacy import Privacy, kb_owner

Moment = datetime | str | float | None


DEFAULT_PATH = "./memory-data"
MAX_DESCRIPTION_CHARS = 10_000  # a KB collection's: what routing reads to pick it


class Memory(LifecycleMethods, AuditMethods):
    """Long-term memory for an agent's users, stored in ``path``.

    ``add`` returns once messages are durably logged; indexing happens in a background worker
    (call ``wait`` to block until it has caught up). Every read is scoped to one user.
    ``rebuild=True`` drops every derived index and re-indexes the whole log, e.g. to switch
    embedders. ``read_only=True`` (or None, the default, when the files cannot be written)
    opens the store for reads only: writes raise ``StoreReadOnlyError``.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        embedder: Embedder | str | None = None,
        settings: Settings | None = None,
        token_counter: TokenCounter | None = None,
        checks: Sequence[Check] | None = None,
        rebuild: bool = False,
        read_only: bool | None = None,
        **overrides: Any,
    ) -> None:
        if settings is not None and overrides:
            raise TypeError("pass either settings=Settings(...) or keyword overrides, not both")
        self.settings = settings or Settings.from_env(dict(os.environ), **overrides)
        if path is None:
            path = self.settings.store.url or DEFAULT_PATH
        self.path: Path | str = as_location(path)
        if isinstance(self.path, Path) and self.path.exists() and not self.path.is_dir():
            raise ValueError(f"path must be a directory, but {self.path} is a file")
        if read_only is not None and not isinstance(read_only, bool):
            raise TypeError(f"read_only must be a bool or None, got {type(read_only).__name__}")
        self._engine: Engine = build_engine(
            self.path,
            self.settings,
            embedder=embedder,
            token_counter=token_counter,
            checks=checks,
            rebuild=rebuild,
            read_only=read_only,
        )
        # the words every stage reads, at most (the embedding itself may read fewer:
        # embed.query_max_tokens, cut by the searcher)
        self._cut = QueryCut(self._engine.embedder, LEXICAL_QUERY_TOKENS)
        self._closed = False

    # -- writing --------------------------------------------------------------------------------

    def add(
        self,
        messages: Sequence[dict[str, Any]] | dict[str, Any],
        *,
        user_id: str,
        session_id: str = "default",
        timestamp: Moment = None,
    ) -> AddResult:
        """Append messages to the user's log. Re-adding a message (same id, or same content,
        session and time) creates nothing new. Raises ``ValueError``/``TypeError`` and writes
        nothing if any message is invalid."""
        return self._open().intake.add(messages, user_id, session_id, timestamp)

    def add_event(
        self,
        *,
        user_id: str,
        type: str,
        data: dict[str, Any] | None = None,
        timestamp: Moment = None,
        session_id: str = "events",
        id: str | None = None,
    ) -> AddResult:
        """Log a behavioural event (purchase, click, cart, …) in the same log as messages:
        one event schema, searchable by its rendered text, PII policy applied to its data."""
        return self._open().intake.add_event(user_id, type, data, timestamp, session_id, id)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until every queued indexing job is done. False if ``timeout`` passed first,
        or if some messages could not be indexed after every attempt (``stats()
        ["failed_jobs"]``; fix the cause, then ``retry_failed()``)."""
        if timeout is not None:
            timeout = require_seconds(timeout, "timeout", zero=True)
        return self._open().wait(timeout)

    def rotate_vault_key(self, new_key: str | None = None) -> dict[str, Any]:
        """Re-encrypt every vaulted PII value under a new key (generated unless given; with
        ``MADELEINE_VAULT_KEY`` set, pass the new key and set the variable to it afterwards).
        This Memory keeps working throughout; other processes open new values once they are
        restarted with the new key (or with ``MADELEINE_VAULT_KEY="new,old"`` meanwhile)."""
        if not isinstance(self.path, Path):
            return self._open().rotate_vault_key(Path("."), new_key)  # the key is configured
        return self._open().rotate_vault_key(self.path, new_key)

    def retry_failed(self) -> int:
        """Queue again the messages whose indexing failed on every attempt; how many."""
        return self._open().retry_failed()

    def index_pending(self, progress: Callable[[int], None] | None = None) -> int:
        """Index queued work in the calling thread (for CLIs and batch jobs); returns jobs done."""
        return self._open().indexer.drain(progress)

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
        now: Moment = None,
        as_of: TimeBound = None,
        include_history: bool = False,
        include_archived: bool = False,
    ) -> list[Hit]:
        """Hybrid search of one user's memories (turns and facts, ``hit.kind == 'fact'``);
        an unknown user gets an empty list.

        ``stages`` switches pipeline stages for this query: ``fusion`` ('weighted'/'rrf'),
        ``windows``, ``sessions``, ``dated``, ``time``, ``decay`` (bools), ``diversify``
        (True/False/'auto'). ``now`` is the reference time for "last week", "3일 전" etc.
        (default: the present). Facts are current truth by default; ``as_of`` returns the
        facts that held then and only what had been said by then; ``include_history`` adds
        superseded versions; ``include_archived`` what maintenance or ``archive`` took out."""
        engine = self._open()
        request = self._request(
            query,
            user_id,
            limit,
            channels,
            time_range,
            stages,
            now,
            as_of,
            include_history,
            include_archived,
        )
        return self._search(engine, request)

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
        now: Moment = None,
        window: int = 1,
        as_of: TimeBound = None,
        include_history: bool = False,
        principal: Principal | None = None,
        collections: Sequence[str] | None = None,
        kb: bool = True,
    ) -> Context:
        """The most relevant memories as a text block of at most ``budget_tokens`` tokens:
        alerts and the facts that bear on the query first, then turns in sections per session;
        ``window`` neighbouring turns on each side of a hit are added while budget remains,
        then evidence sentences (amounts, dates, names, identifiers the block lacks) from the
        hits and their sessions (0: hits only). When the knowledge base holds documents
        ``principal`` may read (and ``kb`` is True), a reference-documents section follows, within
        ``settings.kb.context_share`` of the budget (all of it when no memory matches).
        ``context.clarify`` lists choices the question leaves open ("my car" of a user with
        two cars)."""
        validate_budget(budget_tokens, window)
        if not isinstance(kb, bool):
            raise TypeError(f"kb must be a bool, got {type(kb).__name__}")
        engine = self._open()
        request = self._request(
            query, user_id, limit, channels, time_range, stages, now, as_of, include_history
        )
        if window:  # the evidence pool reaches the sessions the hits miss
            request = replace(request, session_anchors=EVIDENCE_SESSIONS)
        hits = self._search(engine, request)
        kb_hits: list[KBHit] = []
        if kb and engine.knowledge.index().size:
            kb_hits = self.search_kb(
                query, principal=principal, collections=collections, limit=10, as_of=as_of
            )
        memory_budget = budget_tokens
        if kb_hits and hits:
            memory_budget = max(1, int(budget_tokens * (1 - self.settings.kb.context_share)))
        with engine.store.reading():
            context = (
                engine.contexts.build(request, hits, memory_budget, window)
                if hits or not kb_hits
                else Context(text="", items=[], tokens=0, budget_tokens=budget_tokens)
            )
        context.budget_tokens = budget_tokens
        if kb_hits:
            separator = 2 if context.text else 0
            text, packed, _ = kb_section(
                kb_hits, budget_tokens - context.tokens - separator, engine.tokens
            )
            if text:
                context.text = f"{context.text}\n\n{text}" if context.text else text
                context.tokens = engine.tokens(context.text)
                context.kb_items = packed
        ranked = [hit for hit in hits if not hit.explain.get("session_anchor")]
        context.clarify = find_clarifications(
            request.query, request.user_id, engine.store.facts, ranked, engine.analyzer
        )
        # what reached the agent is reinforced, by the worker, off this request's path
        engine.lifecycle.recalled(request.user_id, [i.id for i in context.items], request.now)
        return context

    def facts(
        self,
        user_id: str,
        *,
        as_of: TimeBound = None,
        include_history: bool = False,
        category: str | None = None,
        include_archived: bool = False,
        include_digests: bool = False,
    ) -> list[Card]:
        """The user's cards: current truth by default; ``as_of`` what held at that time;
        ``include_history`` every version (superseded ones included); ``include_archived``
        the cards maintenance or ``archive`` took out; ``include_digests`` the session
        digests maintenance wrote (summaries of old sessions, not facts about the user)."""
        engine = self._open()
        require_id(user_id, "user_id")
        for name, flag in (
            ("include_archived", include_archived),
            ("include_digests", include_digests),
        ):
            if not isinstance(flag, bool):
                raise TypeError(f"{name} must be a bool")
        moment = None if as_of is None else epoch_of(as_of, "as_of")
        found = engine.store.facts.facts(
            user_id,
            as_of=moment,
            include_history=include_history,
            category=category,
            include_archived=include_archived,
        )
        return [
            engine.restorer.card(f.card)
            for f in found
            if include_digests or not f.card.key.startswith(DIGEST_KEY)
        ]

    def profile(
        self, user_id: str, *, include_digests: bool = False
    ) -> dict[str, dict[str, list[Card]]]:
        """Current cards grouped topic → subtopic (category → key), most important first;
        session digests only when asked for."""
        grouped: dict[str, dict[str, list[Card]]] = {}
        cards = self.facts(user_id, include_digests=include_digests)
        for card in sorted(cards, key=lambda c: (-c.importance, c.id)):
            subtopic = card.key.split(".", 1)[1] if "." in card.key else card.key
            grouped.setdefault(card.category.value, {}).setdefault(subtopic, []).append(card)
        return grouped

    def history(self, fact_id: str, *, user_id: str) -> list[Card]:
        """Every version of one of the user's facts, oldest first (what superseded what, and
        when); empty when the user has no such fact (another user's id is "not found")."""
        engine = self._open()
        require_id(user_id, "user_id")
        number = fact_number(fact_id)
        if number > MAX_ID:
            return []
        chain = engine.store.facts.chain(number)
        if not chain or chain[0].card.user_id != user_id:
            return []
        return [engine.restorer.card(f.card) for f in chain]

    def sources(self, fact_id: str, *, user_id: str) -> list[dict[str, Any]]:
        """The messages a fact was drawn from, oldest first, as they were said (``id`` is
        what ``delete_message`` takes). ItemNotFoundError when the user has no such fact."""
        engine = self._open()
        require_id(user_id, "user_id")
        number = fact_number(fact_id)
        fact = engine.store.facts.get(number) if number <= MAX_ID else None
        if fact is None or fact.card.user_id != user_id:
            raise ItemNotFoundError(f"user {user_id!r} has no fact {fact_id!r}")
        found = []
        for event_id in fact.card.sources:
            event = engine.store.load_event(event_id)
            if event is None or event.user_id != user_id:
                continue  # deleted since
            found.append(
                {
                    "id": event.source_id,
                    "session_id": event.session_id,
                    "role": event.role,
                    "name": event.name,
                    "content": engine.restorer.text(user_id, event.content),
                    "timestamp": from_epoch(event.occurred_at).isoformat(),
                }
            )
        return sorted(found, key=lambda m: m["timestamp"])

    def users(self, *, limit: int = 100, offset: int = 0, prefix: str = "") -> list[dict[str, Any]]:
        """The store's users (whoever has a message), sorted, a page at a time: each with
        how many current cards and indexed turns it has."""
        engine = self._open()
        require_limit(limit, "limit", 10_000)
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise ValueError(f"offset must be an int of at least 0, got {offset!r}")
        if not isinstance(prefix, str):
            raise TypeError(f"prefix must be a str, got {type(prefix).__name__}")
        every = [u for u in engine.store.user_ids() if u.startswith(prefix)]
        return [
            {
                "user_id": user,
                "facts": len(engine.store.facts.read_current(user)),
                "turns": engine.store.vector_count(user),
            }
            for user in sorted(every)[offset : offset + limit]
        ]

    def routing_log(self, user_id: str, limit: int = 100) -> list[dict[str, Any]]:
        """The write path's decisions about this user's facts, newest first."""
        engine = self._open()
        require_id(user_id, "user_id")
        require_limit(limit, "limit", 10_000)
        return engine.store.facts.routing_log(user_id, limit)

    def alerts(self, user_id: str) -> list[dict[str, Any]]:
        """Open alerts raised by memory checks over the user's current cards."""
        engine = self._open()
        require_id(user_id, "user_id")
        return engine.store.facts.alerts(user_id)

    def graph(
        self, user_id: str, *, around: str | None = None, depth: int = 2, limit: int = 200
    ) -> dict[str, Any]:
        """The memory graph around an entity (its name or alias), a speaker
        (``speaker:Name``), a passage (``ep_…``) or a current fact (``fact_…``):
        ``{"nodes": [...], "edges": [...]}``, JSON-ready, for a viewer. ``depth`` hops,
        at most ``limit`` nodes, nearest first. Without ``around``: around the entity most
        passages mention (``graph_entities`` lists them)."""
        engine = self._open()
        require_id(user_id, "user_id")
        if around is not None and (not isinstance(around, str) or not around.strip()):
            raise ValueError(
                "around must be an entity name, 'speaker:Name', or an id like 'ep_12' or 'fact_3'"
            )
        if isinstance(depth, bool) or not isinstance(depth, int) or not 0 <= depth <= 5:
            raise ValueError(f"depth must be an int from 0 to 5, got {depth!r}")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 10_000:
            raise ValueError(f"limit must be an int from 1 to 10000, got {limit!r}")
        view = engine.searcher.graph_view(user_id, around, depth, limit)
        for node in view["nodes"]:
            if node["type"] in ("passage", "fact", "entity"):
                node["label"] = engine.restorer.text(user_id, node["label"])
        return view

    def graph_entities(self, user_id: str, *, limit: int = 50) -> list[dict[str, Any]]:
        """The user's entities that most passages mention (speakers last), each with the
        ``id`` that ``graph(around=…)`` takes: where a graph viewer starts."""
        engine = self._open()
        require_id(user_id, "user_id")
        require_limit(limit, "limit", 10_000)
        found = engine.searcher.graph_entities(user_id, limit)
        for entity in found:  # a vaulted name is shown to its owner; its id stays the token
            entity["label"] = engine.restorer.text(user_id, entity["label"])
        return found

    # -- knowledge base -------------------------------------------------------------------------

    def kb(
        self, name: str, *, description: str | None = None, pii: str | None = None
    ) -> KnowledgeBase:
        """A knowledge-base collection (created on first use). ``description`` says what it
        holds; routing compares questions with it, so nobody has to pick a collection.
        ``pii`` is the collection's PII policy for documents stored from now on: 'vault'
        (the default: as messages), 'mask' or 'keep' (None: unchanged)."""
        engine = self._open()
        require_collection_name(name)
        if description is not None:
            require_short_text(description, "description", MAX_DESCRIPTION_CHARS)
        policy = None if pii is None else require_kb_policy(pii)
        known = {c.name: c for c in engine.store.kb.collections()}
        if name not in known or (
            description is not None and known[name].description != description
        ):
            engine.store.kb.ensure_collection(name, description)
        mode = stored_policy(engine.store, name)
        if name not in known or (policy is not None and policy != mode):
            mode = policy or DEFAULT_KB_POLICY  # a new collection starts from the default
            record_policy(engine.store, name, mode)
        privacy = DocumentPrivacy(engine.store, name, mode, policy_from(self.settings.pii.policy))
        return KnowledgeBase(name, engine.store.kb, engine.documents, engine.kb_changed, privacy)

    def collections(self) -> list[CollectionInfo]:
        """Every knowledge-base collection with its description, counts and L0/L1 abstracts."""
        return self._open().store.kb.collections()

    def delete_collection(self, name: str) -> int:
        """Remove a collection and all its documents (and the values its documents
        vaulted); how many documents were removed."""
        store = self._open().store
        removed = store.kb.delete_collection(require_collection_name(name))
        with store.transaction() as tx:
            store.vault.forget_user(tx, kb_owner(name))
        return removed

    def search_kb(
        self,
        query: str,
        *,
        principal: Principal | None = None,
        collections: Sequence[str] | None = None,
        limit: int = 10,
        as_of: TimeBound = None,
        channels: Sequence[str] | None = None,
        decompose: bool = True,
    ) -> list[KBHit]:
        """Chunks of the knowledge base that answer ``query``, best first. Only what
        ``principal`` may read is ever a candidate (``None``: public documents only); only
        versions in effect now (or at ``as_of``) count. ``collections=None`` searches every
        readable collection, weighted by how well each fits the question; a question with
        several parts is searched part by part."""
        engine = self._open()
        request = KBRequest(
            query=self._cut(_require_query(query)),
            principal=_require_principal(principal),
            collections=_require_collections(collections),
            limit=require_limit(limit, "limit", 1000),
            moment=time.time() if as_of is None else epoch_of(as_of, "as_of"),
            channels=validate_channels(channels),
            decompose=bool(decompose),
        )
        if request.collections is not None:
            known = {c.name for c in engine.store.kb.collections()}
            unknown = [c for c in request.collections if c not in known]
            if unknown:
                raise ValueError(
                    f"no collection named {', '.join(map(repr, unknown))}; the collections "
                    f"are {sorted(known)}"
                )
        return engine.knowledge.search(request)

    def ask(
        self,
        question: str,
        *,
        user_id: str,
        principal: Principal | None = None,
        collections: Sequence[str] | None = None,
        max_steps: int | None = None,
    ) -> Answer:
        """Answer a question with the configured LLM calling tools (``search_memory``,
        ``search_kb``, ``get_profile``) for at most ``max_steps`` steps, citing the chunk and
        memory ids it used. Without an LLM, the answer carries the routed evidence and says
        that no LLM is configured."""
        self._open()
        require_id(user_id, "user_id")
        steps = self.settings.kb.ask_steps if max_steps is None else max_steps
        if isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= 20:
            raise ValueError(f"max_steps must be an int from 1 to 20, got {steps!r}")
        return run_ask(
            self,
            self.settings.llm,
            _require_query(question),
            user_id=user_id,
            principal=_require_principal(principal),
            collections=_require_collections(collections),
            max_steps=steps,
        )

    # -- short-term memory ------------------------------------------------------------------------

    def session(
        self, session_id: str, *, user_id: str, ttl_seconds: float | None = 86_400.0
    ) -> Session:
        """The conversation buffer of one session: ``append(message)``, ``window(budget)``
        (recent messages within the budget, pinned ones always, older ones in a rolling
        summary), ``clear()``. It expires ``ttl_seconds`` after its last message (None:
        never); appended messages also reach long-term memory through ``add``."""
        engine = self._open()
        require_id(user_id, "user_id")
        require_id(session_id, "session_id")
        ttl = None
        if ttl_seconds is not None:
            ttl = require_seconds(ttl_seconds, "ttl_seconds", minimum=MIN_TTL_SECONDS)

        def add(message: dict[str, Any]) -> AddResult:
            return self.add(message, user_id=user_id, session_id=session_id)

        return Session(
            engine.store.short_term,
            add,
            user_id,
            session_id,
            ttl_seconds=ttl,
            count_tokens=engine.tokens,
            summarize=summarizer_for(engine.llm),
            privacy=self._privacy(engine).bound(user_id, engine.restorer),
        )

    def sessions(self, user_id: str) -> list[dict[str, Any]]:
        """The user's live conversation buffers, most recently used first."""
        engine = self._open()
        require_id(user_id, "user_id")
        return [
            {
                "session_id": s.session_id,
                "messages": s.messages,
                "folded": s.folded,
                "updated_at": s.updated_at,
                "expires_at": s.expires_at,
            }
            for s in engine.store.short_term.sessions(user_id, time.time())
        ]

    def agent(
        self, agent_id: str, *, user_id: str, timeouts: dict[str, float] | None = None
    ) -> AgentState:
        """A persisted agent state machine (idle → planning → executing → waiting_input →
        completed | failed): ``transition(to)``, ``state``, ``history()``, ``snapshot()`` /
        ``restore()``. ``timeouts`` gives states a maximum duration in seconds."""
        engine = self._open()
        require_id(user_id, "user_id")
        require_id(agent_id, "agent_id")
        privacy = self._privacy(engine).bound(user_id, engine.restorer)
        return AgentState(
            engine.store.short_term, user_id, agent_id, privacy=privacy, timeouts=timeouts
        )

    # -- deleting and exporting ---------------------------------------------------------------

    def delete(self, memory_id: str, *, user_id: str) -> bool:
        """Delete one of the user's memories (``ep_…`` or ``fact_…`` from a hit, or ``ev_…``)
        and the messages it came from, from the log and every index; a fact's other versions
        stay, and the one it superseded is current again. Returns False if the user has no
        such memory (another user's id is "not found")."""
        engine = self._open()
        require_id(user_id, "user_id")
        if not isinstance(memory_id, str):
            raise TypeError(f"memory_id must be a str, got {type(memory_id).__name__}")
        return engine.delete(memory_id, user_id)

    def delete_message(self, message_id: str, *, user_id: str) -> bool:
        """Delete a message by the external id it was added with."""
        engine = self._open()
        require_id(user_id, "user_id")
        if isinstance(message_id, bool) or not isinstance(message_id, str | int):
            raise TypeError(f"message_id must be a str or int, got {type(message_id).__name__}")
        message_id = require_text(str(message_id), "message_id")
        event_id = engine.store.event_by_external_id(user_id, message_id)
        return False if event_id is None else self.delete(f"ev_{event_id}", user_id=user_id)

    def forget_user(self, user_id: str) -> dict[str, int]:
        """Erase everything about a user: log, episodes, vectors, lexical index, facts, graph,
        vaulted values, import log and ANN files."""
        engine = self._open()
        require_id(user_id, "user_id")
        return engine.forget_user(user_id)

    def export_user(self, user_id: str) -> dict[str, Any]:
        """Everything stored about a user, as JSON-serializable data."""
        engine = self._open()
        require_id(user_id, "user_id")
        store = engine.store
        exported = store.export_user(user_id)
        every = store.facts.facts(user_id, include_history=True, include_archived=True)
        exported["facts"] = [f.card.model_dump(mode="json") for f in every]
        exported["lifecycle"] = {
            "states": [
                {"item": item, **state.to_dict()}
                for item, state in sorted(store.lifecycle.states(user_id).items())
            ],
            "log": [asdict(e) for e in store.lifecycle.entries(user_id)],
        }
        exported["vault"] = [
            {"token": e.token, "category": str(e.category)}
            for e in store.vault.entries(None, user_id)
        ]
        exported.update(store.short_term.export_user(user_id))
        restored: dict[str, Any] = engine.restorer.tree(user_id, exported)
        return restored

    # -- imports ----------------------------------------------------------------------------------

    def import_claude_code(
        self,
        directory: str | os.PathLike[str],
        *,
        user_id: str,
        workers: int | None = None,
        progress: Callable[[str, int], None] | None = None,
    ) -> ImportReport:
        """Index Claude Code session files (``*.jsonl`` under ``directory``) as passages of
        1–3 turns, tool calls summarized; only new or changed files are read again. Files
        are parsed by ``workers`` processes (default: one per core); ``progress(stage, n)``
        reports "parse" (files) and "index" (passages)."""
        engine = self._open()
        require_id(user_id, "user_id")
        return import_claude_code(
            self,
            engine.store.imports,
            Path(directory),
            user_id=user_id,
            workers=workers,
            progress=progress,
        )

    def import_chatgpt(
        self,
        path: str | os.PathLike[str],
        *,
        user_id: str,
        progress: Callable[[str, int], None] | None = None,
    ) -> ImportReport:
        """Index a ChatGPT export (``conversations.json``) as passages of 1–3 turns; only new
        or changed conversations are written again."""
        engine = self._open()
        require_id(user_id, "user_id")
        return import_chatgpt(
            self, engine.store.imports, Path(path), user_id=user_id, progress=progress
        )

    # -- operations -------------------------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        """Counts per record kind, the embedder, the file size and this process's indexing
        time per step (episodes, graph, facts, commit)."""
        engine = self._open()
        stats = engine.store.stats()
        # a directory as given; a database URL without its password
        stats["path"] = str(self.path if isinstance(self.path, Path) else engine.store.path)
        stats["indexing_seconds"] = {k: round(v, 3) for k, v in engine.indexer.seconds.items()}
        return stats

    def integrity(self) -> dict[str, int]:
        """Counts across the indexes; consistent when episodes == vectors == fts, no orphans."""
        return self._open().store.integrity()

    def check(self) -> dict[str, Any]:
        """A full check of the store: the database's own integrity check (every page and
        index; slow on a large store) and the index counts. ``ok`` is False on any problem,
        ``database`` lists what the database found."""
        return self._open().store.check()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._engine.close()
        # a closed Memory kept by its caller must not keep the store's caches alive
        del self._engine

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals --------------------------------------------------------------------------------

    def _open(self) -> Engine:
        if self._closed:
            raise StoreClosedError("this Memory is closed")
        return self._engine

    def _privacy(self, engine: Engine) -> Privacy:
        """The PII policy for text kept outside the log (buffers, agents, documents)."""
        return Privacy(engine.store, policy_from(self.settings.pii.policy))

    def _request(
        self,
        query: object,
        user_id: object,
        limit: object,
        channels: Sequence[str] | None,
        time_range: object,
        stages: object,
        now: object,
        as_of: TimeBound,
        include_history: object,
        include_archived: object = False,
    ) -> SearchRequest:
        """The checked request, its query cut to what the embedder reads (the cost cap)."""
        request = build_request(
            query,
            user_id,
            limit,
            channels,
            time_range,
            stages,
            now,
            as_of,
            include_history,
            self._engine.searcher.default_stages,
            include_archived=include_archived,
        )
        return replace(request, query=self._cut(request.query))

    @staticmethod
    def _search(engine: Engine, request: SearchRequest) -> list[Hit]:
        with engine.store.reading():
            if not engine.store.has_user(request.user_id):
                return []
            return engine.restorer.hits(request.user_id, engine.searcher.search(request))


def _require_query(query: object) -> str:
    if not isinstance(query, str):
        raise TypeError(f"query must be a str, got {type(query).__name__}")
    if not query.strip():
        raise ValueError("query must not be empty")
    if len(query) > 10_000:
        raise ValueError(f"query has {len(query):,} characters; the limit is 10,000")
    return query


def _require_principal(principal: object) -> Principal | None:
    if principal is None or isinstance(principal, Principal):
        return principal
    raise TypeError(
        "principal must be a Principal(user_id=..., groups=[...]) or None, got "
        f"{type(principal).__name__}"
    )


def _require_collections(collections: object) -> tuple[str, ...] | None:
    if collections is None:
        return None
    if isinstance(collections, str) or not isinstance(collections, Sequence):
        raise TypeError("collections must be a list of collection names or None")
    return tuple(require_collection_name(c) for c in collections)
