"""The simulated engine's event stream: every open stream gets each event, and a
stream opened ``since`` a time first gets the recent events from then (a bounded
history, as Docker keeps one)."""

from __future__ import annotations

import collections
import queue
import threading

from berth.runtime.base import RuntimeEvent

#: Events kept for streams opened with ``since_nano`` (Docker keeps 256 by default).
HISTORY = 256


class SimulatedEventStream:
    """One open stream: iterating blocks until an event comes or ``close()`` is called
    (from any thread, safe twice), which ends the iteration."""

    def __init__(self, hub: EventHub) -> None:
        self._hub = hub
        self._queue: queue.SimpleQueue[RuntimeEvent | None] = queue.SimpleQueue()
        self._closed = False

    def put(self, event: RuntimeEvent | None) -> None:
        self._queue.put(event)

    def __iter__(self) -> SimulatedEventStream:
        return self

    def __next__(self) -> RuntimeEvent:
        if self._closed:
            raise StopIteration
        event = self._queue.get()
        if event is None:
            self._closed = True
            raise StopIteration
        return event

    def close(self) -> None:
        self._hub.unsubscribe(self)
        self._queue.put(None)


class EventHub:
    """Fans the engine's events out to its open streams."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._streams: list[SimulatedEventStream] = []
        self._history: collections.deque[RuntimeEvent] = collections.deque(maxlen=HISTORY)

    def subscribe(self, since_nano: int | None) -> SimulatedEventStream:
        stream = SimulatedEventStream(self)
        with self._lock:
            if since_nano is not None:
                for event in self._history:
                    if event.at_nano >= since_nano:
                        stream.put(event)
            self._streams.append(stream)
        return stream

    def unsubscribe(self, stream: SimulatedEventStream) -> None:
        with self._lock:
            if stream in self._streams:
                self._streams.remove(stream)

    def publish(self, event: RuntimeEvent) -> None:
        with self._lock:
            self._history.append(event)
            streams = list(self._streams)
        for stream in streams:
            stream.put(event)

    def close_all(self) -> None:
        with self._lock:
            streams, self._streams = self._streams, []
        for stream in streams:
            stream.put(None)
