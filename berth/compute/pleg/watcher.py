"""EventWatcher: a thread following the engine's event stream for berth's containers.

Timeline of one connection::

    open(since) ──► event, event, ... ──► stream ends (silently: socket closed, dockerd
        │                                  restarted, close() from stop)
        │ RuntimeDriverError                   │
        ▼                                      ▼
    on_gap() (relist) ◄────────────────────────┘
        │
        ▼
    wait back-off (0.2 s, doubling to 1 s; back to 0.2 s after a connection that
    delivered events or lasted a while) ──► open(since = last event's at_nano)
                                             (after failed opens: on_gap() again)

The engine's ``since`` is inclusive, so the last event seen comes again after a
reconnect; it is recognised (same nanosecond, container and action) and dropped.
Docker keeps only its last 256 events, and a gap may be longer than that: this is
why every end of the stream also asks for a relist.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from berth.compute.pleg.events import ContainerEvent, EventSource
from berth.metrics import catalog
from berth.runtime.base import (
    EventKind,
    Runtime,
    RuntimeDriverError,
    RuntimeEvent,
    RuntimeEventStream,
)

LOG = logging.getLogger(__name__)


class Backoff:
    """Exponential back-off: ``initial``, doubling up to ``cap``; :meth:`reset` after a
    success."""

    def __init__(self, initial: float = 0.2, cap: float = 5.0) -> None:
        self.initial = initial
        self.cap = cap
        self._next = initial

    def next_delay(self) -> float:
        delay = self._next
        self._next = min(self.cap, max(self._next * 2, self.initial))
        return delay

    def reset(self) -> None:
        self._next = self.initial


class EventWatcher:
    """Follow the event stream and hand each berth container event to ``emit``.

    ``emit`` must not block (the generator's queue drops when full). ``on_gap`` is
    called whenever events may have been missed (the stream ended, or could not be
    opened) and must not block either. ``since_nano`` is where the first connection
    starts (None: from now). ``start``/``stop`` may each be called once; ``stop`` is
    safe to call twice and before ``start``.
    """

    def __init__(self, runtime: Runtime, emit: Callable[[ContainerEvent], bool],
                 on_gap: Callable[[], None], *, since_nano: int | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 backoff: Backoff | None = None,
                 name: str = "pleg-event-watcher") -> None:
        self._runtime = runtime
        self._emit = emit
        self._on_gap = on_gap
        self._clock = clock
        self._backoff = backoff or Backoff()
        self._name = name
        self._since = since_nano
        self._seen_at_since: set[tuple[str, str]] = set()
        #: Containers the engine reported an "oom" for since their last start.
        self._oom_killed: set[str] = set()
        self._lock = threading.Lock()
        self._stream: RuntimeEventStream | None = None
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._failing = False
        self.connected = False
        self.connections = 0
        self.events_seen = 0

    @property
    def since_nano(self) -> int | None:
        """Where the next connection resumes: the last event's ``at_nano``."""
        return self._since

    def resume_from(self, since_nano: int | None) -> None:
        """Where the next connection starts (call before :meth:`start`)."""
        self._since = since_nano
        self._seen_at_since = set()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._follow_events, name=self._name,
                                        daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stopping.set()
        self.disconnect()
        if self._thread is not None:
            self._thread.join(timeout)

    def disconnect(self) -> None:
        """Close the current stream (the loop then relists and reconnects, unless stopping)."""
        with self._lock:
            stream = self._stream
        if stream is not None:
            stream.close()

    def healthy(self) -> bool:
        return self.connected

    def _follow_events(self) -> None:
        while not self._stopping.is_set():
            opened_at = self._clock()
            before = self.events_seen
            opened = self.follow_once()
            if self._stopping.is_set():
                break
            self._on_gap()
            lasted = self._clock() - opened_at
            if opened and (self.events_seen > before or lasted >= self._backoff.cap):
                self._backoff.reset()
            delay = self._backoff.next_delay()
            if opened:
                LOG.info("Docker event stream ended after %.1f s; relisting, reconnecting "
                         "in %.1f s from since=%s", lasted, delay, self._since)
            if self._stopping.wait(delay):
                break

    def follow_once(self) -> bool:
        """Open the stream at ``since_nano`` and follow it until it ends. False when it
        could not be opened (the engine is unreachable)."""
        try:
            stream = self._runtime.events(since_nano=self._since)
        except RuntimeDriverError as err:
            if not self._failing:
                LOG.warning("cannot follow Docker events (%s); retrying with back-off "
                            "(logged once until it recovers)", err.msg)
            self._failing = True
            return False
        if self._failing:
            # The engine was unreachable, perhaps restarted: what it did before this
            # connection (containers it restarted, or that died with it) may not all
            # come as events, so the containers are listed again now, not at the next
            # periodic relist.
            LOG.info("following Docker events again (since=%s); relisting", self._since)
            self._on_gap()
        self._failing = False
        with self._lock:
            self._stream = stream
        if self._stopping.is_set():   # stop() ran between events() and here
            stream.close()
        self.connected = True
        self.connections += 1
        catalog.PLEG_STREAM_CONNECTED.set(1)
        if self.connections > 1:
            catalog.PLEG_STREAM_RECONNECTS.inc()
        try:
            for event in stream:
                self._handle(event)
        except RuntimeDriverError as err:   # the contract says silent end; be lenient
            LOG.info("Docker event stream failed: %s", err.msg)
        finally:
            self.connected = False
            catalog.PLEG_STREAM_CONNECTED.set(0)
            with self._lock:
                self._stream = None
            stream.close()
        return True

    def _handle(self, event: RuntimeEvent) -> None:
        key = (event.container_id, event.action)
        if self._since is not None:
            if event.at_nano < self._since:
                return
            if event.at_nano == self._since and key in self._seen_at_since:
                return    # the inclusive ``since`` replayed the last event seen
        if self._since is None or event.at_nano > self._since:
            self._since = event.at_nano
            self._seen_at_since = set()
        self._seen_at_since.add(key)
        self.events_seen += 1
        catalog.observe_event_lag(event.at_nano)
        if not event.uuid:
            return
        self._emit(ContainerEvent(uuid=event.uuid, container_id=event.container_id,
                                  kind=event.kind, source=EventSource.WATCH,
                                  at=self._clock(), action=event.action,
                                  engine_at_ns=event.at_nano,
                                  exit_code=self._exit_code(event)))

    def _exit_code(self, event: RuntimeEvent) -> int | None:
        """A die's exit code, for the sync to write Stopped before its inspect; None
        after an "oom" (Docker's comes before the die): then Stopped waits for the
        inspect, so that it comes with the OOMKilled reason, never without it."""
        cid = event.container_id
        if event.action == "oom":
            self._oom_killed.add(cid)
        elif (event.kind in (EventKind.DIED, EventKind.STARTED, EventKind.REMOVED)
              and cid in self._oom_killed):
            self._oom_killed.discard(cid)
            return None
        return event.exit_code
