"""Records of the knowledge base: who asks (``Principal``), what is stored (documents,
versions, chunks) and what a search returns (``KBHit``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np
import numpy.typing as npt

from madeleine.inputs import MAX_ID_CHARS, require_short_text
from madeleine.read.explain import Explain

MAX_ACL_ENTRIES = 1_000


@dataclass(frozen=True, slots=True, init=False)
class Principal:
    """Whoever a KB search runs for: ``user:<id>`` and ``group:<name>`` entries of a
    document's ACL name them. ``groups`` may be given bare ("hr") or prefixed ("group:hr")."""

    user_id: str | None
    groups: tuple[str, ...]

    def __init__(self, user_id: str | None = None, groups: Iterable[str] = ()) -> None:
        if user_id is not None and (not isinstance(user_id, str) or not user_id.strip()):
            raise ValueError(f"Principal.user_id must be a non-empty str or None, got {user_id!r}")
        if isinstance(groups, str):
            raise TypeError("Principal.groups must be a list of group names, not one str")
        cleaned: list[str] = []
        for group in groups:
            if not isinstance(group, str) or not group.strip():
                raise ValueError(f"a group name must be a non-empty str, got {group!r}")
            name = group.strip()
            cleaned.append(name[len("group:") :] if name.startswith("group:") else name)
        object.__setattr__(self, "user_id", user_id)
        object.__setattr__(self, "groups", tuple(dict.fromkeys(cleaned)))

    def tokens(self) -> frozenset[str]:
        """The ACL entries this principal matches."""
        own = {f"group:{g}" for g in self.groups}
        if self.user_id is not None:
            own.add(f"user:{self.user_id}")
        return frozenset(own)


def normalize_acl(acl: object) -> tuple[str, ...]:
    """Checked ACL entries, sorted and unique; ``None`` or empty means public."""
    if acl is None:
        return ()
    if isinstance(acl, str) or not isinstance(acl, list | tuple | set | frozenset):
        raise TypeError("acl must be a list like ['group:hr', 'user:u1'] or None (public)")
    if len(acl) > MAX_ACL_ENTRIES:
        raise ValueError(f"acl has {len(acl):,} entries; at most {MAX_ACL_ENTRIES:,}")
    entries: set[str] = set()
    for entry in acl:
        require_short_text(entry, "an acl entry", MAX_ID_CHARS)
        kind, _, name = entry.strip().partition(":")
        if kind not in ("user", "group") or not name.strip():
            raise ValueError(f"acl entries look like 'user:<id>' or 'group:<name>', got {entry!r}")
        entries.add(f"{kind}:{name.strip()}")
    return tuple(sorted(entries))


@dataclass(frozen=True, slots=True)
class ContextJob:
    """A chunk an LLM should situate in its document before it is embedded."""

    chunk_id: int
    version: int
    title: str
    document: str
    text: str
    prefix: str
    terms: str
    embed_text: str


@dataclass(frozen=True, slots=True)
class NewChunk:
    """A chunk as ingestion prepared it: ``embed_text`` is what the embedder sees (prefix and
    text); ``embed_key`` its hash, so an unchanged chunk of a new version keeps its vector."""

    position: int
    section: tuple[str, ...]
    text: str
    prefix: str
    terms: str
    embed_text: str
    embed_key: str


@dataclass(frozen=True, slots=True)
class NewVersion:
    """One version of a document as ``add_document`` / ``update_document`` prepared it."""

    collection: str
    doc_id: str
    title: str
    source_type: str
    acl: tuple[str, ...]
    metadata: dict[str, Any]
    effective_from: float | None
    expires_at: float | None
    content_hash: str
    l0: str
    l1: str
    chunks: list[NewChunk]


@dataclass(frozen=True, slots=True)
class VersionInfo:
    doc_id: str
    collection: str
    version: int
    title: str
    source_type: str
    acl: list[str]
    metadata: dict[str, Any]
    effective_from: datetime | None
    expires_at: datetime | None
    created_at: datetime
    content_hash: str
    chunks: int
    reused_vectors: int  # chunks whose vector came from an identical earlier chunk
    l0: str
    l1: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "doc_id": self.doc_id,
            "collection": self.collection,
            "version": self.version,
            "title": self.title,
            "source_type": self.source_type,
            "acl": list(self.acl),
            "metadata": dict(self.metadata),
            "effective_from": _iso(self.effective_from),
            "expires_at": _iso(self.expires_at),
            "created_at": self.created_at.isoformat(),
            "content_hash": self.content_hash,
            "chunks": self.chunks,
            "reused_vectors": self.reused_vectors,
            "l0": self.l0,
            "l1": self.l1,
        }


@dataclass(frozen=True, slots=True)
class CollectionInfo:
    name: str
    description: str
    documents: int
    chunks: int
    l0: str
    l1: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "documents": self.documents,
            "chunks": self.chunks,
            "l0": self.l0,
            "l1": self.l1,
        }


@dataclass(slots=True)
class KBSnapshot:
    """Every stored chunk of a tenant with what retrieval filters on, read in one go to build
    the in-memory index. Versions are parallel arrays; ``chunk_version`` points into them."""

    generation: int
    chunk_ids: npt.NDArray[np.int64]
    chunk_version: npt.NDArray[np.int64]  # row in the version arrays
    chunk_terms: list[str]
    matrix: npt.NDArray[np.float32]  # zero rows where the vector is not computed yet
    has_vector: npt.NDArray[np.bool_]
    version_ids: npt.NDArray[np.int64]
    version_doc: npt.NDArray[np.int64]  # document row id
    version_number: npt.NDArray[np.int64]
    version_effective: npt.NDArray[np.float64]  # effective_from, created_at when not given
    version_expires: npt.NDArray[np.float64]  # +inf when never
    version_collection: list[str]
    version_acl: list[tuple[str, ...]]
    version_source: list[str]
    version_title: list[str]
    version_doc_id: list[str]
    collections: dict[str, tuple[str, npt.NDArray[np.float32] | None]]  # name -> (profile, vector)


@dataclass(slots=True)
class KBHit:
    """A chunk found in the knowledge base. ``text`` is the chunk without its prefix;
    ``explain`` holds each channel's score, the route, the weights and any injection flag."""

    chunk_id: str
    doc_id: str
    collection: str
    title: str
    section: str
    text: str
    score: float
    version: int
    source_type: str
    explain: Explain = field(default_factory=Explain)
    prefix: str = ""

    @property
    def id(self) -> str:
        return self.chunk_id

    kind = "kb"

    def to_dict(self) -> dict[str, Any]:
        return {
            "chunk_id": self.chunk_id,
            "doc_id": self.doc_id,
            "collection": self.collection,
            "title": self.title,
            "section": self.section,
            "text": self.text,
            "score": self.score,
            "version": self.version,
            "source_type": self.source_type,
            "explain": self.explain,
        }


def epoch_to_datetime(value: float | None) -> datetime | None:
    if value is None or not np.isfinite(value):
        return None
    return datetime.fromtimestamp(value, UTC)


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()
