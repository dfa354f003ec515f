"""PeriodicScheduler: runs each registered task every ``spacing`` seconds (plus a
little jitter, so that a fleet of agents does not hit the database in lock-step),
never two runs of one task at once, and on its own small pool, so that a slow task
delays neither the others nor the RPC workers.

A task that fails is logged once when it starts failing and once when it recovers
(not every cycle), as Home Assistant's update coordinator does.

(futurist.periodics does the same, but importing it loads eventlet when installed,
which berth does not otherwise use.)
"""

from __future__ import annotations

import heapq
import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from berth.common.exceptions import BerthError
from berth.common.threads import ElasticThreadPool
from berth.metrics import catalog

LOG = logging.getLogger(__name__)


@dataclass(slots=True)
class _Task:
    name: str
    fn: Callable[[], object]
    spacing: float
    jitter: float
    failing: bool = False
    running: bool = False
    runs: int = 0
    last_ok: float | None = None
    last_error: str | None = field(default=None)


class PeriodicScheduler:
    #: A task never has two runs at once, so with a thread for each task (the agent
    #: has six) no task waits for another: a heartbeat is never late because Docker
    #: or Placement holds the others. Idle threads retire (ElasticThreadPool).
    def __init__(self, max_workers: int = 8, clock: Callable[[], float] = time.monotonic,
                 rng: random.Random | None = None) -> None:
        self._clock = clock
        self._rng = rng or random.Random()
        self._tasks: dict[str, _Task] = {}
        self._heap: list[tuple[float, int, str]] = []
        self._seq = 0
        self._cond = threading.Condition()
        self._pool = ElasticThreadPool(max_workers, "periodic")
        self._thread: threading.Thread | None = None
        self._stopping = False

    def add(self, name: str, fn: Callable[[], object], spacing: float, *,
            jitter: float = 0.1, run_immediately: bool = True) -> None:
        """Run ``fn`` every ``spacing`` s (+ up to ``jitter`` × spacing). A spacing <= 0
        disables the task."""
        if spacing <= 0:
            LOG.info("periodic task %s is disabled", name)
            return
        with self._cond:
            self._tasks[name] = _Task(name, fn, spacing, jitter)
            first = self._clock() + (0 if run_immediately else self._next_delay(name))
            self._push(first, name)
            self._cond.notify()

    def _next_delay(self, name: str) -> float:
        task = self._tasks[name]
        return task.spacing * (1 + self._rng.uniform(0, task.jitter))

    def _push(self, at: float, name: str) -> bool:
        """Queue ``name``'s run at ``at``; True when it is now the first run due (the
        scheduler's thread, waiting for the one due before, must look again)."""
        self._seq += 1
        heapq.heappush(self._heap, (at, self._seq, name))
        return self._heap[0][1] == self._seq

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="periodic-scheduler",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify()
        if self._thread:
            self._thread.join(timeout=5)
        self._pool.shutdown(wait=False, cancel_futures=True)

    def run_now(self, name: str) -> None:
        """Run ``name`` as soon as possible (e.g. after a reconnect)."""
        with self._cond:
            if name in self._tasks:
                self._push(self._clock(), name)
                self._cond.notify()

    def _loop(self) -> None:
        with self._cond:
            while not self._stopping:
                if not self._heap:
                    self._cond.wait()
                    continue
                at, _, name = self._heap[0]
                delay = at - self._clock()
                if delay > 0:
                    self._cond.wait(timeout=delay)
                    continue
                heapq.heappop(self._heap)
                task = self._tasks.get(name)
                if task is None:
                    continue
                if task.running:         # still busy: try again one spacing later
                    self._push(self._clock() + self._next_delay(name), name)
                    continue
                task.running = True
                self._pool.submit(self._run, task)

    def _run(self, task: _Task) -> None:
        began = time.perf_counter()
        try:
            task.fn()
        except Exception as err:  # a loop boundary
            catalog.PERIODIC_FAILURES.labels(task.name).inc()
            task.last_error = str(err)
            if not task.failing:
                if isinstance(err, BerthError):   # a service away: its message says it
                    LOG.error("periodic task %s failed: %s (logged once until it "
                              "recovers)", task.name, err.msg)
                else:
                    LOG.exception("periodic task %s failed (logged once until it "
                                  "recovers)", task.name)
            task.failing = True
        else:
            if task.failing:
                LOG.info("periodic task %s recovered", task.name)
            task.failing = False
            task.last_ok = self._clock()
        finally:
            catalog.PERIODIC_RUNS.labels(task.name).inc()
            catalog.PERIODIC_SECONDS.labels(task.name).observe(time.perf_counter() - began)
            with self._cond:
                task.running = False
                task.runs += 1
                # The scheduler's thread is woken only when this run comes before the
                # one it waits for: an agent's tasks run a minute apart, so mostly not
                # (a run of a task doing nothing cost 170 us of CPU with that wake, 145
                # without: docs/benchmarks.md, P15).
                if not self._stopping and self._push(
                        self._clock() + self._next_delay(task.name), task.name):
                    self._cond.notify()

    def status(self) -> dict[str, dict[str, object]]:
        with self._cond:
            return {t.name: {"runs": t.runs, "failing": t.failing, "last_ok": t.last_ok,
                             "last_error": t.last_error} for t in self._tasks.values()}
