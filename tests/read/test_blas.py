"""A search runs numpy's BLAS on one thread and gives the previous thread count back."""

from __future__ import annotations

import threading

from madeleine.read.blas import BlasThreads, openblas_controls


class _FakeBlas:
    def __init__(self, threads: int) -> None:
        self.threads = threads
        self.sets: list[int] = []

    def get(self) -> int:
        return self.threads

    def set(self, threads: int) -> None:
        self.sets.append(threads)
        self.threads = threads


def test_limited_sets_one_thread_inside_and_restores_the_count_after() -> None:
    blas = _FakeBlas(4)
    limit = BlasThreads(1, (blas.get, blas.set))
    with limit.limited():
        assert blas.threads == 1
        with limit.limited():  # a second search at the same time
            assert blas.threads == 1
        assert blas.threads == 1  # the first is still running
    assert blas.threads == 4
    assert blas.sets == [1, 4]


def test_limited_restores_the_count_when_the_search_fails() -> None:
    blas = _FakeBlas(2)
    limit = BlasThreads(1, (blas.get, blas.set))
    try:
        with limit.limited():
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert blas.threads == 2


def test_limited_leaves_a_single_threaded_blas_alone() -> None:
    blas = _FakeBlas(1)
    with BlasThreads(1, (blas.get, blas.set)).limited():
        pass
    assert blas.sets == []


def test_without_openblas_nothing_changes() -> None:
    with BlasThreads(1, None).limited():
        pass


def test_concurrent_searches_restore_once_the_last_one_ends() -> None:
    blas = _FakeBlas(8)
    limit = BlasThreads(1, (blas.get, blas.set))
    entered, release = threading.Barrier(3), threading.Event()
    seen: list[int] = []

    def search() -> None:
        with limit.limited():
            entered.wait()
            release.wait()
            seen.append(blas.threads)

    workers = [threading.Thread(target=search) for _ in range(2)]
    for worker in workers:
        worker.start()
    entered.wait()
    assert blas.threads == 1
    release.set()
    for worker in workers:
        worker.join()
    assert seen == [1, 1] and blas.threads == 8 and blas.sets == [1, 8]


def test_numpy_openblas_count_is_the_same_after_a_limited_block() -> None:
    controls = openblas_controls()
    if controls is None:
        return  # numpy without its bundled OpenBLAS: nothing to check
    get, _ = controls
    before = get()
    with BlasThreads.for_numpy(1).limited():
        assert get() == 1
    assert get() == before
