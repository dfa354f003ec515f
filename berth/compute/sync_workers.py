"""SyncWorkers: one state sync per container at a time, at most one waiting, the latest
event wins (kubelet's pod workers, for state syncs).

PLEG's events come here from the agent (``agent._on_event``), which drops those a
recorded inspect already saw and holds back those of a running flow. A sync re-reads
the engine, so two queued events of one container are worth one sync: a newer event
replaces the waiting one instead of queueing behind it. Timeline of one uuid::

    submit(e1) ──► sync(e1) runs ─────────────────► done ─► sync(e3) ─► done ─► idle
    submit(e2) ──► e2 waits ─┐
    submit(e3) ──► e3 replaces e2 (e2 is dropped: e3's sync sees what e2's would have)

Different uuids sync in parallel on at most ``max_workers`` threads; a waiting event
holds no thread. These are separate from the action workers (``workers.py``) so that
a burst of events never delays a user's action; the two never trample each other
because every sync write is a compare-and-swap on the task_state it read.

``sync`` may raise: the error is logged with the uuid and ``on_failure(event)`` is
called (the agent asks PLEG to re-emit the container at the next relist).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from berth.common.log import container_context
from berth.common.threads import ElasticThreadPool
from berth.compute.pleg.events import ContainerEvent
from berth.runtime.base import RuntimeDriverError

LOG = logging.getLogger(__name__)


class SyncWorkers:
    def __init__(self, sync: Callable[[ContainerEvent], object], max_workers: int = 4,
                 on_failure: Callable[[ContainerEvent], None] | None = None) -> None:
        self._sync = sync
        self._on_failure = on_failure
        self._pool = ElasticThreadPool(max_workers, "state-sync")
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._running: set[str] = set()
        self._pending: dict[str, ContainerEvent] = {}
        self._stopped = False
        self.syncs = 0
        self.coalesced = 0
        self.failures = 0

    def submit(self, event: ContainerEvent) -> None:
        """Sync ``event.uuid`` now, or after its running sync (replacing any waiting one).
        Ignored once stopped."""
        with self._lock:
            if self._stopped:
                return
            if event.uuid in self._running:
                if event.uuid in self._pending:
                    self.coalesced += 1
                self._pending[event.uuid] = event
                return
            self._running.add(event.uuid)
        try:
            self._pool.submit(self._run, event)
        except BaseException:   # no thread could start: the uuid must not stay busy
            with self._lock:
                self._running.discard(event.uuid)
            raise

    def _run(self, event: ContainerEvent) -> None:
        while True:
            with container_context(event.uuid):
                self._sync_one(event)
            with self._lock:
                following = self._pending.pop(event.uuid, None)
                if following is None or self._stopped:
                    self._running.discard(event.uuid)
                    self._idle.notify_all()
                    return
            event = following

    def _sync_one(self, event: ContainerEvent) -> None:
        try:
            self._sync(event)
        except Exception as err:
            with self._lock:
                self.failures += 1
            if isinstance(err, RuntimeDriverError):   # the engine is away: expected
                LOG.warning("state sync after a %s event (%s) failed: %s; it is retried "
                            "at the next relist", event.kind, event.source, err.msg)
            else:
                LOG.exception("state sync after a %s event (%s) failed; it is retried at "
                              "the next relist", event.kind, event.source)
            if self._on_failure is not None:
                self._on_failure(event)
        finally:
            with self._lock:
                self.syncs += 1

    def depth(self) -> int:
        """Containers with a sync running or waiting (for /metrics)."""
        with self._lock:
            return len(self._running) + len(self._pending)

    def busy(self, uuid: str) -> bool:
        with self._lock:
            return uuid in self._running

    def wait_idle(self, timeout: float | None = None) -> bool:
        with self._lock:
            return self._idle.wait_for(lambda: not self._running, timeout)

    def stop(self, wait: bool = True) -> None:
        """Drop waiting events and let running syncs finish (when ``wait``). Safe twice."""
        with self._lock:
            self._stopped = True
            self._pending.clear()
        self._pool.shutdown(wait=wait, cancel_futures=True)
