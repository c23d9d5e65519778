"""The leaders of a score array: the same rows a full sort gives, in a fixed order."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from madeleine.read.topk import top_positive


def _by_full_sort(scores: np.ndarray, k: int) -> list[int]:
    ranked = sorted(
        (row for row in range(scores.size) if scores[row] > 0), key=lambda r: (-scores[r], r)
    )
    return ranked[:k]


@given(
    st.lists(st.sampled_from([0.0, 0.0, 0.1, 0.25, 0.5, 0.9, -0.2]), max_size=60),
    st.integers(min_value=0, max_value=70),
)
def test_matches_a_full_sort_with_ties_by_lower_row(values: list[float], k: int) -> None:
    scores = np.asarray(values, dtype=np.float64)
    assert top_positive(scores, k).tolist() == _by_full_sort(scores, k)


def test_unordered_gives_the_same_set() -> None:
    scores = np.asarray([0.0, 0.4, 0.1, 0.9, 0.0, 0.3])
    assert sorted(top_positive(scores, 2, ordered=False).tolist()) == [1, 3]


def test_nothing_scores_nothing_returned() -> None:
    assert top_positive(np.zeros(5), 3).size == 0
    assert top_positive(np.asarray([0.5]), 0).size == 0
