"""PeriodicScheduler (berth/compute/periodic/scheduler.py): each task on its spacing,
one run of a task at a time, and no task held up by the others."""

from __future__ import annotations

import threading
import time

from support.berth_proc import wait_for
from support.metrics import sample

from berth.compute.periodic.scheduler import PeriodicScheduler


def test_a_heartbeat_keeps_beating_while_every_other_task_hangs() -> None:
    """The agent's six tasks: if five hang (Docker or Placement not answering), the
    heartbeat still runs on time, or the node would be reported down."""
    scheduler = PeriodicScheduler()
    gate = threading.Event()
    beats: list[float] = []
    for i in range(5):
        scheduler.add(f"hung_{i}", lambda: gate.wait(10), 0.01)
    scheduler.add("update_zun_service", lambda: beats.append(time.monotonic()), 0.01)
    scheduler.start()
    try:
        wait_for(lambda: len(beats) >= 10, 5, 0.005, what="ten heartbeats")
        assert all(scheduler.status()[f"hung_{i}"]["runs"] == 0 for i in range(5))
    finally:
        gate.set()
        scheduler.stop()


def test_a_task_never_runs_twice_at_once() -> None:
    scheduler = PeriodicScheduler()
    inside = 0
    most = 0
    lock = threading.Lock()

    def slow() -> None:
        nonlocal inside, most
        with lock:
            inside += 1
            most = max(most, inside)
        time.sleep(0.03)
        with lock:
            inside -= 1

    scheduler.add("slow", slow, 0.005)
    scheduler.start()
    try:
        wait_for(lambda: scheduler.status()["slow"]["runs"] >= 5, 5, 0.005,
                 what="five runs")
    finally:
        scheduler.stop()
    assert most == 1


def test_runs_and_failures_are_counted_per_task() -> None:
    scheduler = PeriodicScheduler()
    calls = 0

    def flaky() -> None:
        nonlocal calls
        calls += 1
        if calls % 2 == 0:
            raise RuntimeError("every second run fails")

    runs = sample("berth_periodic_task_runs_total", task="t_flaky")
    failures = sample("berth_periodic_task_failures_total", task="t_flaky")
    timed = sample("berth_periodic_task_duration_seconds_count", task="t_flaky")
    scheduler.add("t_flaky", flaky, 0.005)
    scheduler.start()
    try:
        wait_for(lambda: scheduler.status()["t_flaky"]["runs"] >= 4, 5, 0.005,
                 what="four runs")
    finally:
        scheduler.stop()
    # a run may still be ending after stop(): wait until the two counts agree
    wait_for(lambda: sample("berth_periodic_task_runs_total", task="t_flaky")
             == runs + scheduler.status()["t_flaky"]["runs"], 2, 0.005, what="runs counted")
    done = scheduler.status()["t_flaky"]["runs"]
    assert sample("berth_periodic_task_runs_total", task="t_flaky") == runs + done
    assert sample("berth_periodic_task_failures_total", task="t_flaky") == failures + done // 2
    assert sample("berth_periodic_task_duration_seconds_count", task="t_flaky") == timed + done


def test_only_a_run_due_first_wakes_the_scheduler() -> None:
    """A run queued after the one the scheduler's thread waits for need not wake it."""
    scheduler = PeriodicScheduler(clock=lambda: 100.0)
    assert scheduler._push(160.0, "inventory") is True      # alone: first due
    assert scheduler._push(190.0, "sync") is False           # after it
    assert scheduler._push(130.0, "expire") is True          # before it
    assert scheduler._push(130.0, "again") is False          # due with it, queued after


def test_a_task_run_sooner_than_the_waited_one_still_runs_on_time() -> None:
    """The scheduler waits for a task due in a minute; another, quick, task's next
    run comes first and must wake it."""
    scheduler = PeriodicScheduler()
    runs: list[float] = []
    scheduler.add("slow", lambda: None, 60.0, run_immediately=False)
    scheduler.add("quick", lambda: runs.append(time.monotonic()), 0.02, jitter=0.0)
    scheduler.start()
    try:
        wait_for(lambda: len(runs) >= 5, 5, 0.005, what="five quick runs")
    finally:
        scheduler.stop()
