"""The storage contract every backend implements (embedded SQLite today, PostgreSQL next)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True, slots=True)
class NewEvent:
    """A validated message ready for the log."""

    user_id: str
    session_id: str
    kind: str
    role: str
    name: str | None
    content: str
    metadata: dict[str, Any]
    occurred_at: float
    content_hash: str
    external_id: str | None


@dataclass(frozen=True, slots=True)
class StoredEvent:
    id: int
    user_id: str
    session_id: str
    kind: str
    role: str
    name: str | None
    content: str
    metadata: dict[str, Any]
    occurred_at: float
    recorded_at: float
    external_id: str | None

    @property
    def source_id(self) -> str:
        """The id a caller knows this message by: its external id, else ``ev_<n>``."""
        return self.external_id if self.external_id is not None else f"ev_{self.id}"


@dataclass(frozen=True, slots=True)
class IndexJob:
    outbox_id: int
    event_id: int
    user_id: str


@dataclass(frozen=True, slots=True)
class EpisodeRow:
    """An indexed episode as stored, with its analyzed terms and vector."""

    user_id: str
    session_id: str
    kind: str
    focus_event_id: int
    context_event_id: int | None
    event_ids: Sequence[int]
    source_ids: Sequence[str]
    speaker: str | None
    prefix: str
    body: str
    context: str
    occurred_at: float
    body_terms: str
    context_terms: str
    vector: npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class StoredEpisode:
    id: int
    user_id: str
    session_id: str
    kind: str
    focus_event_id: int
    event_ids: tuple[int, ...]
    source_ids: tuple[str, ...]
    speaker: str | None
    prefix: str
    body: str
    context: str
    occurred_at: float


@dataclass(frozen=True, slots=True)
class UserVectors:
    """All of one user's episode vectors, for exact or ANN search."""

    ids: npt.NDArray[np.int64]
    times: npt.NDArray[np.float64]
    matrix: npt.NDArray[np.float32]
    sessions: list[str]
    kinds: list[str]
    pinned: npt.NDArray[np.bool_]  # metadata {"pinned": true}: exempt from time decay


class Store(Protocol):
    """What the engine needs from storage. Every method is scoped by user where data is."""

    def append_events(self, events: Sequence[NewEvent]) -> tuple[list[int], list[int]]: ...

    def claim_jobs(self, worker: str, limit: int, lease_seconds: float) -> list[IndexJob]: ...

    def load_event(self, event_id: int) -> StoredEvent | None: ...

    def previous_event(self, event: StoredEvent) -> StoredEvent | None: ...

    def commit_episodes(
        self, worker: str, done: Sequence[tuple[IndexJob, EpisodeRow | None]]
    ) -> None: ...

    def fail_job(self, job: IndexJob, worker: str, error: str) -> None: ...

    def pending_jobs(self, user_id: str | None = None) -> int: ...

    def lexical_search(
        self, user_id: str, terms: Sequence[str], limit: int, time_range: tuple[float, float] | None
    ) -> list[tuple[int, float]]: ...

    def phrase_matches(self, user_id: str, terms: Sequence[str], limit: int) -> list[int]: ...

    def user_generation(self, user_id: str) -> tuple[int, int]: ...

    def user_vectors(self, user_id: str, after_id: int = 0) -> UserVectors: ...

    def episodes(self, ids: Sequence[int]) -> dict[int, StoredEpisode]: ...

    def delete_episode(self, episode_id: int) -> bool: ...

    def delete_event(self, event_id: int, user_id: str | None = None) -> bool: ...

    def forget_user(self, user_id: str) -> dict[str, int]: ...

    def export_user(self, user_id: str) -> dict[str, Any]: ...

    def has_user(self, user_id: str) -> bool: ...

    def stats(self) -> dict[str, Any]: ...

    def close(self) -> None: ...
