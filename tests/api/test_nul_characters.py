"""A NUL character (\\x00) anywhere a caller can put text is refused with a ValueError that
names the field, on every backend: PostgreSQL's text and jsonb cannot hold one, and a
store that took it on one backend and not the other would not be the same product.
Documents read from files are the exception: a stray NUL there is dropped, not fatal."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from madeleine import Memory
from tests.fakes import HashingEmbedder

NUL = "a\x00b"


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[Memory]:
    with Memory(tmp_path / "m", embedder=HashingEmbedder(), background=False) as memory:
        yield memory


CALLS: dict[str, tuple[str, Callable[[Memory], Any]]] = {
    "content": ("content", lambda m: m.add([{"content": NUL}], user_id="u")),
    "name": ("name", lambda m: m.add([{"content": "x", "name": NUL}], user_id="u")),
    "role": ("role", lambda m: m.add([{"content": "x", "role": NUL}], user_id="u")),
    "message id": ("id", lambda m: m.add([{"content": "x", "id": NUL}], user_id="u")),
    "metadata value": (
        "metadata",
        lambda m: m.add([{"content": "x", "metadata": {"k": NUL}}], user_id="u"),
    ),
    "metadata key": (
        "metadata",
        lambda m: m.add([{"content": "x", "metadata": {NUL: 1}}], user_id="u"),
    ),
    "user id": ("user_id", lambda m: m.add([{"content": "x"}], user_id=NUL)),
    "session id": ("session_id", lambda m: m.add([{"content": "x"}], user_id="u", session_id=NUL)),
    "event type": ("type", lambda m: m.add_event(user_id="u", type=NUL)),
    "event data": ("data", lambda m: m.add_event(user_id="u", type="t", data={"k": [NUL]})),
    "query": ("query", lambda m: m.search(NUL, user_id="u")),
    "delete by id": ("message_id", lambda m: m.delete_message(NUL, user_id="u")),
    "kb description": ("description", lambda m: m.kb("c", description=NUL)),
    "kb doc id": ("doc_id", lambda m: m.kb("c").add_document("text", doc_id=NUL)),
    "kb title": ("title", lambda m: m.kb("c").add_document("text", doc_id="d", title=NUL)),
    "kb metadata": (
        "metadata",
        lambda m: m.kb("c").add_document("text", doc_id="d", metadata={"k": NUL}),
    ),
    "session message": (
        "content",
        lambda m: m.session("s", user_id="u").append({"role": "user", "content": NUL}),
    ),
    "agent data": (
        "data",
        lambda m: m.agent("a", user_id="u").transition("planning", data={"k": NUL}),
    ),
    "agent reason": (
        "reason",
        lambda m: m.agent("a", user_id="u").transition("planning", reason=NUL),
    ),
}


@pytest.mark.parametrize("case", sorted(CALLS))
def test_a_nul_character_is_refused_and_named(mem: Memory, case: str) -> None:
    field, call = CALLS[case]
    with pytest.raises(ValueError, match=rf"{field}.*NUL"):
        call(mem)
    assert mem.stats()["events"] == 0  # nothing was written
    assert mem.check()["ok"] is True


def test_an_escaped_backslash_u0000_is_ordinary_text(mem: Memory) -> None:
    """The six characters \\u0000 are not a NUL and are kept as they are."""
    mem.add([{"content": "literal \\u0000 here", "metadata": {"k": "\\u0000"}}], user_id="u")
    mem.wait()
    exported = mem.export_user("u")["events"][0]
    assert exported["metadata"] == {"k": "\\u0000"}


def test_a_nul_inside_a_document_is_dropped(mem: Memory) -> None:
    mem.kb("c").add_document("the boiler\x00 is serviced in May", doc_id="d")
    mem.wait()
    hits = mem.search_kb("boiler service", collections=["c"])
    assert hits and "\x00" not in hits[0].text and "boiler is serviced" in hits[0].text
