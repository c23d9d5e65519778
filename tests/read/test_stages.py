"""The read path's parts on their own: fusion strategies, score stages, recipes, and the
pipeline's mechanics end to end with an instant hashing embedder (no model)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from madeleine import Memory, Settings
from madeleine.read.channels import Query, Recall
from madeleine.read.dense import UserRows
from madeleine.read.fusion import RRFFusion, WeightedFusion
from madeleine.read.query import QueryAnalysis
from madeleine.read.recipe import RECIPES
from madeleine.read.request import SearchRequest, Stages
from madeleine.read.stages import DecayStage, RangeStage, ScoreState, WindowStage
from tests.fakes import HashingEmbedder

DAY = 86_400.0


def _recall(rows: list[int], calibrated: list[float]) -> Recall:
    values = np.asarray(calibrated, dtype=np.float32)
    return Recall(np.asarray(rows, dtype=np.int64), values, values)


def _rows(times: list[float], sessions: list[int], pinned: list[bool] | None = None) -> UserRows:
    """Turns in order; consecutive turns of one session are neighbours."""
    size = len(times)
    session = np.asarray(sessions, dtype=np.int64)
    prev = np.full(size, -1, dtype=np.int64)
    nxt = np.full(size, -1, dtype=np.int64)
    for row in range(1, size):
        if session[row] == session[row - 1]:
            prev[row], nxt[row - 1] = row - 1, row
    names = [f"s{i}" for i in sorted(set(sessions))]
    return UserRows(
        generation=(1, 0),
        ids=np.arange(1, size + 1, dtype=np.int64),
        times=np.asarray(times, dtype=np.float64),
        matrix=np.zeros((size, 4), dtype=np.float32),
        session_names=names,
        session=session,
        prev=prev,
        next=nxt,
        kinds=np.asarray(["turn"] * size, dtype=np.str_),
        pinned=np.asarray(pinned or [False] * size, dtype=np.bool_),
        session_index={name: i for i, name in enumerate(names)},
    )


def _query(rows: UserRows, *, now: float = 100 * DAY, **request: object) -> Query:
    fields: dict[str, object] = {
        "query": "q",
        "user_id": "u",
        "limit": 10,
        "channels": ("dense", "bm25"),
        "time_range": None,
        "stages": Stages(),
        "now": now,
        **request,
    }
    return Query(
        request=SearchRequest(**fields),  # type: ignore[arg-type]
        analysis=QueryAnalysis(terms=["q"], broad=False, asks_when=False),
        rows=rows,
        depth=100,
        vector=None,
    )


def test_weighted_fusion_mixes_calibrated_scores_and_adds_the_graph() -> None:
    settings = Settings()
    recalls = {
        "bm25": _recall([0, 1], [0.8, 0.4]),
        "dense": _recall([1, 2], [0.6, 0.2]),
        "graph": _recall([2], [1.0]),
    }
    base = WeightedFusion(settings).fuse(recalls, 3)
    # dense and BM25 share 50/50; the graph adds graph.weight × its score on top
    assert base == pytest.approx([0.4, 0.2 + 0.3, 0.1 + settings.graph.weight])


def test_weighted_fusion_can_blend_the_graph_into_the_dense_channel() -> None:
    settings = Settings(graph={"beta": 0.5})
    recalls = {"dense": _recall([0], [0.8]), "graph": _recall([1], [1.0])}
    base = WeightedFusion(settings).fuse(recalls, 2)
    assert base == pytest.approx([0.4, 0.5])  # beta·ppr + (1 − beta)·knn, dense alone


def test_rrf_scores_the_first_of_every_text_channel_one() -> None:
    settings = Settings()
    recalls = {"bm25": _recall([3, 0], [0.9, 0.1]), "dense": _recall([3, 1], [0.9, 0.5])}
    base = RRFFusion(settings).fuse(recalls, 4)
    assert base[3] == pytest.approx(1.0)
    assert base[0] == pytest.approx(base[1]) and 0 < base[0] < 0.5
    assert base[2] == 0.0


def test_window_stage_lifts_a_turn_by_its_best_neighbour() -> None:
    rows = _rows([1, 2, 3, 4], sessions=[0, 0, 0, 1])
    base = np.asarray([0.0, 1.0, 0.0, 0.0])
    effect = WindowStage(0.2).effect(_query(rows), ScoreState(base, base.copy()))
    assert effect is not None and effect.add is not None
    # the question before and the answer after gain; another session's turn does not
    assert effect.add.tolist() == pytest.approx([0.2, 0.0, 0.2, 0.0])
    assert effect.entry(0) == {"contribution": 0.2} and effect.entry(3) is None


def test_switches_allow_stages_and_stages_without_one_always_run() -> None:
    switches = Stages(windows=False, decay=True)
    assert not switches.allows("windows") and switches.allows("decay")
    assert switches.allows("range")  # a filter, not a preference: no switch


def test_range_stage_zeroes_what_falls_outside_or_after_as_of() -> None:
    rows = _rows([1 * DAY, 5 * DAY, 9 * DAY], sessions=[0, 0, 0])
    query = _query(rows, time_range=(0.0, 8 * DAY), as_of=6 * DAY)
    effect = RangeStage().effect(query, None)
    assert effect is not None and effect.scale is not None
    assert effect.scale.tolist() == [1.0, 1.0, 0.0]
    assert RangeStage().effect(_query(rows), None) is None


def test_decay_stage_halves_at_the_half_life_and_spares_pinned_turns() -> None:
    rows = _rows([90 * DAY, 90 * DAY, 100 * DAY], sessions=[0, 0, 0], pinned=[False, True, False])
    effect = DecayStage({"turn": 10.0}).effect(_query(rows, now=100 * DAY), None)
    assert effect is not None and effect.scale is not None
    assert effect.scale.tolist() == pytest.approx([0.5, 1.0, 1.0])
    assert DecayStage({}).effect(_query(rows), None) is None


def test_effects_add_scale_and_assign_in_that_order() -> None:
    from madeleine.read.stages import Effect

    total = np.asarray([1.0, 2.0, 3.0])
    Effect("x", add=np.ones(3), scale=np.asarray([2.0, 0.0, 1.0])).apply(total)
    assert total.tolist() == [4.0, 0.0, 4.0]
    Effect("y", assign=(np.asarray([1]), np.asarray([9.0]))).apply(total)
    assert total.tolist() == [4.0, 9.0, 4.0]


def test_stages_parse_names_the_recipe_and_rejects_unknown_ones() -> None:
    parsed = Stages.parse({"recipe": "plain", "fusion": "rrf"}, Stages())
    assert parsed.recipe == "plain" and parsed.fusion == "rrf"
    with pytest.raises(ValueError, match="recipe"):
        Stages.parse({"recipe": "fastest"}, Stages())
    assert set(RECIPES) >= {"default", "plain"}
    assert RECIPES["plain"].stages == ("range",)


# -- the whole pipeline, with the hashing embedder ---------------------------------------------


@pytest.fixture
def fast_memory(tmp_path: Path) -> Iterator[Memory]:
    with Memory(tmp_path / "m", embedder=HashingEmbedder(), background=False) as memory:
        memory.add(
            [
                {"role": "user", "content": "Which ramen place did you recommend?"},
                {"role": "assistant", "content": "Ichiran on Fifth Avenue, open late."},
                {"role": "user", "content": "My cat Miso hates the vacuum cleaner."},
            ],
            user_id="u",
            session_id="food",
            timestamp="2024-05-01T12:00:00",
        )
        memory.add(
            [{"role": "user", "content": "The quarterly report is due on Friday."}],
            user_id="u",
            session_id="work",
            timestamp="2024-06-01T12:00:00",
        )
        memory.wait()
        yield memory


def test_every_applied_stage_leaves_its_explain_entry(fast_memory: Memory) -> None:
    hits = fast_memory.search("ramen place recommendation", user_id="u", channels=["dense", "bm25"])
    top = hits[0]
    assert "ramen" in top.text.casefold()
    assert top.kind == "turn"
    explain = top.explain
    assert set(explain["channels"]) == {"dense", "bm25"}
    assert explain["fusion"] == "weighted" and explain["base"] > 0
    assert {"bm25", "dense", "fusion", "total"} <= set(explain["ms"])
    answer = next(h for h in hits if "Ichiran" in h.text)
    assert "window" in answer.explain  # found through the question it answers


def test_the_plain_recipe_runs_the_fused_channels_alone(fast_memory: Memory) -> None:
    plain = fast_memory.search(
        "ramen place recommendation",
        user_id="u",
        channels=["dense", "bm25"],
        stages={"recipe": "plain"},
    )
    for hit in plain:
        assert not {"window", "session", "entities", "time", "decay", "dated"} & set(hit.explain)
        assert hit.score == pytest.approx(hit.explain["base"], abs=1e-6)


def test_a_time_range_filters_out_passages_said_outside_it(fast_memory: Memory) -> None:
    hits = fast_memory.search(
        "report", user_id="u", time_range=("2024-04-01", "2024-05-15"), channels=["bm25"]
    )
    assert all("report" not in h.text for h in hits)


def test_switching_on_a_stage_the_recipe_lacks_is_an_error() -> None:
    with pytest.raises(ValueError, match="'plain' recipe has no windows stage"):
        Stages.parse({"recipe": "plain", "windows": True}, Stages())
    assert Stages.parse({"recipe": "plain", "windows": False}, Stages()).recipe == "plain"


def test_the_searcher_enforces_the_switches_not_the_stages(fast_memory: Memory) -> None:
    query = "ramen place recommendation"
    on = fast_memory.search(query, user_id="u", channels=["dense", "bm25"])
    off = fast_memory.search(
        query, user_id="u", channels=["dense", "bm25"], stages={"windows": False}
    )
    assert any("window" in h.explain for h in on)
    assert not any("window" in h.explain for h in off)
