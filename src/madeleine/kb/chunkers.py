"""Three ways to cut a document into chunks; every chunk stays inside one section and keeps
its section path (the contextual prefix and the explain entries name it).

- ``FixedChunker``: windows of ``size`` tokens with ``overlap``, the baseline.
- ``RecursiveChunker`` (the default): whole paragraphs while they fit, else sentences,
  else words — structure first, size second.
- ``SemanticChunker``: sentences, split where the similarity of neighbouring sentences
  drops (a topic shift), within a size cap.

Sizes are counted with the token estimator the context uses, so a chunk's size means what a
context budget means.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from madeleine.embed.base import Embedder
from madeleine.kb.loaders import LoadedDocument, Section

TokenCount = Callable[[str], int]
# a sentence ends at . ! ? (and their CJK forms) followed by space, or at a line break
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|\n+")


@dataclass(frozen=True, slots=True)
class Chunk:
    text: str
    section: tuple[str, ...]
    index: int  # position in the document, from 0


class Chunker(Protocol):
    name: str

    def chunk(self, document: LoadedDocument) -> list[Chunk]: ...


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]


def _numbered(pieces: list[tuple[str, tuple[str, ...]]]) -> list[Chunk]:
    return [Chunk(text, section, i) for i, (text, section) in enumerate(pieces)]


def _check_sizes(size: int, overlap: int = 0) -> None:
    if isinstance(size, bool) or not isinstance(size, int) or size < 16:
        raise ValueError(f"chunk size must be an int of at least 16 tokens, got {size!r}")
    if isinstance(overlap, bool) or not isinstance(overlap, int) or not 0 <= overlap < size:
        raise ValueError(f"overlap must be an int from 0 to size - 1, got {overlap!r}")


class FixedChunker:
    name = "fixed"

    def __init__(self, count: TokenCount, size: int = 256, overlap: int = 32) -> None:
        _check_sizes(size, overlap)
        self._count, self.size, self.overlap = count, size, overlap

    def chunk(self, document: LoadedDocument) -> list[Chunk]:
        pieces: list[tuple[str, tuple[str, ...]]] = []
        for section in document.sections:
            words = section.text.split()
            start = 0
            while start < len(words):
                end = _fill(words, start, self.size, self._count)
                pieces.append((" ".join(words[start:end]), section.path))
                if end >= len(words):
                    break
                start = max(start + 1, _back(words, end, self.overlap, self._count))
        return _numbered(pieces)


def _fill(words: Sequence[str], start: int, size: int, count: TokenCount) -> int:
    """The end of the longest run of words from ``start`` within ``size`` tokens (≥ 1 word)."""
    low, high = start + 1, len(words)
    while low < high:  # binary search on the prefix length: counting is not additive
        middle = (low + high + 1) // 2
        if count(" ".join(words[start:middle])) <= size:
            low = middle
        else:
            high = middle - 1
    return low


def _back(words: Sequence[str], end: int, overlap: int, count: TokenCount) -> int:
    """The start that repeats about ``overlap`` tokens before ``end``."""
    start = end
    while start > 0 and count(" ".join(words[start - 1 : end])) <= overlap:
        start -= 1
    return start


class RecursiveChunker:
    name = "recursive"

    def __init__(self, count: TokenCount, size: int = 256) -> None:
        _check_sizes(size)
        self._count, self.size = count, size

    def chunk(self, document: LoadedDocument) -> list[Chunk]:
        pieces: list[tuple[str, tuple[str, ...]]] = []
        for section in document.sections:
            pieces += [(text, section.path) for text in self._section(section.text)]
        return _numbered(pieces)

    def _section(self, text: str) -> list[str]:
        """Whole paragraphs packed together while they fit; a paragraph too long alone is cut
        into sentences (then words) packed among themselves, never with its neighbours."""
        out: list[str] = []
        whole: list[str] = []
        for paragraph in (p.strip() for p in text.split("\n\n")):
            if not paragraph:
                continue
            if self._count(paragraph) <= self.size:
                whole.append(paragraph)
                continue
            out += self._pack(whole, "\n\n")
            whole = []
            out += self._pack(self._split(paragraph, level=1), " ")
        return out + self._pack(whole, "\n\n")

    def _split(self, text: str, level: int) -> list[str]:
        """Sentences (level 1), then words (level 2), only where a piece is too long."""
        if self._count(text) <= self.size:
            return [text]
        if level == 1:
            units = sentences(text)
        else:
            words = text.split()
            cuts, start = [], 0
            while start < len(words):
                end = _fill(words, start, self.size, self._count)
                cuts.append(" ".join(words[start:end]))
                start = end
            return cuts
        if len(units) <= 1:
            return self._split(text, level + 1)
        return [piece for unit in units for piece in self._split(unit, level + 1)]

    def _pack(self, parts: list[str], separator: str) -> list[str]:
        """Neighbouring parts joined while they fit in one chunk."""
        packed: list[str] = []
        for part in parts:
            if packed and self._count(packed[-1] + separator + part) <= self.size:
                packed[-1] = packed[-1] + separator + part
            else:
                packed.append(part)
        return packed


class SemanticChunker:
    """Cuts between sentences whose embeddings are least alike: below the ``quantile`` of
    the document's neighbour similarities, or where the size cap forces it."""

    name = "semantic"

    def __init__(
        self, count: TokenCount, embedder: Embedder, size: int = 256, quantile: float = 0.2
    ) -> None:
        _check_sizes(size)
        if not 0.0 < quantile < 1.0:
            raise ValueError(f"quantile must be between 0 and 1, got {quantile!r}")
        self._count, self._embedder, self.size, self.quantile = count, embedder, size, quantile

    def chunk(self, document: LoadedDocument) -> list[Chunk]:
        per_section = [(section, self._sentences(section)) for section in document.sections]
        flat = [s for _, found in per_section for s in found]
        if not flat:
            return []
        vectors = self._embedder.embed_passages(flat)
        similar = np.einsum("ij,ij->i", vectors[:-1], vectors[1:]) if len(flat) > 1 else np.zeros(0)
        cut_below = float(np.quantile(similar, self.quantile)) if similar.size else 0.0
        pieces: list[tuple[str, tuple[str, ...]]] = []
        at = 0
        for section, found in per_section:
            current: list[str] = []
            for offset, sentence in enumerate(found):
                position = at + offset
                shift = offset > 0 and similar[position - 1] < cut_below
                too_long = current and self._count(" ".join([*current, sentence])) > self.size
                if current and (shift or too_long):
                    pieces.append((" ".join(current), section.path))
                    current = []
                current.append(sentence)
            if current:
                pieces.append((" ".join(current), section.path))
            at += len(found)
        return _numbered(pieces)

    def _sentences(self, section: Section) -> list[str]:
        """Sentences, a sentence longer than the cap cut into word runs."""
        found: list[str] = []
        for sentence in sentences(section.text):
            words = sentence.split()
            start = 0
            while start < len(words):
                end = _fill(words, start, self.size, self._count)
                found.append(" ".join(words[start:end]))
                start = end
        return found
