"""What the agent (berth/compute/agent.py) reports without being started: its /readyz
checks, its queue depths, and the rows its state syncs correct, by what noticed the
change. A real SQLite database, the in-memory engine, the in-process transport."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from support.agent_deps import unstarted_agent
from support.fake_runtime import FakeRuntime
from support.metrics import sample

from berth.common import exceptions as exc
from berth.compute.agent import ComputeAgent
from berth.compute.pleg import ContainerEvent, EventSource
from berth.db import containers
from berth.db.engine import Database
from berth.metrics.catalog import QUEUE_DEPTHS
from berth.metrics.health import Readiness
from berth.runtime.base import EventKind, RunState

HOST = "n1"


class DownRuntime(FakeRuntime):
    def __init__(self) -> None:
        super().__init__()
        self.down = False

    def ping(self) -> None:
        if self.down:
            raise ConnectionError("no socket")


@pytest.fixture
def engine() -> DownRuntime:
    return DownRuntime()


@pytest.fixture
def agent(db: Database, engine: DownRuntime) -> Iterator[ComputeAgent]:
    yield from unstarted_agent(db, engine, HOST)


def test_readyz_names_rpc_until_the_agent_serves_and_docker_when_it_is_away(
        agent: ComputeAgent, engine: DownRuntime) -> None:
    readiness = Readiness(agent.readiness_checks(), max_age=0)
    try:
        assert readiness.report().failed == ["rpc"]
        server = agent.transport.serve(HOST, agent.manager)
        server.start()
        agent._server = server
        assert readiness.report().ready
        engine.down = True
        report = readiness.report()
        assert report.failed == ["docker"]
        assert report.checks["docker"] == "ConnectionError: no socket"
    finally:
        readiness.close()


def test_queue_depth_of_actions_is_read_from_the_agents_workers(agent: ComputeAgent) -> None:
    gate = threading.Event()
    before = QUEUE_DEPTHS.depth("actions")
    agent.workers.submit("u1", gate.wait, 5)
    agent.workers.submit("u1", lambda: None)
    agent.workers.submit("u2", gate.wait, 5)
    try:
        assert QUEUE_DEPTHS.depth("actions") == before + 2      # two containers busy
    finally:
        gate.set()
    assert agent.workers.wait_idle(5)
    assert QUEUE_DEPTHS.depth("actions") == before


def test_a_relist_event_that_corrects_a_row_is_counted_as_a_relist_correction(
        agent: ComputeAgent, db: Database, engine: DownRuntime) -> None:
    row = containers.create(db, {"status": "Running", "host": HOST, "project_id": "p1"})
    cid = engine.add(row.uuid, HOST, RunState.EXITED)
    containers.update_(db, row.uuid, {"container_id": cid})
    before = sample("berth_state_sync_corrections_total", source="relist", outcome="updated")
    agent._sync_event(ContainerEvent(uuid=row.uuid, container_id=cid, kind=EventKind.DIED,
                                     source=EventSource.RELIST, at=time.monotonic()))
    assert containers.get_by_uuid(db, row.uuid).status == "Stopped"
    assert sample("berth_state_sync_corrections_total", source="relist",
                  outcome="updated") == before + 1
    # the same event again finds nothing to correct
    agent._sync_event(ContainerEvent(uuid=row.uuid, container_id=cid, kind=EventKind.DIED,
                                     source=EventSource.RELIST, at=time.monotonic()))
    assert sample("berth_state_sync_corrections_total", source="relist",
                  outcome="updated") == before + 1


def test_the_periodic_sync_counts_what_it_corrected(
        agent: ComputeAgent, db: Database, engine: DownRuntime) -> None:
    row = containers.create(db, {"status": "Running", "host": HOST, "project_id": "p1"})
    cid = engine.add(row.uuid, HOST, RunState.EXITED)
    containers.update_(db, row.uuid, {"container_id": cid})
    before = sample("berth_state_sync_corrections_total", source="periodic",
                    outcome="updated")
    agent.sync_state()
    assert sample("berth_state_sync_corrections_total", source="periodic",
                  outcome="updated") == before + 1


def test_rpc_not_ready_says_why(agent: ComputeAgent) -> None:
    with pytest.raises(exc.RPCError, match="not serving yet"):
        agent.readiness_checks()["rpc"]()
