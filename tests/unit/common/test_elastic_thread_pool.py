"""ElasticThreadPool (berth.common.threads): runs every job, grows up to its bound,
and lets idle threads retire."""

from __future__ import annotations

import threading
import time

import pytest

from berth.common.threads import ElasticThreadPool


def _until(predicate, timeout: float = 5.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.005)
    return False


def test_results_and_exceptions_reach_the_futures() -> None:
    pool = ElasticThreadPool(2)
    try:
        assert pool.submit(lambda a, b=0: a + b, 2, b=3).result(5) == 5
        with pytest.raises(ZeroDivisionError):
            pool.submit(lambda: 1 / 0).result(5)
    finally:
        pool.shutdown()


def test_grows_to_its_bound_under_load_and_queues_the_rest() -> None:
    pool = ElasticThreadPool(3, idle_timeout=30)
    gate = threading.Event()
    running = []
    lock = threading.Lock()

    def job(i: int) -> int:
        with lock:
            running.append(i)
        gate.wait(5)
        return i

    try:
        futures = [pool.submit(job, i) for i in range(10)]
        assert _until(lambda: len(running) == 3)
        time.sleep(0.05)
        assert len(running) == 3 and pool.num_threads == 3     # the other 7 wait
        gate.set()
        assert sorted(f.result(5) for f in futures) == list(range(10))
        assert pool.num_threads == 3
    finally:
        pool.shutdown()


def test_idle_threads_retire_and_come_back_for_the_next_burst() -> None:
    pool = ElasticThreadPool(4, idle_timeout=0.05)
    barrier = threading.Barrier(4)
    try:
        for f in [pool.submit(barrier.wait, 5) for _ in range(4)]:
            f.result(5)
        assert pool.num_threads == 4
        assert _until(lambda: pool.num_threads == 0)
        assert {t.name for t in threading.enumerate()}.isdisjoint(
            {f"worker_{i}" for i in range(4)})
        assert pool.submit(lambda: "again").result(5) == "again"
    finally:
        pool.shutdown()


def test_no_job_is_lost_while_threads_retire() -> None:
    # A tiny idle timeout makes threads retire between jobs all the time: every job
    # must still run exactly once.
    pool = ElasticThreadPool(4, idle_timeout=0.0005)
    done: list[int] = []
    lock = threading.Lock()

    def job(i: int) -> None:
        with lock:
            done.append(i)

    try:
        futures = []
        for i in range(3000):
            futures.append(pool.submit(job, i))
            if i % 100 == 0:
                time.sleep(0.002)
        for f in futures:
            f.result(10)
        assert sorted(done) == list(range(3000))
    finally:
        pool.shutdown()


def test_a_burst_beyond_the_bound_leaves_no_phantom_idle_thread() -> None:
    # Jobs queued at the bound are picked up by threads finishing earlier jobs. Once
    # every thread has retired, the next job must start a thread again: it once
    # counted on an "idle" thread that had retired, and waited forever (the agent
    # dropped every delete after a burst of 50 creates and 30 s of quiet).
    pool = ElasticThreadPool(2, idle_timeout=0.05)
    gate = threading.Event()
    try:
        burst = [pool.submit(gate.wait, 5) for _ in range(6)]
        gate.set()
        for f in burst:
            f.result(5)
        assert _until(lambda: pool.num_threads == 0)
        later = [pool.submit(lambda i=i: i) for i in range(3)]
        assert [f.result(5) for f in later] == [0, 1, 2]
    finally:
        pool.shutdown()


def test_a_thread_that_cannot_start_leaves_the_counts_true(
        monkeypatch: pytest.MonkeyPatch) -> None:
    pool = ElasticThreadPool(2, idle_timeout=30)
    ran: list[str] = []

    def refuse(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    try:
        with monkeypatch.context() as m:
            m.setattr(threading.Thread, "start", refuse)
            with pytest.raises(RuntimeError):
                pool.submit(ran.append, "refused")
        assert pool.num_threads == 0
        assert pool.submit(lambda: "later").result(5) == "later"
        time.sleep(0.05)
        assert ran == []          # the refused job was cancelled, not run late
    finally:
        pool.shutdown()


def test_shutdown_runs_queued_jobs_then_refuses_new_ones() -> None:
    pool = ElasticThreadPool(1)
    gate = threading.Event()
    first = pool.submit(gate.wait, 5)
    queued = pool.submit(lambda: "queued")
    gate.set()
    pool.shutdown(wait=True)
    assert first.result(0) is True and queued.result(0) == "queued"
    assert pool.num_threads == 0
    with pytest.raises(RuntimeError):
        pool.submit(lambda: None)


def test_shutdown_can_cancel_what_has_not_started() -> None:
    pool = ElasticThreadPool(1)
    gate = threading.Event()
    first = pool.submit(gate.wait, 5)
    assert _until(lambda: first.running())
    queued = pool.submit(lambda: "never")
    threading.Timer(0.05, gate.set).start()
    pool.shutdown(wait=True, cancel_futures=True)
    assert first.result(0) is True
    assert queued.cancelled()


def test_a_bound_below_one_is_refused() -> None:
    with pytest.raises(ValueError):
        ElasticThreadPool(0)
