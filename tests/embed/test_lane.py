"""The embedding lane runs a query before passage jobs queued ahead of it."""

from __future__ import annotations

import threading

import pytest

from madeleine.embed.lane import PASSAGE, QUERY, PriorityLane


def test_a_query_overtakes_queued_passages() -> None:
    lane = PriorityLane("test-lane")
    gate = threading.Event()
    order: list[str] = []
    blocker = lane.submit(PASSAGE, gate.wait, 10)  # occupies the lane
    passages = [lane.submit(PASSAGE, order.append, f"p{i}") for i in range(3)]
    query = lane.submit(QUERY, order.append, "q")
    gate.set()
    blocker.result(timeout=10)
    for job in (*passages, query):
        job.result(timeout=10)
    assert order == ["q", "p0", "p1", "p2"]  # FIFO within passages


def test_errors_reach_the_caller() -> None:
    lane = PriorityLane("test-lane")
    with pytest.raises(ZeroDivisionError):
        lane.submit(QUERY, lambda: 1 / 0).result(timeout=10)
    assert lane.submit(QUERY, lambda: 2).result(timeout=10) == 2  # the lane goes on
