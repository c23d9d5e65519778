"""Loaders on real Markdown, HTML and PDF files, and the three chunkers: sizes, section
paths, overlap, and cuts at topic shifts."""

from __future__ import annotations

from pathlib import Path

import pytest

from madeleine.kb.chunkers import FixedChunker, RecursiveChunker, SemanticChunker, sentences
from madeleine.kb.loaders import files_in, load_path, load_text
from madeleine.text.tokens import token_estimator
from tests.fakes import HashingEmbedder

count = token_estimator()

MARKDOWN = """# HR policies

Intro paragraph about the handbook.

## Annual leave

Full-time staff get 25 days of annual leave per year. Requests go through the portal.

- Carry over at most 5 days.
- Unused days expire on March 31.

| Grade | Days |
|---|---|
| G1 | 25 |

## Payroll

Salaries are paid on the 25th of each month.

```
payroll --run monthly
```
"""

HTML = """<html><head><title>Store manual</title><style>p {color: red}</style></head>
<body><nav>Home | About</nav>
<h1>Store 12 manual</h1><p>Opening hours are 9 to 21.</p>
<h2>Returns</h2><p>Returns are accepted within <b>30 days</b> with a receipt.</p>
<ul><li><p>Electronics: 14 days.</p></li><li>Food: no returns.</li></ul>
<script>alert('x')</script></body></html>"""


def test_markdown_sections_keep_their_heading_path(tmp_path: Path) -> None:
    path = tmp_path / "hr.md"
    path.write_text(MARKDOWN, encoding="utf-8")
    document = load_path(path)
    assert document.title == "HR policies" and document.format == "markdown"
    paths = [s.path for s in document.sections]
    assert paths == [("HR policies",), ("HR policies", "Annual leave"), ("HR policies", "Payroll")]
    leave = document.sections[1].text
    assert "Carry over at most 5 days." in leave and "G1 | 25" in leave
    assert "payroll --run monthly" in document.sections[2].text


def test_html_drops_scripts_styles_and_navigation(tmp_path: Path) -> None:
    path = tmp_path / "manual.html"
    path.write_text(HTML, encoding="utf-8")
    document = load_path(path)
    assert document.title == "Store manual"
    text = document.text
    assert "alert" not in text and "color: red" not in text and "Home | About" not in text
    assert text.count("Electronics: 14 days.") == 1  # a <p> inside <li> once
    returns = next(s for s in document.sections if s.path[-1] == "Returns")
    assert returns.path == ("Store 12 manual", "Returns")
    assert "within 30 days with a receipt" in returns.text


def test_pdf_pages_become_sections(tmp_path: Path) -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_title("Safety rules")
    pdf.set_font("Helvetica", size=12)
    pdf.add_page()
    pdf.multi_cell(0, 8, "Wear gloves when handling chemicals.")
    pdf.add_page()
    pdf.multi_cell(0, 8, "Fire exits must stay clear at all times.")
    path = tmp_path / "safety.pdf"
    pdf.output(str(path))
    document = load_path(path)
    assert document.title == "Safety rules" and document.format == "pdf"
    assert [s.path for s in document.sections] == [("page 1",), ("page 2",)]
    assert "Fire exits" in document.sections[1].text


def test_unknown_types_are_refused_and_folders_list_loadable_files(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n\ntext")
    (tmp_path / "notes.docx").write_bytes(b"PK")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "b.txt").write_text("secret")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c.txt").write_text("plain")
    assert [p.name for p in files_in(tmp_path)] == ["a.md", "c.txt"]
    with pytest.raises(ValueError, match="unsupported file type"):
        load_path(tmp_path / "notes.docx")
    assert load_path(tmp_path / "sub" / "c.txt").title == "c"


def _long_document() -> str:
    leave = " ".join(
        f"Leave rule {i} says staff may take day {i} off with notice." for i in range(40)
    )
    pay = " ".join(f"Payroll rule {i} sets the bonus for quarter {i}." for i in range(40))
    return f"{leave}\n\n{pay}"


def test_recursive_chunks_fit_and_prefer_paragraph_boundaries() -> None:
    document = load_text(_long_document(), title="Rules")
    chunks = RecursiveChunker(count, size=120).chunk(document)
    assert all(count(c.text) <= 120 for c in chunks)
    assert not any("Leave rule" in c.text and "Payroll rule" in c.text for c in chunks)
    assert [c.index for c in chunks] == list(range(len(chunks)))
    assert " ".join(c.text for c in chunks).split() == document.text.split()  # nothing lost


def test_recursive_never_crosses_sections(tmp_path: Path) -> None:
    path = tmp_path / "hr.md"
    path.write_text(MARKDOWN, encoding="utf-8")
    chunks = RecursiveChunker(count, size=512).chunk(load_path(path))
    assert [c.section[-1] for c in chunks] == ["HR policies", "Annual leave", "Payroll"]


def test_fixed_chunks_overlap() -> None:
    document = load_text(_long_document())
    chunks = FixedChunker(count, size=64, overlap=16).chunk(document)
    assert all(count(c.text) <= 64 for c in chunks)
    first, second = chunks[0].text.split(), chunks[1].text.split()
    assert " ".join(first[-3:]) in " ".join(second[:12])  # ~16 tokens repeated
    assert second[0] != first[0]
    with pytest.raises(ValueError):
        FixedChunker(count, size=64, overlap=64)


def test_semantic_chunker_cuts_at_the_topic_shift() -> None:
    class TopicEmbedder(HashingEmbedder):
        """Two orthogonal directions: leave sentences and payroll sentences."""

        def embed_passages(self, texts):  # type: ignore[no-untyped-def]
            import numpy as np

            out = np.zeros((len(texts), 2), dtype=np.float32)
            for i, text in enumerate(texts):
                out[i, 0 if "Leave" in text else 1] = 1.0
            return out

    leave = " ".join(f"Leave rule {i} applies." for i in range(6))
    pay = " ".join(f"Payroll rule {i} applies." for i in range(6))
    document = load_text(f"{leave} {pay}")
    chunks = SemanticChunker(count, TopicEmbedder(), size=200, quantile=0.1).chunk(document)
    assert [("Leave" in c.text, "Payroll" in c.text) for c in chunks] == [
        (True, False),
        (False, True),
    ]


def test_sentences_split_english_and_korean() -> None:
    assert sentences("연차는 25일입니다. 신청은 포털에서 합니다! Next one?") == [
        "연차는 25일입니다.",
        "신청은 포털에서 합니다!",
        "Next one?",
    ]
