"""Bulk writes embed in batches: one embedder call per worker batch, never one per passage."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from madeleine import Memory
from madeleine.embed.base import Vectors
from tests.api.test_importers import _session
from tests.fakes import HashingEmbedder


class CountingEmbedder(HashingEmbedder):
    """Records the size of every passage batch it is asked to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[int] = []

    def embed_passages(self, texts: Sequence[str]) -> Vectors:
        self.batches.append(len(texts))
        return super().embed_passages(texts)


def _turn_batches(embedder: CountingEmbedder, before: int) -> list[int]:
    return embedder.batches[before:]


def test_adding_many_turns_embeds_them_in_worker_batches(tmp_path: Path) -> None:
    embedder = CountingEmbedder()
    with Memory(tmp_path / "m", embedder=embedder, background=False, worker_batch=32) as memory:
        messages = [
            {"role": "user", "content": f"Note {i}: the invoice number {1000 + i} was paid."}
            for i in range(100)
        ]
        memory.add(messages, user_id="u", session_id="s")
        embedder.batches.clear()
        assert memory.index_pending() == 100
        # 100 turns in batches of at most 32 (entity names and facts may add a few calls)
        assert max(embedder.batches) == 32
        assert sum(1 for size in embedder.batches if size >= 4) >= 3
        assert len(embedder.batches) < 100 / 4
        assert memory.integrity()["vectors"] == 100


def test_a_bulk_import_batches_its_embeddings(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    for n in range(6):
        _session(sessions / f"s{n}.jsonl", f"sess-{n}", f"topic{n}")
    embedder = CountingEmbedder()
    with Memory(tmp_path / "m", embedder=embedder, background=False) as memory:
        report = memory.import_claude_code(sessions, user_id="dev", workers=1)
        assert report.added >= 6
        passages = memory.integrity()["vectors"]
        assert passages == report.added
        # every passage was embedded, in far fewer calls than passages
        assert max(embedder.batches) >= min(passages, 8)
        assert len(embedder.batches) < passages


def test_batched_vectors_equal_one_by_one_vectors(tmp_path: Path) -> None:
    texts = [f"message {i} about {'kyoto' if i % 2 else 'nara'}" for i in range(10)]
    embedder = HashingEmbedder()
    one_by_one = [embedder.embed_passages([t])[0] for t in texts]
    batched = embedder.embed_passages(texts)
    assert all((a == b).all() for a, b in zip(one_by_one, batched, strict=True))
    assert json.dumps(texts)  # the texts are plain strings
