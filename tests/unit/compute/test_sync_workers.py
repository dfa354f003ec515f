"""SyncWorkers: one sync per container at a time, at most one waiting, the latest wins."""

from __future__ import annotations

import threading

import pytest

from berth.compute.pleg.events import ContainerEvent, EventSource
from berth.compute.sync_workers import SyncWorkers
from berth.runtime.base import EventKind


def event(uuid: str, action: str) -> ContainerEvent:
    return ContainerEvent(uuid=uuid, container_id=f"c-{uuid}", kind=EventKind.CHANGED,
                          source=EventSource.WATCH, at=0.0, action=action)


class GatedSync:
    """Records each sync; a sync of a gated uuid waits until released."""

    def __init__(self) -> None:
        self.done: list[tuple[str, str]] = []
        self.started = threading.Semaphore(0)
        self.gates: dict[str, threading.Event] = {}
        self.lock = threading.Lock()

    def gate(self, uuid: str) -> threading.Event:
        self.gates[uuid] = threading.Event()
        return self.gates[uuid]

    def __call__(self, e: ContainerEvent) -> None:
        self.started.release()
        gate = self.gates.get(e.uuid)
        if gate is not None:
            assert gate.wait(5)
        with self.lock:
            self.done.append((e.uuid, e.action))


def test_events_queued_behind_a_running_sync_coalesce_into_the_latest() -> None:
    sync = GatedSync()
    gate = sync.gate("a")
    workers = SyncWorkers(sync, max_workers=2)
    workers.submit(event("a", "die"))
    assert sync.started.acquire(timeout=5)
    workers.submit(event("a", "kill"))
    workers.submit(event("a", "destroy"))      # replaces the waiting "kill"
    assert workers.busy("a")
    gate.set()
    assert workers.wait_idle(5)
    assert sync.done == [("a", "die"), ("a", "destroy")]
    assert (workers.syncs, workers.coalesced) == (2, 1)
    assert not workers.busy("a")
    workers.stop()


def test_different_containers_sync_in_parallel() -> None:
    sync = GatedSync()
    gate = sync.gate("a")
    workers = SyncWorkers(sync, max_workers=2)
    workers.submit(event("a", "die"))
    workers.submit(event("b", "die"))
    assert sync.started.acquire(timeout=5) and sync.started.acquire(timeout=5)
    for _ in range(500):
        if ("b", "die") in sync.done:
            break
        threading.Event().wait(0.01)
    assert sync.done == [("b", "die")]        # b finished while a is still running
    gate.set()
    assert workers.wait_idle(5)
    workers.stop()


def test_a_failing_sync_is_reported_and_the_next_event_still_runs() -> None:
    failed: list[ContainerEvent] = []
    done: list[str] = []

    def sync(e: ContainerEvent) -> None:
        if e.action == "die":
            raise RuntimeError("database is locked")
        done.append(e.action)

    workers = SyncWorkers(sync, on_failure=failed.append)
    workers.submit(event("a", "die"))
    assert workers.wait_idle(5)
    workers.submit(event("a", "start"))
    assert workers.wait_idle(5)
    assert [e.action for e in failed] == ["die"]
    assert done == ["start"]
    assert workers.failures == 1
    workers.stop()
    workers.submit(event("a", "late"))        # ignored once stopped
    workers.stop()                            # safe twice
    assert done == ["start"]


def test_an_event_whose_thread_cannot_start_leaves_the_container_free(
        monkeypatch: pytest.MonkeyPatch) -> None:
    sync = GatedSync()
    workers = SyncWorkers(sync, max_workers=2)

    def refuse(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    with monkeypatch.context() as m:
        m.setattr(threading.Thread, "start", refuse)
        with pytest.raises(RuntimeError):
            workers.submit(event("a", "die"))
    assert not workers.busy("a")
    workers.submit(event("a", "start"))
    assert workers.wait_idle(5)
    assert sync.done == [("a", "start")]
    workers.stop()
