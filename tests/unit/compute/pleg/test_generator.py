"""EventGenerator: the bounded queue, health from the last good relist, and the relist
catching up when the event stream breaks."""

from __future__ import annotations

import threading

from support.metrics import sample
from test_relist import FakeClock, ListingRuntime
from test_watcher import FakeStream, ev

from berth.compute.pleg.events import ContainerEvent, EventSource
from berth.compute.pleg.generator import EventGenerator, EventQueue, PlegSettings
from berth.runtime import base as rt
from berth.runtime.base import EventKind, RunState

HOST = "node1"


class PlegRuntime(ListingRuntime):
    """A listing plus one held event stream per connection."""

    def __init__(self) -> None:
        super().__init__()
        self.streams: list[FakeStream] = []
        self.since_args: list[int | None] = []
        self.opened = threading.Semaphore(0)
        self.next_events: list[rt.RuntimeEvent] = []

    def events(self, since_nano: int | None = None) -> FakeStream:
        self.since_args.append(since_nano)
        stream = FakeStream(self.next_events, hold=True)
        self.next_events = []
        self.streams.append(stream)
        self.opened.release()
        return stream


def event(uuid: str = "u1", kind: EventKind = EventKind.DIED) -> ContainerEvent:
    return ContainerEvent(uuid=uuid, container_id="c1", kind=kind, source=EventSource.WATCH,
                          at=0.0)


def test_a_full_queue_drops_and_counts() -> None:
    q = EventQueue(2)
    assert q.put(event("a")) and q.put(event("b"))
    assert q.put(event("c")) is False
    assert q.put(event("d")) is False
    assert (q.accepted, q.dropped, q.qsize()) == (2, 2, 2)
    first = q.get(timeout=0)
    assert first is not None and first.uuid == "a"
    assert q.put(event("e")) is True


def test_get_returns_none_on_timeout_and_on_wake() -> None:
    q = EventQueue(1)
    assert q.get(timeout=0) is None
    q.wake()
    assert q.get(timeout=0) is None


def test_healthy_means_a_recent_good_relist() -> None:
    engine = PlegRuntime()
    clock = FakeClock()
    gen = EventGenerator(engine, HOST, lambda e: None,  # type: ignore[arg-type]
                         PlegSettings(relist_period=0, healthy_threshold=30), clock=clock)
    assert gen.healthy() is False            # not started
    gen.relister.relist()
    assert gen.healthy() is True
    clock.now += 31
    assert gen.healthy() is False
    engine.fail_with = rt.RuntimeUnavailable(reason="down")
    gen.relister.relist()
    assert gen.healthy() is False            # a failed relist is not a good one
    engine.fail_with = None
    gen.relister.relist()
    assert gen.healthy() is True
    assert gen.status()["relist_failures"] == 1


def test_a_broken_stream_forces_a_relist_that_catches_up() -> None:
    engine = PlegRuntime()
    engine.put("c1", "u1", RunState.RUNNING)
    engine.next_events = [ev(2_000, action="start")]
    seen: list[ContainerEvent] = []
    got = threading.Semaphore(0)

    def handler(e: ContainerEvent) -> None:
        seen.append(e)
        got.release()

    gen = EventGenerator(engine, HOST, handler,  # type: ignore[arg-type]
                         PlegSettings(relist_period=3600, reconnect_initial=0.0,
                                      reconnect_max=0.0),
                         wall_clock_ns=lambda: 1_000)
    gen.start()
    try:
        assert engine.opened.acquire(timeout=5)
        assert got.acquire(timeout=5)          # the streamed "start"
        assert engine.since_args == [1_000]    # from just before the baseline relist
        # The container dies while the stream is broken: no event will ever say so.
        engine.put("c1", "u1", RunState.EXITED, exit_code=137)
        engine.streams[-1].close()
        assert got.acquire(timeout=5)
        assert engine.opened.acquire(timeout=5)
        assert [(e.uuid, e.kind, e.source) for e in seen] == [
            ("u1", EventKind.STARTED, EventSource.WATCH),
            ("u1", EventKind.DIED, EventSource.RELIST)]
        assert engine.since_args == [1_000, 2_000]
        assert gen.healthy()
    finally:
        gen.stop()
    assert all(s.closed.is_set() for s in engine.streams)
    gen.stop()


def test_a_failed_sync_is_emitted_again_by_the_next_relist() -> None:
    from berth.compute.sync_workers import SyncWorkers

    engine = PlegRuntime()
    engine.put("c1", "u1", RunState.EXITED, exit_code=137)
    attempts: list[ContainerEvent] = []

    def flaky_sync(e: ContainerEvent) -> None:
        attempts.append(e)
        if len(attempts) == 1:
            raise rt.RuntimeUnavailable(reason="inspect timed out")

    gen: EventGenerator
    workers = SyncWorkers(flaky_sync, on_failure=lambda e: gen.reinspect(e))
    gen = EventGenerator(engine, HOST, workers.submit,  # type: ignore[arg-type]
                         PlegSettings(relist_period=0))
    gen.relister.relist()                       # baseline: the listing shows no change
    workers.submit(ContainerEvent("u1", "c1", EventKind.DIED, EventSource.WATCH, 0.0))
    assert workers.wait_idle(5)
    emitted = gen.relister.relist()
    assert [(e.uuid, e.kind, e.source) for e in emitted] == [
        ("u1", EventKind.CHANGED, EventSource.RELIST)]
    assert gen.relister.relist() == []
    workers.stop()


def test_queued_events_are_counted_by_source_and_drops_apart() -> None:
    q = EventQueue(1)
    watched = sample("berth_pleg_events_total", source="watch")
    relisted = sample("berth_pleg_events_total", source="relist")
    dropped = sample("berth_pleg_events_dropped_total")
    assert q.put(event("a"))
    assert not q.put(event("b"))
    q.get(timeout=0)
    assert q.put(ContainerEvent(uuid="c", container_id="c3", kind=EventKind.STARTED,
                                source=EventSource.RELIST, at=0.0))
    assert sample("berth_pleg_events_total", source="watch") == watched + 1
    assert sample("berth_pleg_events_total", source="relist") == relisted + 1
    assert sample("berth_pleg_events_dropped_total") == dropped + 1
