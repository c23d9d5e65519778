"""``mem.kb(name)``: one collection of the knowledge base, and how a document becomes a
stored version — loaded, chunked, prefixed with its context, analyzed for BM25. Embedding is
left to the indexer (``mem.wait()`` waits for it, as for ``add``); BM25 finds a document as
soon as ``add_document`` returns."""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from madeleine.config import KBSettings
from madeleine.embed.base import Embedder
from madeleine.inputs import METADATA, require_json_object, require_text
from madeleine.kb.abstracts import document_abstracts
from madeleine.kb.chunkers import Chunk, Chunker, FixedChunker, RecursiveChunker, SemanticChunker
from madeleine.kb.loaders import (
    FORMATS,
    LoadedDocument,
    files_in,
    load_html,
    load_markdown,
    load_path,
    load_text,
)
from madeleine.kb.privacy import DocumentPrivacy
from madeleine.kb.records import CollectionInfo, NewChunk, NewVersion, VersionInfo, normalize_acl
from madeleine.read.request import epoch_of
from madeleine.store.ports import KnowledgeRepository
from madeleine.text.analyzer import Analyzer
from madeleine.text.tokens import TokenCounter

Moment = datetime | str | float | None
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}")
MAX_DOCUMENT_CHARS = 5_000_000
_UNSET: Any = object()


def require_collection_name(name: object) -> str:
    if not isinstance(name, str):
        raise TypeError(f"a collection name must be a str, got {type(name).__name__}")
    if not _NAME.fullmatch(name):
        raise ValueError(
            f"a collection name is 1-128 letters, digits, '-', '_', '.' or ':' and starts with "
            f"a letter or digit; got {name!r}"
        )
    return name


def _require_doc_id(doc_id: object) -> str:
    if not isinstance(doc_id, str):
        raise TypeError(f"doc_id must be a str, got {type(doc_id).__name__}")
    if not doc_id.strip() or len(doc_id) > 512:
        raise ValueError(f"doc_id must be 1-512 characters, got {doc_id!r}")
    return require_text(doc_id, "doc_id")


def _optional_time(value: Moment, name: str) -> float | None:
    return None if value is None else epoch_of(value, name)


@dataclass(slots=True)
class FolderReport:
    """What ``add_folder`` did: documents added, updated, left as they were, and files it
    could not read (with the reason)."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "added": self.added,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "failed": self.failed,
        }


class DocumentPreparer:
    """Loader → chunker → contextual prefix → analyzed terms, for one version."""

    def __init__(
        self,
        analyzer: Analyzer,
        tokens: TokenCounter,
        settings: KBSettings,
        embedder: Embedder,
    ) -> None:
        self._analyzer = analyzer
        self._chunker: Chunker
        if settings.chunker == "fixed":
            self._chunker = FixedChunker(
                tokens,
                settings.chunk_tokens,
                min(settings.chunk_overlap, settings.chunk_tokens - 1),
            )
        elif settings.chunker == "semantic":
            self._chunker = SemanticChunker(tokens, embedder, settings.chunk_tokens)
        else:
            self._chunker = RecursiveChunker(tokens, settings.chunk_tokens)

    def load(
        self, source: str | os.PathLike[str], title: str, format: str | None
    ) -> LoadedDocument:
        """A ``str`` is always the document's text; only a path object reads a file. Text is
        never taken for a path, so nothing that reaches a server as text can read one."""
        if isinstance(source, os.PathLike):
            path = Path(source)
            if path.is_dir():
                raise IsADirectoryError(f"{path} is a folder: add it with add_folder")
            if not path.is_file():
                raise FileNotFoundError(f"no file at {path}")
            return load_path(path, title)
        if not isinstance(source, str):
            raise TypeError(
                "a document is a str of text or a pathlib.Path to a file, got "
                f"{type(source).__name__}"
            )
        if format is None and looks_like_a_path(source):
            raise ValueError(
                f"{source.strip()!r} looks like a file path, and text is never read as one: "
                "pass pathlib.Path(...) to load a file, or format='text' to store these words"
            )
        if len(source) > MAX_DOCUMENT_CHARS:
            raise ValueError(
                f"the document has {len(source):,} characters; the limit is "
                f"{MAX_DOCUMENT_CHARS:,}: split it into several documents"
            )
        kind = format or sniff_format(source)
        loaders = {"text": load_text, "markdown": load_markdown, "html": load_html}
        if kind not in loaders:
            raise ValueError(f"format must be 'text', 'markdown' or 'html', got {format!r}")
        return loaders[kind](source, title)

    def version(
        self,
        collection: str,
        doc_id: str,
        loaded: LoadedDocument,
        *,
        title: str,
        source_type: str,
        acl: tuple[str, ...],
        metadata: dict[str, Any],
        effective_from: float | None,
        expires_at: float | None,
    ) -> NewVersion:
        if not loaded.text.strip():
            raise ValueError(f"document {doc_id!r} has no text to index")
        date = "" if effective_from is None else _day(effective_from)
        chunks = [
            self._chunk(c, title, date) for c in self._chunker.chunk(loaded) if c.text.strip()
        ]
        l0, l1 = document_abstracts(loaded, title)
        attributes = json.dumps(
            [title, source_type, acl, metadata, effective_from, expires_at],
            sort_keys=True,
            default=str,
        )
        digest = hashlib.sha256((loaded.content_hash + attributes).encode()).hexdigest()
        return NewVersion(
            collection=collection,
            doc_id=doc_id,
            title=title,
            source_type=source_type,
            acl=acl,
            metadata=metadata,
            effective_from=effective_from,
            expires_at=expires_at,
            content_hash=digest,
            l0=l0,
            l1=l1,
            chunks=chunks,
        )

    def _chunk(self, chunk: Chunk, title: str, date: str) -> NewChunk:
        heading = " > ".join(p for p in chunk.section if p != title)
        prefix = " > ".join(p for p in (title, heading) if p)
        if date:
            prefix = f"{prefix} ({date})" if prefix else date
        embed_text = f"{prefix}\n{chunk.text}" if prefix else chunk.text
        terms = self._analyzer.terms(f"{title}\n{heading}\n{chunk.text}")
        return NewChunk(
            position=chunk.index,
            section=chunk.section,
            text=chunk.text,
            prefix=prefix,
            terms=" ".join(terms),
            embed_text=embed_text,
            embed_key=hashlib.sha256(embed_text.encode("utf-8")).hexdigest(),
        )


class KnowledgeBase:
    """One collection: ``add_document`` / ``update_document`` store a new version (only
    changed chunks are embedded again), ``delete_document`` removes a document with its
    history, ``documents`` / ``versions`` list them with their L0/L1 abstracts."""

    def __init__(
        self,
        name: str,
        repository: KnowledgeRepository,
        preparer: DocumentPreparer,
        notify: Callable[[], None],
        privacy: DocumentPrivacy,
    ) -> None:
        self.name = name
        self._repo = repository
        self._preparer = preparer
        self._notify = notify
        self._privacy = privacy

    @property
    def pii(self) -> str:
        """The collection's PII policy: 'vault' (the message policy), 'mask' or 'keep'."""
        return self._privacy.mode

    def __repr__(self) -> str:
        return f"KnowledgeBase({self.name!r})"

    @property
    def info(self) -> CollectionInfo:
        for info in self._repo.collections():
            if info.name == self.name:
                return info
        raise LookupError(f"collection {self.name!r} was deleted")

    def reveal(self, text: str) -> str:
        """``text`` (a chunk, a hit) with this collection's vaulted values put back. For the
        library caller who holds the store; no route or MCP tool calls it."""
        return self._privacy.reveal(text)

    @property
    def description(self) -> str:
        return self.info.description

    def add_document(
        self,
        source: str | os.PathLike[str],
        *,
        doc_id: str | None = None,
        title: str | None = None,
        source_type: str | None = None,
        acl: list[str] | None = None,
        effective_from: Moment = None,
        expires_at: Moment = None,
        metadata: Mapping[str, Any] | None = None,
        format: str | None = None,
    ) -> VersionInfo:
        """Store a document: a ``str`` of text, or a ``pathlib.Path`` to a .txt/.md/.html/.pdf
        file (a ``str`` is never read as a path). ``doc_id``
        defaults to the file name or a hash of the text. Adding a document that exists makes
        a new version when anything changed, and returns the current one otherwise.

        For a new document, ``acl=None`` makes it readable by every principal of the tenant
        and ``source_type`` defaults to 'official'. For an existing one, attributes not
        given keep their current value — re-adding a file never widens who may read it;
        ``acl=[]`` makes a document public on purpose."""
        loaded = self._preparer.load(source, title or "", format)
        if not loaded.text.strip():
            named = "the document" if doc_id is None else f"document {doc_id!r}"
            raise ValueError(f"{named} has no text to index")
        if doc_id is None:
            doc_id = (
                Path(source).name if isinstance(source, os.PathLike) else loaded.content_hash[:16]
            )
        previous = self._repo.versions(self.name, _require_doc_id(doc_id))
        if previous:  # attributes not given keep their current value
            current = previous[-1]
            title = title if title is not None else loaded.title or current.title
            source_type = current.source_type if source_type is None else source_type
            acl = list(current.acl) if acl is None else acl
            expires_at = current.expires_at if expires_at is None else expires_at
            metadata = current.metadata if metadata is None else metadata
        return self._store(
            doc_id,
            loaded,
            title=title if title is not None else loaded.title or doc_id,
            source_type="official" if source_type is None else source_type,
            acl=acl,
            effective_from=effective_from,
            expires_at=expires_at,
            metadata=metadata,
        )

    def update_document(
        self,
        doc_id: str,
        source: str | os.PathLike[str] | None = None,
        *,
        title: str | None = None,
        source_type: str | None = None,
        acl: list[str] | None = _UNSET,
        effective_from: Moment = _UNSET,
        expires_at: Moment = _UNSET,
        metadata: Mapping[str, Any] | None = None,
        format: str | None = None,
    ) -> VersionInfo:
        """A new version of an existing document: the new text (or the current one when only
        attributes change), attributes not given carried over — except ``effective_from``:
        a new version holds from its creation unless told otherwise, so ``as_of`` an earlier
        date still finds the version that held then. Raises ``KeyError`` for an unknown
        ``doc_id``."""
        current = self._latest(_require_doc_id(doc_id))
        if source is None:  # the stored text, as text: never looked up as a path
            source = self._repo.version_text(self.name, doc_id, current.version)
            format = format or sniff_format(source)
        loaded = self._preparer.load(source, title or current.title, format)
        return self._store(
            doc_id,
            loaded,
            title=title if title is not None else current.title,
            source_type=source_type if source_type is not None else current.source_type,
            acl=current.acl if acl is _UNSET else acl,
            effective_from=None if effective_from is _UNSET else effective_from,
            expires_at=current.expires_at if expires_at is _UNSET else expires_at,
            metadata=current.metadata if metadata is None else metadata,
        )

    def delete_document(self, doc_id: str) -> bool:
        """Remove the document, every version and chunk of it; False if there was none."""
        return self._repo.delete_document(self.name, _require_doc_id(doc_id))

    def documents(self) -> list[VersionInfo]:
        """The latest version of each document."""
        return self._repo.documents(self.name)

    def versions(self, doc_id: str) -> list[VersionInfo]:
        """Every version of a document, oldest first; empty for an unknown one."""
        return self._repo.versions(self.name, _require_doc_id(doc_id))

    def add_folder(
        self,
        folder: str | os.PathLike[str],
        *,
        progress: Callable[[str], None] | None = None,
        **attributes: Any,
    ) -> FolderReport:
        """Every .txt/.md/.html/.pdf under ``folder`` as a document whose id is its path
        relative to the folder; files unchanged since the last run are skipped (content
        hash). ``attributes`` (source_type, acl, …) apply to each document."""
        root = Path(folder)
        if not root.is_dir():
            raise NotADirectoryError(f"{root} is not a folder")
        for name in ("effective_from", "expires_at"):  # one clear error, not one per file
            _optional_time(attributes.get(name), name)
        normalize_acl(attributes.get("acl"))
        known = {d.doc_id: d for d in self.documents()}
        report = FolderReport()
        for path in files_in(root):
            doc_id = path.relative_to(root).as_posix()
            try:
                before = known.get(doc_id)
                stored = self.add_document(path, doc_id=doc_id, **attributes)
            except Exception as exc:  # a broken PDF raises the parser's own errors
                report.failed[doc_id] = f"{type(exc).__name__}: {exc}"
            else:
                if before is None:
                    report.added.append(doc_id)
                elif stored.version != before.version:
                    report.updated.append(doc_id)
                else:
                    report.unchanged.append(doc_id)
            if progress is not None:
                progress(doc_id)
        return report

    # -- internals ------------------------------------------------------------------------------

    def _latest(self, doc_id: str) -> VersionInfo:
        versions = self._repo.versions(self.name, doc_id)
        if not versions:
            raise KeyError(f"collection {self.name!r} has no document {doc_id!r}")
        return versions[-1]

    def _store(
        self,
        doc_id: str,
        loaded: LoadedDocument,
        *,
        title: str,
        source_type: str,
        acl: list[str] | None,
        effective_from: Moment,
        expires_at: Moment,
        metadata: Mapping[str, Any] | None,
    ) -> VersionInfo:
        if not isinstance(title, str) or len(title) > 1000:
            raise ValueError("title must be a str of at most 1000 characters")
        if not isinstance(source_type, str) or not source_type.strip() or len(source_type) > 64:
            raise ValueError(f"source_type must be a short non-empty str, got {source_type!r}")
        require_text(title, "title")
        require_text(source_type, "source_type")
        checked = require_json_object({} if metadata is None else metadata, "metadata", METADATA)
        start = _optional_time(effective_from, "effective_from")
        end = _optional_time(expires_at, "expires_at")
        if start is not None and end is not None and end <= start:
            raise ValueError("expires_at must be after effective_from")
        entries = normalize_acl(acl)
        # the collection's PII policy, once everything is checked, before anything is
        # chunked, abstracted or stored
        loaded = self._privacy.document(loaded)
        title = self._privacy.text(title)
        checked = self._privacy.tree(checked)
        version = self._preparer.version(
            self.name,
            doc_id,
            loaded,
            title=title,
            source_type=source_type.strip().lower(),
            acl=entries,
            metadata=checked,
            effective_from=start,
            expires_at=end,
        )
        previous = self._repo.versions(self.name, doc_id)
        if previous and previous[-1].content_hash == version.content_hash:
            return previous[-1]
        stored = self._repo.add_version(version)
        self._notify()
        return stored


def looks_like_a_path(text: str) -> bool:
    """A one-line str with no spaces ending in a loadable suffix (``"./docs/leave.md"``):
    refused with a hint rather than stored as a one-word document or read as a file. Decided
    by the text's shape alone, never by looking at the filesystem."""
    stripped = text.strip()
    if "\n" in stripped or len(stripped) > 4096 or any(c.isspace() for c in stripped):
        return False
    return Path(stripped).suffix.lower() in FORMATS


def sniff_format(text: str) -> str:
    """'html', 'markdown' or 'text' from the text's look (the servers pass it as ``format``,
    so a one-word text that ends in '.md' is stored as text)."""
    head = text.lstrip()[:2000].lower()
    if head.startswith(("<!doctype html", "<html")) or re.search(r"<(p|div|h[1-6]|body)\b", head):
        return "html"
    if re.search(r"^#{1,6} \S", text, re.MULTILINE):
        return "markdown"
    return "text"


def _day(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d")
