"""Property-based tests of the public API (Hypothesis): random messages, metadata, ids and
calls. Invariants: bad input fails with ValueError/TypeError only and writes nothing; every
acknowledged message is searchable after wait(); no user sees another's memories; a delete
leaves nothing, not even bytes in the store's files."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from madeleine import Memory
from tests.fakes import HashingEmbedder

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
MESSAGE = st.fixed_dictionaries(
    {"content": st.text(max_size=200)},
    optional={
        "role": st.sampled_from(["user", "assistant", "tool", ""]),
        "name": st.text(max_size=12),
        "metadata": st.dictionaries(st.text(max_size=8), JSON, max_size=4),
        "timestamp": st.one_of(st.floats(), st.integers(), st.text(max_size=25)),
    },
)
USERS = st.sampled_from(["alice", "bob", "u\ud800", " ", "carol"])
RUN = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,  # the same examples on every run: CI is reproducible
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,  # only stored_text, a function of its argument
    ],
)


def _marker(n: int) -> str:
    return f"zqx{n}marker"


@RUN
@given(batches=st.lists(st.tuples(USERS, st.lists(MESSAGE, min_size=1, max_size=4)), max_size=6))
def test_random_input_is_either_stored_and_findable_or_refused_cleanly(
    batches: list[tuple[str, list[dict[str, Any]]]],
) -> None:
    stored: dict[str, tuple[str, str]] = {}  # message id -> (user, marker)
    with (
        tempfile.TemporaryDirectory() as directory,
        Memory(Path(directory), embedder=HashingEmbedder(), background=False) as memory,
    ):
        for number, (user, messages) in enumerate(batches):
            marked = [
                {
                    **m,
                    "id": f"m{number}-{i}",
                    "content": f"{m['content']} {_marker(number * 10 + i)}",
                }
                for i, m in enumerate(messages)
            ]
            before = memory.stats()["events"]
            try:
                memory.add(marked, user_id=user)
            except (ValueError, TypeError):
                assert memory.stats()["events"] == before, "a refused batch wrote something"
                continue
            for i, message in enumerate(marked):
                stored[message["id"]] = (user, _marker(number * 10 + i))
        assert memory.wait() is True
        assert memory.check()["ok"] is True
        for message_id, (user, marker) in stored.items():
            hits = memory.search(marker, user_id=user, channels=["bm25"], limit=5)
            assert any(message_id in h.source_ids for h in hits), "acknowledged but not found"
            for other in {"alice", "bob", "carol"} - {user}:
                for hit in memory.search(marker, user_id=other, channels=["bm25"]):
                    assert message_id not in hit.source_ids, "another user's memory"


@RUN
@given(
    contents=st.lists(
        st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=80),
        min_size=2,
        max_size=6,
    ),
    doomed=st.sets(st.integers(min_value=0, max_value=5), min_size=1),
)
def test_a_delete_leaves_nothing_behind(
    contents: list[str], doomed: set[int], stored_text: Callable[[Path], str]
) -> None:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory)
        with Memory(path, embedder=HashingEmbedder(), background=False) as memory:
            messages = [
                {"content": f"{text} {_marker(i)}", "id": f"m{i}"}
                for i, text in enumerate(contents)
            ]
            memory.add(messages, user_id="alice")
            memory.wait()
            gone = {i for i in doomed if i < len(messages)}
            for i in gone:
                assert memory.delete_message(f"m{i}", user_id="alice")
            memory.wait()
            for i in range(len(messages)):
                hits = memory.search(_marker(i), user_id="alice", channels=["bm25"])
                found = any(f"m{i}" in h.source_ids for h in hits)
                assert found == (i not in gone)
            assert memory.check()["ok"] is True
        files = b"".join(f.read_bytes() for f in path.rglob("*") if f.is_file())
        text = stored_text(path)
        for i in gone:
            assert _marker(i).encode() not in files and _marker(i) not in text
