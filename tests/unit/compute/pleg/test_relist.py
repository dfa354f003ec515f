"""Relister: diffing two listings into events, keeping the old record when an event
cannot be handed on, and re-emitting containers whose sync failed."""

from __future__ import annotations

import logging

import pytest
from support.metrics import sample

from berth.compute.pleg.events import ContainerEvent, EventSource
from berth.compute.pleg.relist import ContainerRecord, Relister, diff
from berth.runtime import base as rt
from berth.runtime.base import EventKind, RunState

HOST = "node1"


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class ListingRuntime:
    """Only ``list``: what ``docker ps --all`` would say, per host label."""

    def __init__(self) -> None:
        self.listed: dict[str, rt.RuntimeContainer] = {}
        self.list_calls: list[str | None] = []
        self.fail_with: Exception | None = None

    def put(self, cid: str, uuid: str | None, state: RunState, exit_code: int | None = None,
            host: str = HOST) -> None:
        labels = {rt.LABEL_HOST: host}
        if uuid:
            labels[rt.LABEL_UUID] = uuid
        self.listed[cid] = rt.RuntimeContainer(
            id=cid, name=f"zun-{uuid}", uuid=uuid, image="img",
            state=rt.ContainerState(status=state, running=state == RunState.RUNNING,
                                    exit_code=exit_code), labels=labels)

    def remove(self, cid: str) -> None:
        del self.listed[cid]

    def list(self, host: str | None = None) -> list[rt.RuntimeContainer]:
        self.list_calls.append(host)
        if self.fail_with is not None:
            raise self.fail_with
        return [c for c in self.listed.values()
                if host is None or c.labels.get(rt.LABEL_HOST) == host]


class Sink:
    def __init__(self) -> None:
        self.events: list[ContainerEvent] = []
        self.accept = True

    def __call__(self, event: ContainerEvent) -> bool:
        if not self.accept:
            return False
        self.events.append(event)
        return True

    def kinds(self) -> list[tuple[str, EventKind]]:
        out = [(e.uuid, e.kind) for e in self.events]
        self.events.clear()
        return out


@pytest.fixture
def engine() -> ListingRuntime:
    return ListingRuntime()


@pytest.fixture
def sink() -> Sink:
    return Sink()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def relister(engine: ListingRuntime, sink: Sink, clock: FakeClock) -> Relister:
    return Relister(engine, HOST, sink, clock)  # type: ignore[arg-type]


def test_first_relist_records_a_baseline_and_emits_nothing(
        relister: Relister, engine: ListingRuntime, sink: Sink) -> None:
    engine.put("c1", "u1", RunState.RUNNING)
    assert relister.relist() == []
    assert sink.events == []
    assert set(relister.snapshot) == {"c1"}
    assert engine.list_calls == [HOST]


def test_relist_lists_only_this_hosts_containers_with_a_uuid(
        relister: Relister, engine: ListingRuntime, sink: Sink) -> None:
    relister.relist()
    engine.put("c1", "u1", RunState.RUNNING)
    engine.put("c2", "u2", RunState.RUNNING, host="other")
    engine.put("c3", None, RunState.RUNNING)
    relister.relist()
    assert sink.kinds() == [("u1", EventKind.STARTED)]


def test_relist_reports_a_container_that_died(
        relister: Relister, engine: ListingRuntime, sink: Sink, clock: FakeClock) -> None:
    engine.put("c1", "u1", RunState.RUNNING)
    relister.relist()
    engine.put("c1", "u1", RunState.EXITED, exit_code=137)
    clock.now = 110.0
    events = relister.relist()
    assert [(e.uuid, e.container_id, e.kind, e.source, e.at) for e in events] == [
        ("u1", "c1", EventKind.DIED, EventSource.RELIST, 110.0)]
    assert relister.relist() == []     # no change, no event


def test_relist_reports_died_then_removed_when_a_running_container_vanishes(
        relister: Relister, engine: ListingRuntime, sink: Sink) -> None:
    engine.put("c1", "u1", RunState.RUNNING)
    engine.put("c2", "u2", RunState.EXITED, exit_code=0)
    relister.relist()
    engine.remove("c1")
    engine.remove("c2")
    relister.relist()
    assert sorted(sink.kinds()) == [("u1", EventKind.DIED), ("u1", EventKind.REMOVED),
                                    ("u2", EventKind.REMOVED)]
    assert relister.snapshot == {}


@pytest.mark.parametrize(("old", "new", "expected"), [
    (None, (RunState.CREATED, None), [EventKind.CHANGED]),
    (None, (RunState.RUNNING, None), [EventKind.STARTED]),
    ((RunState.EXITED, 0), (RunState.RUNNING, None), [EventKind.STARTED]),
    ((RunState.RUNNING, None), (RunState.PAUSED, None), [EventKind.PAUSED]),
    ((RunState.PAUSED, None), (RunState.RUNNING, None), [EventKind.UNPAUSED]),
    ((RunState.RESTARTING, None), (RunState.DEAD, None), [EventKind.DIED]),
    ((RunState.RUNNING, None), (RunState.REMOVING, None), [EventKind.DIED]),
    ((RunState.EXITED, 0), (RunState.EXITED, 1), [EventKind.CHANGED]),
    ((RunState.EXITED, 0), (RunState.EXITED, 0), []),
    ((RunState.PAUSED, None), None, [EventKind.DIED, EventKind.REMOVED]),
])
def test_diff_table(old, new, expected) -> None:  # type: ignore[no-untyped-def]
    def rec(v):  # type: ignore[no-untyped-def]
        return None if v is None else ContainerRecord("c1", "u1", v[0], v[1])
    assert diff(rec(old), rec(new)) == expected


def test_a_dropped_event_keeps_the_old_record_so_the_next_relist_emits_it_again(
        relister: Relister, engine: ListingRuntime, sink: Sink) -> None:
    engine.put("c1", "u1", RunState.RUNNING)
    relister.relist()
    engine.put("c1", "u1", RunState.EXITED, exit_code=1)
    engine.put("c2", "u2", RunState.RUNNING)     # new container, its event dropped too
    sink.accept = False
    assert relister.relist() == []
    assert relister.snapshot["c1"].state == RunState.RUNNING
    assert "c2" not in relister.snapshot
    sink.accept = True
    relister.relist()
    assert sorted(sink.kinds()) == [("u1", EventKind.DIED), ("u2", EventKind.STARTED)]
    assert relister.relist() == []


def test_reinspect_makes_the_next_relist_emit_an_unchanged_container(
        relister: Relister, engine: ListingRuntime, sink: Sink) -> None:
    engine.put("c1", "u1", RunState.RUNNING)
    relister.relist()
    relister.reinspect("c1", "u1")
    relister.reinspect("gone", "u9")     # a container that left before the relist
    relister.relist()
    assert sorted(sink.kinds()) == [("u1", EventKind.CHANGED), ("u9", EventKind.REMOVED)]
    relister.relist()
    assert sink.kinds() == []            # emitted once, then forgotten


def test_reinspect_survives_a_dropped_event(
        relister: Relister, engine: ListingRuntime, sink: Sink) -> None:
    engine.put("c1", "u1", RunState.RUNNING)
    relister.relist()
    relister.reinspect("c1", "u1")
    sink.accept = False
    relister.relist()
    sink.accept = True
    relister.relist()
    assert sink.kinds() == [("u1", EventKind.CHANGED)]


def test_a_failed_listing_keeps_the_snapshot_and_is_not_a_good_relist(
        relister: Relister, engine: ListingRuntime, sink: Sink, clock: FakeClock,
        caplog: pytest.LogCaptureFixture) -> None:
    engine.put("c1", "u1", RunState.RUNNING)
    relister.relist()
    assert relister.last_good == 100.0
    engine.fail_with = rt.RuntimeUnavailable(reason="socket gone")
    engine.remove("c1")
    clock.now = 120.0
    with caplog.at_level(logging.WARNING):
        assert relister.relist() == []
        assert relister.relist() == []
    assert [r.message for r in caplog.records].count(
        "relist failed (Container engine unavailable: socket gone); keeping the previous "
        "snapshot (logged once until it recovers)") == 1
    assert relister.failures == 2
    assert relister.last_good == 100.0
    assert set(relister.snapshot) == {"c1"}
    engine.fail_with = None
    clock.now = 130.0
    relister.relist()
    assert sink.kinds() == [("u1", EventKind.DIED), ("u1", EventKind.REMOVED)]
    assert relister.last_good == 130.0


def test_a_difference_carries_the_listed_state_and_a_reinspection_does_not(
        relister: Relister, engine: ListingRuntime, sink: Sink) -> None:
    relister.relist()                                   # baseline: nothing
    engine.put("c1", "u1", RunState.RUNNING)
    engine.put("c2", "u2", RunState.EXITED, exit_code=3)
    relister.relist()
    assert sorted((e.uuid, e.listed) for e in sink.events) == [
        ("u1", ("running", None)), ("u2", ("exited", 3))]
    sink.events.clear()
    relister.reinspect("c1", "u1")
    relister.relist()
    assert [(e.uuid, e.listed) for e in sink.events] == [("u1", None)]


def test_every_relist_is_timed_and_a_failed_listing_counted(
        relister: Relister, engine: ListingRuntime) -> None:
    relists = sample("berth_pleg_relist_duration_seconds_count")
    failures = sample("berth_pleg_relist_failures_total")
    relister.relist()
    engine.fail_with = rt.RuntimeUnavailable(reason="no socket")
    relister.relist()
    assert sample("berth_pleg_relist_duration_seconds_count") == relists + 2
    assert sample("berth_pleg_relist_failures_total") == failures + 1
