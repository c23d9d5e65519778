"""The embedding lane runs a query before passage jobs queued ahead of it."""

from __future__ import annotations

import threading
import time

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


def test_workers_share_the_passages_and_no_passage_starts_beside_a_query() -> None:
    lane = PriorityLane("test-lane", workers=2)
    query_running, query_may_end = threading.Event(), threading.Event()
    seen: list[tuple[str, bool]] = []

    def query() -> None:
        query_running.set()
        seen.append(("query", lane.alone()))
        query_may_end.wait(10)

    def passage(name: str) -> str:
        seen.append((name, query_running.is_set() and not query_may_end.is_set()))
        return threading.current_thread().name

    running = lane.submit(QUERY, query)
    assert query_running.wait(10)
    queued = [lane.submit(PASSAGE, passage, f"p{i}") for i in range(4)]
    with pytest.raises(TimeoutError):
        queued[0].result(timeout=0.2)  # the other worker is free but waits for the query
    query_may_end.set()
    running.result(timeout=10)
    for job in queued:
        job.result(timeout=10)
    assert seen[0] == ("query", True)  # alone: it may take every core
    assert all(not beside for name, beside in seen[1:])


def test_two_workers_run_two_passages_at_once() -> None:
    lane = PriorityLane("test-lane", workers=2)
    both = threading.Barrier(2, timeout=10)
    jobs = [lane.submit(PASSAGE, both.wait) for _ in range(2)]
    assert sorted(job.result(timeout=10) for job in jobs) == [0, 1]


def test_a_lane_needs_a_worker_and_refuses_work_once_closed() -> None:
    with pytest.raises(ValueError, match="at least one worker"):
        PriorityLane("test-lane", workers=0)
    lane = PriorityLane("test-lane", workers=3)
    done = lane.submit(PASSAGE, lambda: "done")
    lane.close()
    lane.close()  # idempotent
    assert done.result(timeout=10) == "done"  # queued before closing: still runs
    with pytest.raises(RuntimeError, match="closed"):
        lane.submit(QUERY, lambda: None)


def test_on_every_worker_runs_once_on_each() -> None:
    lane = PriorityLane("test-lane", workers=3)
    idents = lane.on_every_worker(threading.get_ident)
    assert len(set(idents)) == 3


def test_a_query_reaches_the_first_worker_while_the_others_wait() -> None:
    """Only the first worker runs queries: waking another one must not strand the query."""
    lane = PriorityLane("test-lane", workers=3)
    for _ in range(5):
        # the worker that ran this passage waits again behind the others
        lane.submit(PASSAGE, lambda: None).result(timeout=10)
        time.sleep(0.05)
        assert lane.submit(QUERY, lambda: "q").result(timeout=5) == "q"
    lane.close()


def test_a_lone_passage_goes_to_the_first_worker_which_may_take_every_core() -> None:
    lane = PriorityLane("test-lane", workers=2)
    for _ in range(5):
        first, alone = lane.submit(PASSAGE, lambda: (lane.on_first_worker(), lane.alone())).result(
            timeout=10
        )
        assert first and alone
        time.sleep(0.02)
    lane.close()
