"""How the agent (berth/compute/agent.py) hands PLEG's events on: an event a recorded
inspect already saw never reaches a sync thread, one that comes while a flow owns the
container waits for the flow's end, and the rest are synced. A real SQLite database,
the in-memory engine, the in-process transport; the agent is not started."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from support.agent_deps import unstarted_agent
from support.fake_runtime import FakeRuntime

from berth.compute.agent import ComputeAgent
from berth.compute.pleg import ContainerEvent, EventSource
from berth.db import containers
from berth.db.engine import Database
from berth.runtime.base import EventKind, RunState

HOST = "n1"


@pytest.fixture
def engine() -> FakeRuntime:
    return FakeRuntime()


@pytest.fixture
def agent(db: Database, engine: FakeRuntime) -> Iterator[ComputeAgent]:
    yield from unstarted_agent(db, engine, HOST)


def _stopped_behind_the_rows_back(db: Database, engine: FakeRuntime) -> tuple[str, str]:
    """A Running row whose container the engine holds exited: a sync corrects it."""
    row = containers.create(db, {"status": "Running", "host": HOST, "project_id": "p1"})
    cid = engine.add(row.uuid, HOST, RunState.EXITED)
    containers.update_(db, row.uuid, {"container_id": cid})
    return row.uuid, cid


def _died(uuid: str, cid: str) -> ContainerEvent:
    return ContainerEvent(uuid=uuid, container_id=cid, kind=EventKind.DIED,
                          source=EventSource.WATCH, at=time.monotonic())


def test_an_event_a_later_inspect_saw_is_not_handed_to_a_sync_thread(
        agent: ComputeAgent, db: Database, engine: FakeRuntime) -> None:
    uuid, cid = _stopped_behind_the_rows_back(db, engine)
    event = _died(uuid, cid)
    agent.deps.last_inspected.record(uuid, agent.deps.last_inspected.now())
    agent._on_event(event)
    assert agent.sync_workers.syncs == 0 and not agent.sync_workers.busy(uuid)
    # the row keeps what the recorded inspect wrote: nothing re-read it
    assert containers.get_by_uuid(db, uuid).status == "Running"


def test_an_event_no_inspect_saw_is_synced(
        agent: ComputeAgent, db: Database, engine: FakeRuntime) -> None:
    uuid, cid = _stopped_behind_the_rows_back(db, engine)
    agent.deps.last_inspected.record(uuid, agent.deps.last_inspected.now())
    agent._on_event(_died(uuid, cid))        # observed after the inspect began
    assert agent.sync_workers.wait_idle(5)
    assert agent.sync_workers.syncs == 1
    assert containers.get_by_uuid(db, uuid).status == "Stopped"


def test_an_event_during_a_flow_is_synced_once_the_flow_ends(
        agent: ComputeAgent, db: Database, engine: FakeRuntime) -> None:
    uuid, cid = _stopped_behind_the_rows_back(db, engine)
    flow_may_end = threading.Event()
    agent.workers.submit_flow(uuid, flow_may_end.wait, 5)
    agent._on_event(_died(uuid, cid))
    assert agent.sync_workers.syncs == 0 and not agent.sync_workers.busy(uuid)
    flow_may_end.set()
    assert agent.workers.wait_idle(5)
    assert agent.sync_workers.wait_idle(5)
    assert agent.sync_workers.syncs == 1
    assert containers.get_by_uuid(db, uuid).status == "Stopped"


def test_an_event_during_a_flow_whose_inspect_saw_it_is_dropped_at_the_flows_end(
        agent: ComputeAgent, db: Database, engine: FakeRuntime) -> None:
    uuid, cid = _stopped_behind_the_rows_back(db, engine)
    flow_may_end = threading.Event()

    def flow() -> None:
        flow_may_end.wait(5)
        agent.deps.last_inspected.record(uuid, agent.deps.last_inspected.now())

    agent.workers.submit_flow(uuid, flow)
    agent._on_event(_died(uuid, cid))
    flow_may_end.set()
    assert agent.workers.wait_idle(5)
    assert agent.sync_workers.syncs == 0 and not agent.sync_workers.busy(uuid)
    assert containers.get_by_uuid(db, uuid).status == "Running"
