"""Embedding the knowledge base in the background: chunks stored without a vector (first
situated in their document by the LLM when one is configured), then the collections'
abstracts and routing profiles. Runs in the memory indexer's thread when its
outbox is empty, so ``mem.wait()`` covers both."""

from __future__ import annotations

import logging

from madeleine.embed.base import Embedder
from madeleine.kb.abstracts import collection_abstracts
from madeleine.kb.contextual import ChunkContextualizer
from madeleine.store.ports import KnowledgeRepository

log = logging.getLogger(__name__)


class KnowledgeIndexer:
    def __init__(
        self,
        repository: KnowledgeRepository,
        embedder: Embedder,
        batch: int = 32,
        contextualizer: ChunkContextualizer | None = None,
    ):
        self._repo = repository
        self._embedder = embedder
        self._batch = batch
        self._contextualizer = contextualizer
        self.error: str | None = None  # the last failure, cleared by the next success

    def pending(self) -> int:
        return self._repo.pending_count()

    def run_batch(self) -> int:
        """Embed one batch of chunks, else refresh stale collection profiles; work done (0:
        nothing to do, or the batch failed and is left for the next round)."""
        try:
            done = self._situate_chunks() or self._embed_chunks() or self._refresh_profiles()
        except Exception as exc:
            log.exception("embedding knowledge-base chunks failed; they stay queued")
            self.error = f"{type(exc).__name__}: {exc}"
            return 0
        if done:
            self.error = None
        return done

    def _situate_chunks(self) -> int:
        if self._contextualizer is None:
            return 0
        jobs = self._repo.uncontextualized(self._batch)
        contexts = []
        for job in jobs:
            context = self._contextualizer.context(job.title, job.document, job.text)
            if not context:
                contexts.append((job.chunk_id, "", job.terms, job.embed_text))
                continue
            terms = f"{job.terms} {self._contextualizer.terms(context)}".strip()
            head = f"{job.prefix}\n" if job.prefix else ""
            contexts.append((job.chunk_id, context, terms, f"{head}{context}\n{job.text}"))
        self._repo.set_contexts(contexts)
        return len(jobs)

    def _embed_chunks(self) -> int:
        # with an LLM, a chunk committed after the situating query waits for its context
        # instead of being embedded without it
        pending = self._repo.pending(self._batch, situated_only=self._contextualizer is not None)
        if not pending:
            return 0
        vectors = self._embedder.embed_passages([text for _, text in pending])
        self._repo.set_vectors(
            [(chunk_id, v) for (chunk_id, _), v in zip(pending, vectors, strict=True)]
        )
        return len(pending)

    def _refresh_profiles(self) -> int:
        stale = self._repo.stale_profiles()
        for name, description, documents in stale:
            l0, l1, profile = collection_abstracts(name, description, documents)
            vector = self._embedder.embed_passages([profile])[0]
            self._repo.set_profile(name, l0, l1, profile, vector)
        return len(stale)
