"""EventWatcher: events become ContainerEvents; a stream that ends asks for a relist and
is reopened with back-off and ``since`` = the last event seen."""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Iterator
from time import time_ns

import pytest
from support.metrics import sample

from berth.compute.pleg.events import ContainerEvent, EventSource
from berth.compute.pleg.watcher import Backoff, EventWatcher
from berth.runtime import base as rt
from berth.runtime.base import EventKind, RuntimeEvent


def ev(nano: int, cid: str = "c1", uuid: str | None = "u1", action: str = "die") -> RuntimeEvent:
    kind = {"die": EventKind.DIED, "start": EventKind.STARTED,
            "destroy": EventKind.REMOVED}.get(action, EventKind.CHANGED)
    return RuntimeEvent(container_id=cid, uuid=uuid, kind=kind, action=action,
                        at=dt.datetime.fromtimestamp(nano / 1e9, dt.UTC),
                        at_nano=nano)


class FakeStream(Iterator[RuntimeEvent]):
    """Yields ``events``, then ends, or with ``hold`` blocks until closed (as a live
    stream does)."""

    def __init__(self, events: list[RuntimeEvent], hold: bool = False) -> None:
        self._events = list(events)
        self._hold = hold
        self.closed = threading.Event()

    def __next__(self) -> RuntimeEvent:
        if self._events and not self.closed.is_set():
            return self._events.pop(0)
        if self._hold:
            self.closed.wait(10)
        raise StopIteration

    def close(self) -> None:
        self.closed.set()


class EventsRuntime:
    """``events()`` hands out the scripted streams (or raises) in order, recording
    ``since_nano``; once the script is used up it returns held, empty streams."""

    def __init__(self, script: list[FakeStream | Exception]) -> None:
        self.script = list(script)
        self.since_args: list[int | None] = []
        self.opened: list[FakeStream] = []
        self.calls = threading.Semaphore(0)

    def events(self, since_nano: int | None = None) -> FakeStream:
        self.since_args.append(since_nano)
        self.calls.release()
        item = self.script.pop(0) if self.script else FakeStream([], hold=True)
        if isinstance(item, Exception):
            raise item
        self.opened.append(item)
        return item


class Collector:
    def __init__(self) -> None:
        self.events: list[ContainerEvent] = []
        self.gaps = 0

    def emit(self, event: ContainerEvent) -> bool:
        self.events.append(event)
        return True

    def gap(self) -> None:
        self.gaps += 1


def watcher_for(runtime: EventsRuntime, out: Collector, **kw) -> EventWatcher:  # type: ignore[no-untyped-def]
    return EventWatcher(runtime, out.emit, out.gap, clock=lambda: 5.0,  # type: ignore[arg-type]
                        backoff=Backoff(0.0, 0.0), **kw)


def test_follow_once_emits_berth_events_and_remembers_the_last_one() -> None:
    runtime = EventsRuntime([FakeStream([ev(10, action="start"), ev(20, cid="x", uuid=None),
                                         ev(30, action="die")])])
    out = Collector()
    w = watcher_for(runtime, out)
    assert w.follow_once() is True
    assert [(e.uuid, e.container_id, e.kind, e.source, e.action, e.at) for e in out.events] == [
        ("u1", "c1", EventKind.STARTED, EventSource.WATCH, "start", 5.0),
        ("u1", "c1", EventKind.DIED, EventSource.WATCH, "die", 5.0)]
    assert w.since_nano == 30
    assert runtime.opened[0].closed.is_set()
    assert w.connected is False


def test_a_die_carries_its_exit_code_but_not_after_an_oom() -> None:
    """After an "oom" the sync must wait for the inspect (OOMKilled), so the die that
    follows carries no exit code; the next life of the container is judged afresh."""
    def died(nano: int, code: int = 137) -> RuntimeEvent:
        e = ev(nano)
        return RuntimeEvent(e.container_id, e.uuid, e.kind, e.action, e.at, e.at_nano,
                            exit_code=code)

    runtime = EventsRuntime([FakeStream([died(10), ev(20, action="oom"), died(30),
                                         ev(40, action="start"), died(50, 0)])])
    out = Collector()
    watcher_for(runtime, out).follow_once()
    assert [(e.action, e.exit_code) for e in out.events] == [
        ("die", 137), ("oom", None), ("die", None), ("start", None), ("die", 0)]


def test_reconnect_resumes_from_the_last_event_and_drops_its_replay() -> None:
    first = FakeStream([ev(10, action="start"), ev(30, action="kill"), ev(30, action="die")])
    # The engine's ``since`` is inclusive: the events at 30 come again, then new ones.
    second = FakeStream([ev(30, action="kill"), ev(30, action="die"),
                         ev(30, cid="c2", uuid="u2", action="die"), ev(40, action="destroy")])
    runtime = EventsRuntime([first, second])
    out = Collector()
    w = watcher_for(runtime, out, since_nano=5)
    w.follow_once()
    w.follow_once()
    assert runtime.since_args == [5, 30]
    assert [(e.uuid, e.action) for e in out.events] == [
        ("u1", "start"), ("u1", "kill"), ("u1", "die"), ("u2", "die"), ("u1", "destroy")]
    assert w.since_nano == 40


def test_an_engine_that_cannot_be_reached_is_not_a_connection() -> None:
    runtime = EventsRuntime([rt.RuntimeUnavailable(reason="no socket")])
    out = Collector()
    w = watcher_for(runtime, out, since_nano=7)
    assert w.follow_once() is False
    assert w.connections == 0
    assert out.events == []
    assert w.since_nano == 7


def test_the_thread_relists_and_reconnects_after_each_end_until_stopped() -> None:
    runtime = EventsRuntime([
        FakeStream([ev(10)]),                       # ends: dockerd went away
        rt.RuntimeUnavailable(reason="restarting"),  # cannot reconnect yet
        FakeStream([ev(20, action="start")]),         # back, ends again
    ])                                               # then a held (live) stream
    out = Collector()
    w = watcher_for(runtime, out)
    w.start()
    for _ in range(4):
        assert runtime.calls.acquire(timeout=5)
    assert runtime.since_args == [None, 10, 10, 20]
    # every end and every failed open asks for a relist, and so does the first open
    # after a failed one (the engine may have restarted meanwhile)
    for _ in range(100):
        if out.gaps == 4:
            break
        threading.Event().wait(0.01)
    assert out.gaps == 4
    w.stop()
    assert runtime.opened[-1].closed.is_set()
    assert [e.action for e in out.events] == ["die", "start"]


def test_disconnect_closes_the_stream_and_the_watcher_reconnects() -> None:
    live = FakeStream([ev(10)], hold=True)
    runtime = EventsRuntime([live])
    out = Collector()
    w = watcher_for(runtime, out)
    w.start()
    assert runtime.calls.acquire(timeout=5)
    for _ in range(100):
        if w.connected and out.events:
            break
        threading.Event().wait(0.01)
    w.disconnect()
    assert runtime.calls.acquire(timeout=5)    # reopened
    assert runtime.since_args == [None, 10]
    assert out.gaps == 1
    w.stop()
    w.stop()                                   # safe twice


def test_backoff_doubles_up_to_the_cap_and_resets() -> None:
    b = Backoff(0.2, 5.0)
    assert [b.next_delay() for _ in range(7)] == pytest.approx([0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0])
    b.reset()
    assert b.next_delay() == 0.2


def test_reopening_the_stream_counts_a_reconnect_and_each_event_its_lag() -> None:
    now = time_ns()
    runtime = EventsRuntime([FakeStream([ev(now - 2_000_000_000, action="start")]),
                             FakeStream([ev(now - 1_000_000_000, action="die")])])
    out = Collector()
    w = watcher_for(runtime, out)
    reconnects = sample("berth_pleg_stream_reconnects_total")
    lagged = sample("berth_pleg_event_lag_seconds_count")
    slow = sample("berth_pleg_event_lag_seconds_bucket", le="0.5")
    w.follow_once()
    assert sample("berth_pleg_stream_reconnects_total") == reconnects   # the first open
    assert sample("berth_pleg_stream_connected") == 0                    # it has ended
    w.follow_once()
    assert sample("berth_pleg_stream_reconnects_total") == reconnects + 1
    assert sample("berth_pleg_event_lag_seconds_count") == lagged + 2
    # both events were a second or more old when they arrived
    assert sample("berth_pleg_event_lag_seconds_bucket", le="0.5") == slow
