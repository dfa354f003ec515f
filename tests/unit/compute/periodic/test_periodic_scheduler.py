"""PeriodicScheduler (berth/compute/periodic/scheduler.py): each task on its spacing,
one run of a task at a time, and no task held up by the others."""

from __future__ import annotations

import threading
import time

from support.berth_proc import wait_for

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
