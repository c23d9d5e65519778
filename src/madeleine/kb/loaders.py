"""Documents from plain text, Markdown, HTML and PDF, as titled sections with their
heading path. Structure comes from real parsers (markdown-it, BeautifulSoup, pypdf); the
chunkers rely on it to keep a chunk inside one section and to label it."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FORMATS = {".txt": "text", ".md": "markdown", ".markdown": "markdown", ".html": "html"}
FORMATS |= {".htm": "html", ".pdf": "pdf"}
_SKIPPED_TAGS = ("script", "style", "nav", "header", "footer", "noscript", "template")
_BLOCK_TAGS = ("p", "li", "pre", "blockquote", "td", "th", "dd", "dt", "figcaption")


@dataclass(frozen=True, slots=True)
class Section:
    path: tuple[str, ...]  # headings from the top: ("Leave", "Annual leave")
    text: str


@dataclass(frozen=True, slots=True)
class LoadedDocument:
    title: str
    sections: list[Section]
    format: str
    content_hash: str
    metadata: dict[str, str] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return "\n\n".join(s.text for s in self.sections)


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class _Sections:
    """Collects paragraphs under the current heading path."""

    def __init__(self) -> None:
        self.path: list[tuple[int, str]] = []
        self.sections: list[Section] = []
        self._paragraphs: list[str] = []

    def heading(self, level: int, title: str) -> None:
        title = title.replace("\x00", "")  # a NUL in a file is noise, and no backend stores it
        self.flush()
        while self.path and self.path[-1][0] >= level:
            self.path.pop()
        self.path.append((level, title))

    def paragraph(self, text: str) -> None:
        text = text.replace("\x00", "").strip()
        if text:
            self._paragraphs.append(text)

    def flush(self) -> None:
        if self._paragraphs:
            path = tuple(title for _, title in self.path)
            self.sections.append(Section(path, "\n\n".join(self._paragraphs)))
            self._paragraphs = []

    def done(self) -> list[Section]:
        self.flush()
        return self.sections


def load_text(text: str, title: str = "") -> LoadedDocument:
    sections = _Sections()
    for paragraph in text.replace("\r\n", "\n").split("\n\n"):
        sections.paragraph(paragraph)
    return LoadedDocument(title, sections.done(), "text", content_hash(text.encode("utf-8")))


def load_markdown(text: str, title: str = "") -> LoadedDocument:
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    sections = _Sections()
    first_heading = ""
    level = 0
    row: list[str] | None = None  # a table row's cells, joined into one line
    for index, token in enumerate(tokens):
        if token.type == "heading_open":
            level = int(token.tag[1])
        elif token.type == "inline" and level:
            sections.heading(level, token.content.strip())
            first_heading = first_heading or token.content.strip()
            level = 0
        elif token.type == "tr_open":
            row = []
        elif token.type == "tr_close" and row is not None:
            sections.paragraph(" | ".join(row))
            row = None
        elif token.type == "inline" and row is not None:
            row.append(token.content.strip())
        elif token.type == "inline" and _in_block(tokens, index):
            sections.paragraph(token.content)
        elif token.type in ("fence", "code_block"):
            sections.paragraph(token.content.rstrip())
    return LoadedDocument(
        title or first_heading,
        sections.done(),
        "markdown",
        content_hash(text.encode("utf-8")),
    )


def _in_block(tokens: Sequence[Any], index: int) -> bool:
    """An inline token under a paragraph (not a heading)."""
    return bool(index) and tokens[index - 1].type == "paragraph_open"


def load_html(html: str, title: str = "") -> LoadedDocument:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    for tag in soup(list(_SKIPPED_TAGS)):
        tag.decompose()
    found_title = title or (soup.title.get_text(" ", strip=True) if soup.title else "")
    sections = _Sections()
    body = soup.body or soup
    for element in body.find_all(["h1", "h2", "h3", "h4", "h5", "h6", *_BLOCK_TAGS]):
        if element.name.startswith("h") and len(element.name) == 2:
            heading = element.get_text(" ", strip=True)
            if heading:
                sections.heading(int(element.name[1]), heading)
                found_title = found_title or heading
        elif not element.find_parent(list(_BLOCK_TAGS)):  # a <p> inside <li> once, not twice
            sections.paragraph(element.get_text(" ", strip=True))
    return LoadedDocument(found_title, sections.done(), "html", content_hash(html.encode("utf-8")))


def load_pdf(path: Path, title: str = "") -> LoadedDocument:
    """One section per page ("page 3"), paragraphs as the text layer gives them."""
    from pypdf import PdfReader

    data = path.read_bytes()
    reader = PdfReader(path)
    sections: list[Section] = []
    for number, page in enumerate(reader.pages, start=1):
        text = (page.extract_text() or "").strip()
        if text:
            sections.append(Section((f"page {number}",), text))
    meta_title = ""
    if reader.metadata is not None and reader.metadata.title:
        meta_title = str(reader.metadata.title)
    return LoadedDocument(title or meta_title or path.stem, sections, "pdf", content_hash(data))


def load_path(path: Path, title: str = "") -> LoadedDocument:
    """A file by its suffix (.txt, .md, .html, .pdf)."""
    kind = FORMATS.get(path.suffix.lower())
    if kind is None:
        known = ", ".join(sorted(FORMATS))
        raise ValueError(f"{path}: unsupported file type {path.suffix!r} (known: {known})")
    if kind == "pdf":
        return load_pdf(path, title)
    text = path.read_text(encoding="utf-8", errors="replace")
    loaded = {"text": load_text, "markdown": load_markdown, "html": load_html}[kind](text, title)
    if not loaded.title:
        return LoadedDocument(path.stem, loaded.sections, loaded.format, loaded.content_hash)
    return loaded


def files_in(folder: Path) -> Iterator[Path]:
    """The loadable files under ``folder``, in a stable order, hidden ones skipped."""
    for path in sorted(folder.rglob("*")):
        hidden = any(part.startswith(".") for part in path.relative_to(folder).parts)
        if path.is_file() and not hidden and path.suffix.lower() in FORMATS:
            yield path
