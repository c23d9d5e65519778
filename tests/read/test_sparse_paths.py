"""The read path's shortcuts for large users give exactly what the plain computations give:
the window gain over the scored rows' neighbours only, channel ranks of the chosen rows
only, and a graph walk that reads the query vector only when the query's names seed too
little."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt

from madeleine import Memory
from madeleine.read.channels import Recall
from madeleine.read.search import _rank_map
from madeleine.read.stages import window_gain
from tests.fakes import HashingEmbedder
from tests.read.test_graph import QUERY, _corpus
from tests.read.test_stages import _rows


def _dense_window(
    prev: npt.NDArray[np.int64],
    nxt: npt.NDArray[np.int64],
    base: npt.NDArray[np.float64],
    weight: float,
) -> npt.NDArray[np.float64]:
    """The window gain computed over every row (the formula before the shortcut)."""
    previous = np.where(prev >= 0, base[np.maximum(prev, 0)], 0.0)
    following = np.where(nxt >= 0, base[np.maximum(nxt, 0)], 0.0)
    result: npt.NDArray[np.float64] = weight * np.maximum(previous, following)
    return result


def test_window_gain_equals_the_gain_computed_over_every_row() -> None:
    generator = np.random.default_rng(7)
    for trial in range(50):
        size = int(generator.integers(1, 60))
        sessions = sorted(generator.integers(0, 6, size).tolist())
        rows = _rows([float(i) for i in range(size)], sessions)
        base = np.zeros(size)
        scored = generator.random(size) < (0.05 + trial / 60)
        base[scored] = generator.random(int(scored.sum()))
        expected = _dense_window(rows.prev, rows.next, base, 0.3)
        assert np.array_equal(window_gain(rows, base, 0.3), expected)


def test_window_gain_of_unscored_rows_is_zero() -> None:
    rows = _rows([0.0, 1.0, 2.0], [0, 0, 0])
    assert not window_gain(rows, np.zeros(3), 0.5).any()


def test_window_gain_takes_the_better_neighbour_and_crosses_no_session() -> None:
    rows = _rows([0.0, 1.0, 2.0, 3.0], [0, 0, 0, 1])
    gain = window_gain(rows, np.asarray([0.2, 0.0, 0.6, 0.9]), 0.5)
    assert gain.tolist() == [0.0, 0.3, 0.0, 0.0]


def test_rank_map_gives_rank_and_scores_of_the_chosen_rows_only() -> None:
    raw = np.asarray([9.0, 7.0, 5.0, 3.0], dtype=np.float32)
    recall = Recall(
        np.asarray([40, 10, 30, 20], dtype=np.int64), raw, (raw / 10).astype(np.float32)
    )
    found = _rank_map(recall, [30, 99, 40])
    assert set(found) == {30, 40}
    assert found[30] == {"rank": 3, "score": 5.0, "calibrated": 0.5}
    assert found[40]["rank"] == 1
    assert _rank_map(recall, []) == {}


def test_a_walk_seeded_by_names_never_reads_the_query_vector(tmp_path: Path) -> None:
    embedder = HashingEmbedder()
    with Memory(tmp_path / "m", embedder=embedder, graph_min_seeds=1) as memory:
        _corpus(memory)
        searcher = memory._engine.searcher
        graph = searcher._graph
        assert graph is not None
        rows = searcher._dense.rows("dev")
        dim = embedder.dim
        assert not graph.needs_vector("dev", rows, dim, QUERY, ["Project Falcon"])
        assert graph.needs_vector("dev", rows, dim, "what did we learn?", [])

        def no_vector() -> npt.NDArray[np.float32] | None:
            raise AssertionError("the names seed this walk: the vector is not read")

        named = graph.recall("dev", rows, QUERY, ["Project Falcon"], no_vector, dim)
        assert [seed["entity"] for seed in named.seeds] == ["Project Falcon"]
        asked: list[bool] = []

        def vector() -> npt.NDArray[np.float32] | None:
            asked.append(True)
            found: npt.NDArray[np.float32] = embedder.embed_queries(["gateway_v2 headers"])[0]
            return found

        graph.recall("dev", rows, "what did we learn?", [], vector, dim)
        assert asked == [True]
        # through the searcher: the same hits whether the walk ran early or on the vector
        hits = memory.search(QUERY, user_id="dev", limit=5, channels=["graph"])
        assert hits and hits[0].explain["graph"]["seeds"][0]["entity"] == "Project Falcon"
