"""Wiring: one place that builds the store, the models, the read and write paths from
settings, so ``Memory`` (and later the servers) only call into what it built."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from madeleine.config import Settings
from madeleine.embed.base import Embedder
from madeleine.embed.factory import load_embedder
from madeleine.errors import StoreReadOnlyError
from madeleine.facts.checks import BUILT_IN_CHECKS, Check
from madeleine.facts.factory import (
    build_extractor,
    build_judge,
    build_llm,
    build_slot_classifier,
)
from madeleine.graph.entities import EntityExtractor
from madeleine.graph.llm_entities import LLMEntityExtractor
from madeleine.kb.collection import DocumentPreparer
from madeleine.kb.contextual import ChunkContextualizer
from madeleine.kb.indexer import KnowledgeIndexer
from madeleine.kb.search import KnowledgeSearcher
from madeleine.llm.client import LLM
from madeleine.maintain.consolidate import Consolidator
from madeleine.maintain.lifecycle import Lifecycle
from madeleine.maintain.strength import StrengthModel
from madeleine.models import shared_model
from madeleine.read.context import ContextBuilder
from madeleine.read.dense import DenseIndex
from madeleine.read.restore import Restorer
from madeleine.read.search import Searcher
from madeleine.store import open_store
from madeleine.store.crypto import KEY_FILE, load_key, split_keys, write_key_file
from madeleine.store.ports import JobSignal, Store
from madeleine.store.records import MAX_ID
from madeleine.text.analyzer import Analyzer, MultilingualAnalyzer
from madeleine.text.pii import policy_from
from madeleine.text.tokens import TokenCounter, token_estimator
from madeleine.write.edit import FactEditor
from madeleine.write.facts import FactPipeline
from madeleine.write.graph import GraphPipeline
from madeleine.write.intake import Intake
from madeleine.write.resolve import Resolver
from madeleine.write.worker import BackgroundWorker, Indexer

log = logging.getLogger(__name__)

_MEMORY_ID = re.compile(r"(ep|ev|fact)_(\d+)")


@dataclass(slots=True)
class Engine:
    """Everything one open store needs, built once."""

    settings: Settings
    store: Store
    embedder: Embedder
    analyzer: Analyzer
    intake: Intake
    indexer: Indexer
    worker: BackgroundWorker | None
    searcher: Searcher
    contexts: ContextBuilder
    restorer: Restorer
    llm: LLM | None
    tokens: TokenCounter
    knowledge: KnowledgeSearcher
    documents: DocumentPreparer
    lifecycle: Lifecycle
    consolidator: Consolidator
    editor: FactEditor
    signal: JobSignal | None = None  # wakes other processes' workers (Redis)

    def kb_changed(self) -> None:
        """A document was stored: wake the indexer to embed its chunks."""
        self.intake.changed()

    def delete(self, memory_id: str, user_id: str) -> bool:
        """A hit's ``ep_…``, a fact's ``fact_…`` (its source messages) or a message's
        ``ev_…``: the store's cascade removes everything derived from them."""
        match = _MEMORY_ID.fullmatch(memory_id)
        if match is None:
            raise ValueError(
                f"memory_id must look like 'ep_123', 'fact_12' or 'ev_123', got {memory_id!r}"
            )
        kind, number = match.group(1), int(match.group(2))
        if number > MAX_ID:
            return False  # no record has such an id
        if kind == "fact":
            fact = self.store.facts.get(number)
            if fact is None or fact.card.user_id != user_id:
                return False
            events = list(fact.card.sources)
        else:
            event_id = self.store.episode_focus(number) if kind == "ep" else number
            if event_id is None:
                return False
            events = [event_id]
        deleted = False
        for event_id in events:
            deleted = self.store.delete_event(event_id, user_id=user_id) or deleted
        if deleted:
            self.intake.changed()  # the turn that quoted it is re-indexed
        return deleted

    def forget_user(self, user_id: str) -> dict[str, int]:
        counts = self.store.forget_user(user_id)
        self.searcher.forget(user_id)
        return counts

    def wait(self, timeout: float | None) -> bool:
        """True once every logged message is indexed; False on timeout, or when some
        messages could not be indexed (dead-lettered jobs, reported with their error)."""
        if self.worker is not None:
            if not self.worker.wait_idle(timeout):
                return False
        else:
            if not self.store.read_only:
                self.indexer.drain()
            if self.indexer.pending():
                return False
        failed = self.store.failed_jobs()
        if failed:
            log.warning(
                "%d messages could not be indexed after %d attempts (last error: %s); fix the "
                "cause, then run `madeleine retry-failed` or Memory.retry_failed()",
                len(failed),
                failed[-1]["attempts"],
                failed[-1]["error"],
            )
            return False
        return True

    def rotate_vault_key(self, directory: Path, new_key: str | None) -> dict[str, Any]:
        """Re-seal every vaulted value under a new key while the store stays in use. With a
        key file, the file holds both keys (newest first) until every value is re-sealed, so
        a crash midway loses nothing and a rerun finishes the job."""
        from cryptography.fernet import Fernet

        configured = self.settings.pii.vault_key
        fresh = (new_key.strip() if new_key else "").encode("ascii", errors="replace")
        if configured and configured.strip() and not fresh:
            raise ValueError(
                "the vault key comes from MADELEINE_VAULT_KEY: pass the new key "
                "(cryptography.fernet.Fernet.generate_key()), then set MADELEINE_VAULT_KEY "
                "to it once the rotation is done"
            )
        fresh = fresh or Fernet.generate_key()
        load_key(directory, fresh.decode())  # validates the new key
        if configured and configured.strip():
            rotated = self.store.vault.rotate(fresh)
            return {"rotated": rotated, "next": "set MADELEINE_VAULT_KEY to the new key"}
        old = split_keys(load_key(directory, None))
        write_key_file(directory, [fresh, *[k for k in old if k != fresh]])
        rotated = self.store.vault.rotate(fresh)
        write_key_file(directory, [fresh])
        return {"rotated": rotated, "key_file": str(directory / KEY_FILE)}

    def retry_failed(self) -> int:
        queued = self.store.retry_failed()
        if queued:
            self.intake.changed()
        return queued

    def close(self) -> None:
        if self.worker is not None:
            self.worker.stop()
        if not self.store.read_only:
            try:
                self.lifecycle.write_recalls()  # the last contexts' recalls
            except Exception:  # reinforcement is a hint: never fail a close over it
                log.exception("could not write the pending recalls")
        if self.signal is not None:
            self.signal.close()
        self.searcher.close()
        closer = getattr(self.llm, "close", None)
        if closer is not None:
            closer()  # the HTTP client's connection pool
        self.store.close()


def _models_dir(store: object) -> Path | None:
    """Where an embedded store keeps what it fitted (its own directory); a server store
    keeps nothing on local disk."""
    directory = getattr(store, "directory", None)
    return Path(directory) / "models" if isinstance(directory, (str, Path)) else None


def build_engine(
    path: Path | str,
    settings: Settings,
    *,
    embedder: Embedder | str | None = None,
    token_counter: TokenCounter | None = None,
    checks: Sequence[Check] | None = None,
    rebuild: bool = False,
    read_only: bool | None = None,
) -> Engine:
    store = open_store(
        path,
        vault_key=settings.pii.vault_key,
        busy_timeout_ms=settings.store.busy_timeout_ms,
        ann_threshold=settings.store.ann_threshold,
        read_only=read_only,
        schema=settings.store.schema_name,
        pool_size=settings.store.pool_size,
        redis_url=settings.store.redis_url,
        read_url=settings.store.read_url,
        redis_prefix=settings.store.redis_prefix,
    )
    try:
        model = (
            embedder
            if embedder is not None and not isinstance(embedder, str)
            else load_embedder(embedder or settings.embed.model)
        )
        analyzer: Analyzer = shared_model("analyzer:multi", MultilingualAnalyzer)
        _prepare_indexes(store, model, analyzer, rebuild)
    except Exception:
        store.close()
        raise
    llm = build_llm(settings)
    resolver = Resolver(
        store.facts,
        duplicate_threshold=settings.facts.duplicate_threshold,
        conflict_threshold=settings.facts.conflict_threshold,
        strategy=settings.facts.conflict_strategy,
        similarity_range=model.similarity_range,
    )
    facts = FactPipeline(
        store,
        store.facts,
        build_extractor(settings, llm),
        model,
        analyzer,
        resolver,
        [*BUILT_IN_CHECKS, *(checks or [])],
        settings.llm.window_messages,
        build_judge(settings, llm),
        build_slot_classifier(settings, model, _models_dir(store)),
    )
    graph = GraphPipeline(
        store.graph,
        EntityExtractor(analyzer),
        model,
        LLMEntityExtractor(llm) if llm is not None and settings.graph.llm_entities else None,
    )
    indexer = Indexer(
        store,
        model,
        analyzer,
        batch_size=settings.worker.batch,
        lease_seconds=settings.worker.lease_seconds,
        context_chars=settings.embed.context_chars,
        facts=facts,
        graph=graph,
    )
    worker = (
        BackgroundWorker(indexer) if settings.worker.background and not store.read_only else None
    )
    searcher = Searcher(
        store,
        DenseIndex(store, store.vectors, store.dense, store.cache),
        model,
        analyzer,
        settings,
        store.facts,
        store.graph,
        store.cache,
        store.lifecycle,
    )
    if not store.read_only:
        indexer.followers.append(searcher.follow)
    situate = ChunkContextualizer(llm, analyzer) if llm and settings.kb.llm_prefix else None
    indexer.kb = KnowledgeIndexer(store.kb, model, contextualizer=situate)
    restorer = Restorer(store.vault)
    lifecycle = Lifecycle(store, StrengthModel(settings.lifecycle))
    if not store.read_only:
        indexer.chores.append(lifecycle.write_recalls)
    tokens = token_counter or token_estimator(settings.limits.tokenizer)
    signal = job_signal(settings) if not store.read_only else None
    wakers = [w.notify for w in (worker, signal) if w is not None]
    return Engine(
        settings=settings,
        store=store,
        embedder=model,
        analyzer=analyzer,
        intake=Intake(
            store,
            policy_from(settings.pii.policy),
            max_message_chars=settings.limits.max_message_chars,
            max_batch_messages=settings.limits.max_batch_messages,
            notify=_fan_out(wakers),
        ),
        indexer=indexer,
        worker=worker,
        searcher=searcher,
        contexts=ContextBuilder(
            store.facts,
            searcher.neighbour_hits,
            restorer,
            tokens,
            analyzer,
            later=searcher.later_turns,
        ),
        restorer=restorer,
        llm=llm,
        tokens=tokens,
        knowledge=KnowledgeSearcher(
            store.kb,
            analyzer,
            searcher.query_vector,
            model.dim,
            model.similarity_range,
            settings.kb,
        ),
        documents=DocumentPreparer(analyzer, tokens, settings.kb, model),
        lifecycle=lifecycle,
        consolidator=Consolidator(store, model, analyzer, settings, llm=llm),
        editor=FactEditor(
            store, model, analyzer, policy_from(settings.pii.policy), facts.run_checks
        ),
        signal=signal,
    )


def _fan_out(wakers: list[Callable[[], None]]) -> Callable[[], None] | None:
    """One ``notify`` for the intake that wakes this process's worker and the others'."""
    if not wakers:
        return None

    def notify() -> None:
        for wake in wakers:
            wake()

    return notify


def job_signal(settings: Settings) -> JobSignal | None:
    """Redis notifications for workers in other processes, when Redis is configured."""
    if not settings.store.redis_url:
        return None
    from madeleine.store.redis import connect, jobs_channel
    from madeleine.store.redis.signals import RedisJobSignal

    return RedisJobSignal(
        connect(settings.store.redis_url), jobs_channel(settings.store.redis_prefix)
    )


def _prepare_indexes(store: Store, embedder: Embedder, analyzer: Analyzer, rebuild: bool) -> None:
    """Refuse a different embedder; on ``rebuild`` drop every derived index and queue the
    whole log again; warn when the lexical index was built by another analyzer."""
    if rebuild and store.read_only:
        raise StoreReadOnlyError("a read-only store cannot be rebuilt")
    if rebuild:
        queued = store.reset_indexes(embedder.name, embedder.dim)
        store.set_meta("analyzer", analyzer.name)
        log.info("indexes dropped; %d logged events queued for re-indexing", queued)
    store.bind_embedder(embedder.name, embedder.dim)
    recorded = store.meta("analyzer")
    if store.read_only:
        return  # nothing is written: no analyzer stamp, no digests rebuilt
    if recorded is None:
        store.set_meta("analyzer", analyzer.name)
    elif recorded != analyzer.name:
        log.warning(
            "the lexical index was built with analyzer %s, this version uses %s; "
            "run `madeleine reindex` for best results",
            recorded,
            analyzer.name,
        )
    store.rebuild_missing_digests()
