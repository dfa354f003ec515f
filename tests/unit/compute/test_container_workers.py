"""ContainerWorkers: one job at a time per container, in arrival order; containers in
parallel on a bounded pool; a queued job holds no thread."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator

import pytest

from berth.common import log as berth_log
from berth.compute.workers import ContainerWorkers

WAIT = 10.0  # generous: only a failure waits this long


@pytest.fixture
def workers() -> Iterator[ContainerWorkers]:
    w = ContainerWorkers(max_workers=4)
    yield w
    w.stop(wait=False)


def test_jobs_of_one_container_run_one_at_a_time_in_order(workers: ContainerWorkers) -> None:
    log: list[str] = []
    running = 0
    overlap = False
    guard = threading.Lock()

    def job(name: str) -> None:
        nonlocal running, overlap
        with guard:
            running += 1
            overlap = overlap or running > 1
        log.append(f"start {name}")
        threading.Event().wait(0.01)
        log.append(f"end {name}")
        with guard:
            running -= 1

    for i in range(8):
        workers.submit("u1", job, str(i))
    assert workers.wait_idle(WAIT)
    assert not overlap
    assert log == [x for i in range(8) for x in (f"start {i}", f"end {i}")]


def test_different_containers_run_in_parallel(workers: ContainerWorkers) -> None:
    barrier = threading.Barrier(3, timeout=WAIT)
    done: list[str] = []

    def job(key: str) -> None:
        barrier.wait()   # only passes if all three run at the same time
        done.append(key)

    for key in ("a", "b", "c"):
        workers.submit(key, job, key)
    assert workers.wait_idle(WAIT)
    assert sorted(done) == ["a", "b", "c"]


def test_a_queued_job_does_not_hold_a_pool_thread() -> None:
    # Two threads. Container A has a blocked job and one queued behind it; if the
    # queued job took the second thread (a per-container lock would), B could not run.
    workers = ContainerWorkers(max_workers=2)
    release_a = threading.Event()
    b_ran = threading.Event()
    try:
        workers.submit("A", release_a.wait, WAIT)
        workers.submit("A", lambda: None)
        workers.submit("A", lambda: None)
        workers.submit("B", b_ran.set)
        assert b_ran.wait(WAIT), "B waited behind A's queued jobs"
        assert workers.busy("A") and workers.pending() == 1
    finally:
        release_a.set()
        assert workers.wait_idle(WAIT)
        workers.stop()
    assert not workers.busy("A") and workers.pending() == 0


def test_the_pool_is_bounded() -> None:
    workers = ContainerWorkers(max_workers=2)
    release = threading.Event()
    active = 0
    peak = 0
    guard = threading.Lock()

    def job() -> None:
        nonlocal active, peak
        with guard:
            active += 1
            peak = max(peak, active)
        release.wait(WAIT)
        with guard:
            active -= 1

    try:
        for i in range(6):
            workers.submit(f"k{i}", job)
        deadline = time.monotonic() + WAIT
        while active < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.1)   # a grace period in which an unbounded pool would start more
        assert workers.pending() == 6
    finally:
        release.set()
        assert workers.wait_idle(WAIT)
        workers.stop()
    assert peak == 2


def test_a_failing_job_is_logged_and_the_next_one_still_runs(
        workers: ContainerWorkers, caplog: pytest.LogCaptureFixture) -> None:
    ran: list[str] = []

    def explode() -> None:
        raise ValueError("kaboom")

    workers.submit("u1", explode)
    workers.submit("u1", ran.append, "after")
    assert workers.wait_idle(WAIT)
    assert ran == ["after"]
    assert any("explode" in r.getMessage() and r.exc_info for r in caplog.records
               if r.levelno >= logging.ERROR)


def test_jobs_run_with_the_container_uuid_on_their_log_lines(
        workers: ContainerWorkers) -> None:
    seen: list[str] = []

    def job() -> None:
        record = logging.LogRecord("t", logging.INFO, __file__, 1, "m", None, None)
        berth_log.ContainerFilter().filter(record)
        seen.append(record.container)  # type: ignore[attr-defined]

    workers.submit("0d9a-uuid", job)
    workers.submit("other-uuid", job)
    assert workers.wait_idle(WAIT)
    assert sorted(seen) == ["0d9a-uuid", "other-uuid"]


def test_busy_pending_and_wait_idle(workers: ContainerWorkers) -> None:
    release = threading.Event()
    assert workers.pending() == 0 and workers.wait_idle(0)
    workers.submit("u1", release.wait, WAIT)
    workers.submit("u2", release.wait, WAIT)
    assert workers.busy("u1") and workers.busy("u2") and not workers.busy("u3")
    assert workers.pending() == 2
    assert not workers.wait_idle(0.05)
    release.set()
    assert workers.wait_idle(WAIT)
    assert not workers.busy("u1")


def test_submit_after_stop_is_refused() -> None:
    workers = ContainerWorkers(max_workers=1)
    workers.stop()
    with pytest.raises(RuntimeError):
        workers.submit("u1", lambda: None)


def test_a_key_can_be_reused_after_it_went_idle(workers: ContainerWorkers) -> None:
    ran: list[int] = []
    workers.submit("u1", ran.append, 1)
    assert workers.wait_idle(WAIT)
    workers.submit("u1", ran.append, 2)
    assert workers.wait_idle(WAIT)
    assert ran == [1, 2]


def test_a_call_deferred_while_a_flow_runs_happens_once_when_it_ends(
        workers: ContainerWorkers) -> None:
    inside, release = threading.Event(), threading.Event()
    order: list[str] = []

    def flow() -> None:
        inside.set()
        release.wait(WAIT)
        order.append("flow done")

    workers.submit_flow("u1", flow)
    assert inside.wait(WAIT)
    assert workers.defer_while_owned("u1", lambda: order.append("first sync"))
    assert workers.defer_while_owned("u1", lambda: order.append("latest sync"))
    assert not workers.defer_while_owned("u2", lambda: order.append("other"))
    release.set()
    assert workers.wait_idle(WAIT)
    assert order == ["flow done", "latest sync"]
    assert not workers.defer_while_owned("u1", lambda: None)    # idle again


def test_a_plain_job_does_not_defer_syncs(workers: ContainerWorkers) -> None:
    inside, release = threading.Event(), threading.Event()
    workers.submit("u1", lambda: (inside.set(), release.wait(WAIT)))
    assert inside.wait(WAIT)
    assert not workers.defer_while_owned("u1", lambda: None)    # logs, stats: sync now
    release.set()
    assert workers.wait_idle(WAIT)


def test_a_deferred_call_runs_after_each_owning_flow_and_before_the_next_job(
        workers: ContainerWorkers) -> None:
    inside, release = threading.Event(), threading.Event()
    order: list[str] = []

    def first() -> None:
        inside.set()
        release.wait(WAIT)
        order.append("first")

    workers.submit_flow("u1", first)
    workers.submit("u1", lambda: order.append("plain"))
    assert inside.wait(WAIT)
    workers.defer_while_owned("u1", lambda: order.append("sync"))
    release.set()
    assert workers.wait_idle(WAIT)
    assert order == ["first", "sync", "plain"]


def test_a_job_whose_thread_cannot_start_leaves_the_container_free(
        workers: ContainerWorkers, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    with monkeypatch.context() as m:
        m.setattr(threading.Thread, "start", refuse)
        with pytest.raises(RuntimeError):
            workers.submit("c1", lambda: None)
    assert not workers.busy("c1")
    ran = threading.Event()
    workers.submit("c1", ran.set)
    assert ran.wait(5)
