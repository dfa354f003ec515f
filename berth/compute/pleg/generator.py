"""EventGenerator: PLEG's queue and threads, with ``start``/``stop``/``healthy``.

Three named threads::

    pleg-event-watcher   EventWatcher: the engine's event stream ─┐
    pleg-relist          Relister, every relist_period, and at    ├─► EventQueue
                         once when the watcher reports a gap      ┘      │
    pleg-dispatch        hands each queued event to ``handler``  ◄────────┘

The queue is bounded: when it is full a new event is dropped and counted (never
blocking the watcher, which would make Docker drop *us* as a slow listener); the
relist makes up for it, because a dropped relist event keeps its old record.

Health (kubelet's rule): the last good relist is at most ``healthy_threshold`` old.
A broken event stream alone is not unhealthy: the relist still sees every change,
only later.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from berth.compute.pleg.events import ContainerEvent
from berth.compute.pleg.relist import Relister
from berth.compute.pleg.watcher import Backoff, EventWatcher
from berth.metrics import catalog
from berth.runtime.base import Runtime

LOG = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PlegSettings:
    relist_period: float = 10.0        # seconds between two relists (<= 0: only on gaps)
    healthy_threshold: float = 60.0    # the last good relist may be this old, at most
    queue_size: int = 1000
    reconnect_initial: float = 0.2     # back-off of the event stream's reconnects
    #: At most 1 s between two attempts: opening a local engine's socket costs next to
    #: nothing, and every second waited after the engine is back is a second the rows
    #: may lag behind it (with a 5 s cap, an outage of 5 s could add up to 5 s more).
    reconnect_max: float = 1.0


#: Seconds the dispatcher waits for an event before it looks whether it should stop
#: (``stop`` wakes it at once).
_DISPATCH_IDLE_WAKE = 60.0


class EventQueue:
    """A bounded FIFO of :class:`ContainerEvent` that drops (and counts) when full."""

    def __init__(self, maxsize: int) -> None:
        self._queue: queue.Queue[ContainerEvent | None] = queue.Queue(maxsize)
        self._lock = threading.Lock()
        self.dropped = 0
        self.accepted = 0

    def put(self, event: ContainerEvent) -> bool:
        """Queue ``event``; False (and counted in ``dropped``) when the queue is full."""
        try:
            self._queue.put_nowait(event)
        except queue.Full:
            catalog.PLEG_EVENTS_DROPPED.inc()
            with self._lock:
                self.dropped += 1
                dropped = self.dropped
            if dropped == 1 or dropped % 100 == 0:
                LOG.warning("PLEG queue full: dropped the %s event of container %s (%d "
                            "dropped so far); the next relist makes up for it",
                            event.kind, event.uuid, dropped)
            return False
        with self._lock:
            self.accepted += 1
        catalog.PLEG_EVENTS.labels(event.source.value).inc()
        return True

    def get(self, timeout: float | None = None) -> ContainerEvent | None:
        """The next event; None on timeout or when :meth:`wake` was called."""
        try:
            return self._queue.get(timeout=timeout)
        except queue.Empty:
            return None

    def wake(self) -> None:
        """Make one blocked :meth:`get` return None (used by stop)."""
        try:
            self._queue.put_nowait(None)
        except queue.Full:
            pass   # the getter is not blocked then

    def qsize(self) -> int:
        return self._queue.qsize()


class EventGenerator:
    """Watch + relist, feeding ``handler`` (which must not block for long: the agent's
    ``SyncWorkers.submit``). ``clock`` is monotonic seconds; ``wall_clock_ns`` gives the
    engine-comparable time the event stream starts from."""

    def __init__(self, runtime: Runtime, host: str,
                 handler: Callable[[ContainerEvent], None],
                 settings: PlegSettings = PlegSettings(), *,
                 clock: Callable[[], float] = time.monotonic,
                 wall_clock_ns: Callable[[], int] = time.time_ns) -> None:
        self.settings = settings
        self._handler = handler
        self._clock = clock
        self._wall_clock_ns = wall_clock_ns
        self.queue = EventQueue(settings.queue_size)
        self.relister = Relister(runtime, host, self.queue.put, clock)
        self.watcher = EventWatcher(
            runtime, self.queue.put, self.relist_soon, clock=clock,
            backoff=Backoff(settings.reconnect_initial, settings.reconnect_max))
        self._relist_wanted = threading.Event()
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []
        self._started_at: float | None = None

    def start(self) -> None:
        """Record the baseline listing, then start the threads. The event stream starts
        from just before the baseline, so nothing between the two is missed."""
        self._started_at = self._clock()
        self.watcher.resume_from(self._wall_clock_ns())
        self.relister.relist()
        self.watcher.start()
        for target, name in ((self._relist_periodically, "pleg-relist"),
                             (self._dispatch_events, "pleg-dispatch")):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)
        LOG.info("PLEG started: following Docker events, relisting every %.0f s",
                 self.settings.relist_period)

    def stop(self, timeout: float = 5.0) -> None:
        """Stop all three threads. Safe to call twice and before start."""
        self._stopping.set()
        self.watcher.stop(timeout)
        self._relist_wanted.set()
        self.queue.wake()
        for thread in self._threads:
            thread.join(timeout)
        self._threads = []

    def relist_soon(self) -> None:
        """Ask the relist thread for a relist now (the watcher calls this on a gap)."""
        self._relist_wanted.set()

    def reinspect(self, event: ContainerEvent) -> None:
        """A sync of ``event`` failed: have the next relist emit it again."""
        self.relister.reinspect(event.container_id, event.uuid)

    def healthy(self) -> bool:
        """The last good relist is recent enough (or PLEG started recently enough)."""
        last = self.relister.last_good or self._started_at
        if last is None:
            return False
        return self._clock() - last <= self.settings.healthy_threshold

    def live(self) -> bool:
        """Healthy and following the event stream: the database is at most about a
        second behind the engine, so a read need not ask the engine."""
        return self.healthy() and self.watcher.healthy()

    def status(self) -> dict[str, object]:
        """Figures for /metrics and logs."""
        last = self.relister.last_good
        return {
            "healthy": self.healthy(),
            "watching": self.watcher.healthy(),
            "stream_connections": self.watcher.connections,
            "stream_events": self.watcher.events_seen,
            "relists": self.relister.relists,
            "relist_failures": self.relister.failures,
            "last_relist_age": None if last is None else self._clock() - last,
            "queued": self.queue.qsize(),
            "accepted": self.queue.accepted,
            "dropped": self.queue.dropped,
        }

    def _relist_periodically(self) -> None:
        period = self.settings.relist_period
        while not self._stopping.is_set():
            self._relist_wanted.wait(period if period > 0 else None)
            if self._stopping.is_set():
                break
            self._relist_wanted.clear()
            try:
                self.relister.relist()
            except Exception:
                LOG.exception("relist failed unexpectedly")

    def _dispatch_events(self) -> None:
        # Blocks until an event comes: ``stop`` wakes it (``EventQueue.wake``; when the
        # queue is full, the dispatcher is busy and sees ``_stopping`` after the event
        # in hand). An idle agent's dispatcher woke every second only to look: for
        # the hundred agents of the fleet bench (P15), 100 wakes a second. The long
        # timeout is a safety net.
        while not self._stopping.is_set():
            event = self.queue.get(timeout=_DISPATCH_IDLE_WAKE)
            if event is None:
                continue
            try:
                self._handler(event)
            except Exception:
                LOG.exception("could not hand on the %s event of container %s",
                              event.kind, event.uuid)
