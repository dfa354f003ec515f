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
"""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Callable
from typing import Any

from berth.common.log import container_context
from berth.common.threads import ElasticThreadPool

LOG = logging.getLogger(__name__)


class ContainerWorkers:
    def __init__(self, max_workers: int) -> None:
        self._pool = ElasticThreadPool(max_workers, "container-worker")
        self._queues: dict[str, collections.deque[tuple[Callable[..., Any], tuple, dict]]] = {}
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._stopped = False

    def submit(self, key: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        """Queue ``fn(*args, **kwargs)`` behind the other jobs of ``key``."""
        with self._lock:
            if self._stopped:
                raise RuntimeError("ContainerWorkers is stopped")
            queue = self._queues.get(key)
            if queue is not None:
                queue.append((fn, args, kwargs))
                return
            self._queues[key] = collections.deque()
        self._pool.submit(self._run, key, fn, args, kwargs)

    def _run(self, key: str, fn: Callable[..., Any], args: tuple, kwargs: dict) -> None:
        while True:
            with container_context(key):
                try:
                    fn(*args, **kwargs)
                except Exception:  # noqa: BLE001 - a thread boundary: log and go on
                    LOG.exception("unexpected error in %s", getattr(fn, "__name__", fn))
            with self._lock:
                queue = self._queues[key]
                if not queue:
                    del self._queues[key]
                    self._idle.notify_all()
                    return
                fn, args, kwargs = queue.popleft()

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
