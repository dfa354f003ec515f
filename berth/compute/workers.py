"""ContainerWorkers: the agent's bounded pool, one action at a time per container.

Each RPC cast becomes a job keyed by the container's uuid. Jobs with different keys
run in parallel on at most ``max_workers`` threads; jobs with the same key run one
after the other, in the order they arrived (a stop queued before a delete runs
first). A waiting job never holds a thread: the queue of each key lives here, and
only its head is on the pool. This is what Zun's per-container lock meant, without
parking a green thread on the lock.

Timeline of one key::

    submit(a) ──► a runs ────────► a done ─► b runs ──► b done ─► key idle
    submit(b) ──► b queued ───────┘

A job submitted with ``submit_flow`` owns the container's state while it runs (it
holds a task_state and ends by writing what the engine says). The agent asks
``defer_while_owned`` before it syncs an event: during such a job the sync would find
the task and skip, and an event that came after the flow's own inspect would be lost,
so the sync waits and runs when the job ends (the latest one per key).
"""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from berth.common.log import container_context
from berth.common.threads import ElasticThreadPool

LOG = logging.getLogger(__name__)


class ContainerWorkers:
    def __init__(self, max_workers: int) -> None:
        self._pool = ElasticThreadPool(max_workers, "container-worker")
        self._queues: dict[str, collections.deque[_Job]] = {}
        self._owned: set[str] = set()          # keys whose running job owns the state
        self._after_owned: dict[str, Callable[[], None]] = {}
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._stopped = False

    def submit(self, key: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        """Queue ``fn(*args, **kwargs)`` behind the other jobs of ``key``."""
        self._submit(_Job(fn, args, kwargs, owns_state=False), key)

    def submit_flow(self, key: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        """``submit`` for a flow that owns the container's state while it runs."""
        self._submit(_Job(fn, args, kwargs, owns_state=True), key)

    def _submit(self, job: _Job, key: str) -> None:
        with self._lock:
            if self._stopped:
                raise RuntimeError("ContainerWorkers is stopped")
            queue = self._queues.get(key)
            if queue is not None:
                queue.append(job)
                return
            self._queues[key] = collections.deque()
            if job.owns_state:
                self._owned.add(key)
        try:
            self._pool.submit(self._run, key, job)
        except BaseException:   # no thread could start: the key must not stay busy
            with self._lock:
                self._queues.pop(key, None)
                self._owned.discard(key)
            raise

    def _run(self, key: str, job: _Job) -> None:
        while True:
            with container_context(key):
                try:
                    job.fn(*job.args, **job.kwargs)
                except Exception:  # a thread boundary: log and go on
                    LOG.exception("unexpected error in %s", getattr(job.fn, "__name__", job.fn))
            with self._lock:
                self._owned.discard(key)
                after = self._after_owned.pop(key, None)
            if after is not None:
                _call_quietly(after)
            with self._lock:
                queue = self._queues[key]
                if not queue:
                    del self._queues[key]
                    self._idle.notify_all()
                    return
                job = queue.popleft()
                if job.owns_state:
                    self._owned.add(key)

    def defer_while_owned(self, key: str, then: Callable[[], None]) -> bool:
        """When a ``submit_flow`` job of ``key`` is running, call ``then`` once it ends
        (replacing an earlier ``then`` of the key) and return True; else False."""
        with self._lock:
            if key not in self._owned:
                return False
            self._after_owned[key] = then
            return True

    def busy(self, key: str) -> bool:
        with self._lock:
            return key in self._queues

    def pending(self) -> int:
        """Keys with work running or queued."""
        with self._lock:
            return len(self._queues)

    def wait_idle(self, timeout: float | None = None) -> bool:
        with self._lock:
            return self._idle.wait_for(lambda: not self._queues, timeout)

    def stop(self, wait: bool = True) -> None:
        with self._lock:
            self._stopped = True
        self._pool.shutdown(wait=wait, cancel_futures=not wait)


@dataclass(frozen=True, slots=True)
class _Job:
    fn: Callable[..., Any]
    args: tuple
    kwargs: dict
    owns_state: bool


def _call_quietly(fn: Callable[[], None]) -> None:
    try:
        fn()
    except Exception:  # a thread boundary: log and go on
        LOG.exception("a call deferred until a flow ended failed")
