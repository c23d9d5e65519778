"""Retrieval metrics over ranked source ids (turn level) and the sessions they belong to."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence


def distinct(ids: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(ids))


def recall_at(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    """Fraction of the relevant ids among the first k distinct ranked ids."""
    if not relevant:
        return 0.0
    return len(set(distinct(ranked)[:k]) & relevant) / len(relevant)


def ndcg_at(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    """Binary-relevance NDCG over the first k distinct ranked ids."""
    if not relevant:
        return 0.0
    gains = sum(
        1.0 / math.log2(position + 2)
        for position, item in enumerate(distinct(ranked)[:k])
        if item in relevant
    )
    ideal = sum(1.0 / math.log2(position + 2) for position in range(min(len(relevant), k)))
    return gains / ideal


def session_recall(
    ranked: Sequence[str],
    relevant_sessions: set[str],
    k: int,
    session_of: Callable[[str], str],
) -> tuple[float, float]:
    """(recall_any, recall_all) of evidence sessions among the sessions of the first k turns."""
    if not relevant_sessions:
        return 0.0, 0.0
    covered = {session_of(item) for item in distinct(ranked)[:k]}
    found = covered & relevant_sessions
    return float(bool(found)), float(found == relevant_sessions)


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    low = math.floor(position)
    high = math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)
