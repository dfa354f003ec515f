"""Evacuation of a down node's containers (``berth.api.evacuation``) on a real SQLite
database, with the real scheduler and a recording RPC client: which containers move,
where, with what record; exactly once when two API processes race; never when the
node's heartbeat comes back first or no node has room. The same on PostgreSQL and
MariaDB with real agents is tests/integration/fleet/test_evacuation.py."""

from __future__ import annotations

import datetime as dt
import uuid as uuidlib
from typing import Any

import pytest

from berth.api import evacuation
from berth.api.state import ApiSettings, ApiState
from berth.common import exceptions as exc
from berth.compute.states import Status
from berth.db import actions, containers, nodes
from berth.db.base import utcnow
from berth.db.engine import Database
from berth.db.models import ZunService
from berth.placement.requests import NodeReservations
from berth.scheduler import filters, weighers
from berth.scheduler.filter_scheduler import FilterScheduler
from berth.scheduler.host_state import load_host_states

DOWN_TIME = 60
ROOM = NodeReservations(reserved_memory_mb=0, ram_allocation_ratio=1.0)


class RecordingCompute:
    """The RPC client's ``cast``, recorded; ``fail`` makes it raise as an unreachable
    agent does."""

    def __init__(self) -> None:
        self.casts: list[tuple[str, str, str, dict[str, Any]]] = []
        self.fail = False

    def cast(self, ctx: Any, container: Any, method: str, **kw: Any) -> None:
        if self.fail:
            raise exc.ServiceUnavailable(reason="no agent listens")
        self.casts.append((container.uuid, container.host, method, kw))


def api_state(db: Database) -> ApiState:
    sched = FilterScheduler(lambda: load_host_states(db, ROOM, DOWN_TIME, "nova"),
                            filters.by_name(["ComputeFilter", "ResourceFilter"]),
                            weighers.by_name(["RAMWeigher", "CPUWeigher"], {}))
    return ApiState(db=db, compute=RecordingCompute(), scheduler=sched,  # type: ignore[arg-type]
                    settings=ApiSettings(service_down_time=DOWN_TIME))


def heartbeat(db: Database, host: str, age: float = 0.0) -> None:
    nodes.report_service_up(db, host, nodes.COMPUTE_BINARY, None)
    with db.writer() as s:
        svc = s.query(ZunService).filter_by(host=host).one()
        svc.last_seen_up = utcnow() - dt.timedelta(seconds=age)


@pytest.fixture
def fleet(db: Database) -> Database:
    """dead (no heartbeat for 10 minutes), spare (up, 4096 MiB free)."""
    for host in ("dead", "spare"):
        nodes.upsert_compute_node(db, host, {"cpus": 4, "mem_total": 4096})
    heartbeat(db, "dead", age=600)
    heartbeat(db, "spare")
    return db


def on_dead(db: Database, status: str, **extra: Any) -> Any:
    values: dict[str, Any] = {"host": "dead", "status": status, "cpu": 0.5, "memory": "512",
                              "project_id": "p1", "user_id": "u1",
                              "container_id": uuidlib.uuid4().hex}
    values.update(extra)
    return containers.create(db, values)


def test_rebuildable_containers_move_to_a_healthy_node_with_a_recorded_reason(
        fleet: Database) -> None:
    state = api_state(fleet)
    running = on_dead(fleet, Status.RUNNING.value)
    stopped = on_dead(fleet, Status.STOPPED.value)
    created = on_dead(fleet, Status.CREATED.value)
    left = [on_dead(fleet, Status.PAUSED.value), on_dead(fleet, Status.ERROR.value),
            on_dead(fleet, Status.RUNNING.value, task_state="container_stopping")]

    before = utcnow()
    report = evacuation.evacuate_down_hosts(state)

    assert (report.moved, report.taken, report.unplaced, report.failed) == (3, 0, 0, 0)
    for moved in (running, stopped, created):
        row = containers.get_by_uuid(fleet, moved.uuid)
        assert (row.host, row.status, row.container_id) == ("spare", "Rebuilding", None)
        # The cast's deadline: the new node's agent rebuilds it even if the cast is lost.
        assert row.task_state is None
        assert dt.timedelta(seconds=599) < row.task_deadline - before < dt.timedelta(seconds=601)
        [action] = actions.list_actions(fleet, moved.uuid)
        assert action.action == "evacuate"
        assert "host dead is down" in action.message and "evacuated to spare" in \
            action.message
    casts = {uuid: (host, method, kw) for uuid, host, method, kw in state.compute.casts}  # type: ignore[attr-defined]
    assert casts == {running.uuid: ("spare", "container_rebuild", {"run": True}),
                     stopped.uuid: ("spare", "container_rebuild", {"run": False}),
                     created.uuid: ("spare", "container_rebuild", {"run": False})}
    for kept in left:
        assert containers.get_by_uuid(fleet, kept.uuid).host == "dead"
    # Nothing is left to move: the next check does nothing.
    assert evacuation.evacuate_down_hosts(state).moved == 0


def test_the_new_node_plugs_the_container_afresh(fleet: Database) -> None:
    nets = [{"network": "n-1", "ifname": "eth0", "fixed_ip": None}]
    row = on_dead(fleet, Status.RUNNING.value, cni_metadata={"networks": nets, "pid": 4242})
    evacuation.evacuate_down_hosts(api_state(fleet))
    assert containers.get_by_uuid(fleet, row.uuid).cni_metadata == {"networks": nets,
                                                                     "pid": 0}


def test_two_api_processes_reading_the_same_rows_move_each_container_once(
        fleet: Database) -> None:
    first, second = api_state(fleet), api_state(fleet)
    row = on_dead(fleet, Status.RUNNING.value)
    [seen_by_first] = evacuation.evacuable_rows(first, ["dead"])
    [seen_by_second] = evacuation.evacuable_rows(second, ["dead"])
    assert evacuation.evacuate(first, seen_by_first, None) == "moved"
    assert evacuation.evacuate(second, seen_by_second, None) == "taken"
    assert len(actions.list_actions(fleet, row.uuid)) == 1
    assert len(first.compute.casts) == 1 and second.compute.casts == []  # type: ignore[attr-defined]


def test_a_heartbeat_that_lands_before_the_move_cancels_it(fleet: Database) -> None:
    state = api_state(fleet)
    row = on_dead(fleet, Status.RUNNING.value)
    [seen] = evacuation.evacuable_rows(state, ["dead"])
    heartbeat(fleet, "dead")                 # the node is back
    assert evacuation.evacuate(state, seen, None) == "taken"
    after = containers.get_by_uuid(fleet, row.uuid)
    assert (after.host, after.status, after.container_id) == ("dead", "Running",
                                                              row.container_id)
    assert actions.list_actions(fleet, row.uuid) == []


def test_a_container_no_node_has_room_for_stays_and_is_tried_again(fleet: Database) -> None:
    state = api_state(fleet)
    big = on_dead(fleet, Status.RUNNING.value, memory="8192")
    assert evacuation.evacuate_down_hosts(state).unplaced == 1
    assert containers.get_by_uuid(fleet, big.uuid).host == "dead"
    nodes.upsert_compute_node(fleet, "spare", {"mem_total": 16384})
    assert evacuation.evacuate_down_hosts(state).moved == 1


def test_a_move_whose_cast_cannot_be_sent_ends_in_error_saying_so(fleet: Database) -> None:
    state = api_state(fleet)
    state.compute.fail = True  # type: ignore[attr-defined]
    row = on_dead(fleet, Status.RUNNING.value)
    assert evacuation.evacuate_down_hosts(state).failed == 1
    after = containers.get_by_uuid(fleet, row.uuid)
    assert (after.host, after.status, after.task_deadline) == ("spare", "Error", None)
    assert "Evacuated from down host dead to spare" in after.status_reason
    [action] = actions.list_actions(fleet, row.uuid)
    assert action.finish_time is not None


def test_a_forced_down_node_is_evacuated_at_once(fleet: Database) -> None:
    state = api_state(fleet)
    heartbeat(fleet, "dead")
    row = on_dead(fleet, Status.STOPPED.value)
    assert evacuation.evacuate_down_hosts(state).moved == 0
    nodes.update_service(fleet, "dead", nodes.COMPUTE_BINARY, {"forced_down": True})
    assert evacuation.evacuate_down_hosts(state).moved == 1
    assert containers.get_by_uuid(fleet, row.uuid).host == "spare"
