"""L0 (one line) and L1 (short overview) abstracts of documents and collections, written
without a model: the title and the lead sentences, which is what routing and listings need
to tell documents apart. A collection's profile — its name, description and the titles in
it — is what routing compares a query with."""

from __future__ import annotations

from collections.abc import Sequence

from madeleine.kb.chunkers import sentences
from madeleine.kb.loaders import LoadedDocument

L0_CHARS = 160
L1_CHARS = 600


def clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0] or text[: limit - 1]
    return cut + "…"


def document_abstracts(document: LoadedDocument, title: str) -> tuple[str, str]:
    """(L0, L1): the title with the first sentence; the lead sentence of each section."""
    leads = [s for section in document.sections for s in sentences(section.text)[:1]]
    first = leads[0] if leads else ""
    l0 = clip(f"{title}: {first}" if title and first else title or first, L0_CHARS)
    parts: list[str] = []
    for section in document.sections:
        lead = sentences(section.text)[:2]
        if not lead:
            continue
        heading = " > ".join(section.path)
        parts.append((f"{heading}: " if heading else "") + " ".join(lead))
        if sum(len(p) for p in parts) >= L1_CHARS:
            break
    return l0, clip(" ".join(parts), L1_CHARS)


def collection_abstracts(
    name: str, description: str, documents: Sequence[tuple[str, str]]
) -> tuple[str, str, str]:
    """(L0, L1, routing profile) of a collection from its description and its documents'
    (title, L0)."""
    count = len(documents)
    noun = "document" if count == 1 else "documents"
    l0 = clip(description or f"{name}: {count} {noun}", L0_CHARS)
    listed = "; ".join(l0_doc or title for title, l0_doc in documents)
    l1 = clip(f"{description} ({count} {noun}) {listed}".strip(), L1_CHARS)
    titles = "; ".join(dict.fromkeys(t for t, _ in documents if t))
    readable_name = name.replace("-", " ").replace("_", " ")
    profile = clip(". ".join(p for p in (readable_name, description, titles) if p), 1500)
    return l0, l1, profile
