"""The simulated engine (benchmarks only) keeps the Runtime contract the agent relies
on: create/start/stop/delete change what inspect and list answer, each change comes
on the event stream, a stream opened ``since`` a time replays what came after it, and
a start takes the configured latency."""

from __future__ import annotations

import threading

import pytest

from berth.runtime.base import ContainerSpec, EventKind, RunState, RuntimeConflict, RuntimeNotFound
from berth.runtime.simulated import SimulatedRuntime


def spec(uuid: str = "u1", host: str = "n1") -> ContainerSpec:
    return ContainerSpec(uuid=uuid, host=host, image="local/busybox:latest",
                         command=("sleep", "300"), memory_mib=64)


def test_a_started_container_is_running_in_inspect_and_list() -> None:
    rt = SimulatedRuntime()
    cid = rt.create(spec())
    assert rt.inspect(cid).state.status is RunState.CREATED  # type: ignore[union-attr]
    rt.start(cid)
    seen = rt.inspect("zun-u1")
    assert seen.state is not None and seen.state.running and seen.uuid == "u1"
    assert [c.id for c in rt.list("n1")] == [cid]
    assert rt.list("n2") == []
    assert rt.info().running_containers == 1


def test_a_second_create_of_one_uuid_conflicts_and_delete_forgets_it() -> None:
    rt = SimulatedRuntime()
    cid = rt.create(spec())
    with pytest.raises(RuntimeConflict):
        rt.create(spec())
    rt.delete(cid, force=True)
    rt.delete(cid)                      # a missing container is a no-op
    with pytest.raises(RuntimeNotFound):
        rt.inspect(cid)


def test_changes_come_on_the_event_stream_and_replay_since_a_time() -> None:
    rt = SimulatedRuntime()
    stream = rt.events()
    cid = rt.create(spec())
    rt.start(cid)
    rt.stop(cid)
    rt.delete(cid)
    kinds = [next(stream).kind for _ in range(4)]
    assert kinds == [EventKind.CHANGED, EventKind.STARTED, EventKind.DIED, EventKind.REMOVED]
    stream.close()
    assert list(stream) == []
    events = list(_drain(rt, since=0))
    assert [e.action for e in events] == ["create", "start", "die", "destroy"]


def _drain(rt: SimulatedRuntime, since: int) -> list:  # type: ignore[type-arg]
    stream = rt.events(since)
    threading.Timer(0.2, stream.close).start()
    return list(stream)


def test_a_start_takes_the_configured_latency() -> None:
    slept: list[float] = []
    rt = SimulatedRuntime(start_latency=0.3, sleep=slept.append)
    rt.start(rt.create(spec()))
    assert slept == [0.3]


def test_close_ends_a_blocked_iteration() -> None:
    rt = SimulatedRuntime()
    stream = rt.events()
    threading.Timer(0.1, rt.close).start()
    assert list(stream) == []
