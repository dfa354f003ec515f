"""Lost casts (LostCastRepairer, run by the expire_tasks pass): a status the API wrote
with a deadline, whose cast never came, is taken up by the owning agent: on a real
SQLite database, an in-memory engine, an injected clock, and the flows run where they
are queued."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.agent_deps import HOST, agent_deps, node_database
from support.fake_runtime import FakeRuntime, ImageRuntime

from berth.common.context import RequestContext
from berth.compute.capsules import delete as capsule_delete
from berth.compute.deps import AgentDeps
from berth.compute.flows import actions as action_flows
from berth.compute.flows import create as create_flow
from berth.compute.flows import delete, lifecycle, rebuild
from berth.compute.flows.sync import skip_reason
from berth.compute.periodic.lost_casts import (
    REBOOT_ACTIONS,
    REBUILD_ACTIONS,
    LostCastRepairer,
    unless_done,
)
from berth.compute.periodic.task_deadlines import TaskExpirer
from berth.compute.states import Status, TaskState
from berth.db import actions, containers
from berth.db.capsules import CAPSULE
from berth.db.engine import Database
from berth.runtime.base import RunState

T0 = dt.datetime(2030, 1, 1, 12, 0, 0)          # naive UTC, as the database stores times
LATER = T0 + dt.timedelta(seconds=1)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    yield from node_database(tmp_path)


@pytest.fixture
def engine() -> FakeRuntime:
    return FakeRuntime()


@pytest.fixture
def deps(db: Database, engine: FakeRuntime) -> AgentDeps:
    return agent_deps(db, engine, stop_timeout_default=3)


class Queue:
    """ContainerWorkers.submit_flow's shape: records each flow; ``run`` runs them."""

    def __init__(self) -> None:
        self.jobs: list[tuple[str, Callable[..., Any], tuple[Any, ...], dict[str, Any]]] = []

    def __call__(self, key: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        self.jobs.append((key, fn, args, kwargs))

    def run(self) -> None:
        for _, fn, args, kwargs in self.jobs:
            fn(*args, **kwargs)


def awaited_row(db: Database, engine: FakeRuntime, status: str, *, deadline: dt.datetime = T0,
                run_state: RunState | None = RunState.RUNNING, host: str = HOST,
                action: str | None = None, **extra: Any):  # type: ignore[no-untyped-def]
    """A row as the API leaves it before its cast: the status, a deadline, no task;
    with ``action``, the API's action record of the request."""
    r = containers.create(db, dict(project_id="p1", status=status, task_deadline=deadline,
                                   host=host, cpu=1.0, memory="256", image="busybox",
                                   **extra))
    if run_state is not None:
        cid = engine.add(r.uuid, host, run_state, started=run_state != RunState.CREATED)
        r = containers.update_(db, r.uuid, {"container_id": cid})
    if action is not None:
        actions.action_start(db, RequestContext(request_id=f"req-{action}"), r.uuid, action)
    return r


def repairer(deps: AgentDeps, queue: Queue, busy: Callable[[str], bool] = lambda _: False,
             now: dt.datetime = LATER) -> TaskExpirer:
    """The agent's expire_tasks pass as the agent wires it."""
    return TaskExpirer(deps, busy, clock=lambda: now,
                       lost_casts=LostCastRepairer(deps, queue, busy))


def test_a_lost_delete_is_done_with_force_under_the_requests_own_action(
        db: Database, deps: AgentDeps, engine: FakeRuntime) -> None:
    r = awaited_row(db, engine, Status.DELETING, action="delete")
    queue = Queue()
    assert repairer(deps, queue).run() == 1
    [(key, fn, args, kwargs)] = queue.jobs
    assert (key, fn, kwargs) == (r.uuid, delete.delete_container, {"force": True})
    assert args[1].request_id == "req-delete"
    queue.run()
    assert containers.find_by_uuid(db, r.uuid) is None
    assert engine.containers == {}


def test_a_lost_reboot_restarts_the_container_and_ends_the_deadline(
        db: Database, deps: AgentDeps, engine: FakeRuntime) -> None:
    r = awaited_row(db, engine, Status.RESTARTING, action="reboot")
    queue = Queue()
    repairer(deps, queue).run()
    [(_, fn, args, kwargs)] = queue.jobs
    assert (fn, kwargs) == (action_flows.reboot_container, {"timeout": 3})
    assert args[1].request_id == "req-reboot"
    queue.run()
    assert ("restart", r.container_id) in engine.calls
    after = containers.get_by_uuid(db, r.uuid)
    assert (after.status, after.task_state, after.task_deadline) == (Status.RUNNING, None, None)
    [reboot] = [a for a in actions.list_actions(db, r.uuid) if a.request_id == "req-reboot"]
    assert reboot.finish_time is not None and reboot.message is None


def test_a_lost_rebuild_runs_again_and_starts_iff_its_container_ran(
        db: Database, deps: AgentDeps, engine: FakeRuntime) -> None:
    running = awaited_row(db, engine, Status.REBUILDING, action="rebuild")
    stopped = awaited_row(db, engine, Status.REBUILDING, run_state=RunState.EXITED)
    moved = awaited_row(db, engine, Status.REBUILDING, run_state=None, action="evacuate")
    queue = Queue()
    assert repairer(deps, queue).run() == 3
    seen = {key: (fn, kwargs, args[1].request_id) for key, fn, args, kwargs in queue.jobs}
    assert seen[running.uuid][:2] == (rebuild.rebuild_container, {"run": True})
    assert seen[running.uuid][2] == "req-rebuild"
    assert seen[stopped.uuid][:2] == (rebuild.rebuild_container, {"run": False})
    assert seen[moved.uuid][1:] == ({"run": False}, "req-evacuate")


def test_a_lost_capsule_delete_goes_to_the_capsules_flow(
        db: Database, deps: AgentDeps, engine: FakeRuntime) -> None:
    awaited_row(db, engine, Status.DELETING, run_state=None, container_type=CAPSULE)
    queue = Queue()
    repairer(deps, queue).run()
    [(_, fn, _, kwargs)] = queue.jobs
    assert (fn, kwargs) == (capsule_delete.delete_capsule, {"force": True})


def test_a_lost_create_ends_in_error_and_a_late_cast_does_not_make_it(
        db: Database, deps: AgentDeps, engine: FakeRuntime) -> None:
    # The API wrote the row Creating with a deadline and cast; the cast never came.
    r = awaited_row(db, engine, Status.CREATING, run_state=None, action="create")
    queue = Queue()
    assert repairer(deps, queue).run() == 1
    assert queue.jobs == []                 # nothing to redo: the request is not in the row
    after = containers.get_by_uuid(db, r.uuid)
    assert (after.status, after.task_state, after.task_deadline) == (Status.ERROR, None, None)
    assert "did not reach the compute agent of host" in after.status_reason
    assert "Delete this container and create it again" in after.status_reason
    [create] = actions.list_actions(db, r.uuid)
    assert create.finish_time is not None and create.message == "Error"
    # The cast arriving late finds the row no longer Creating: nothing is made.
    create_flow.create_container(deps, RequestContext(request_id="req-create"), r.uuid,
                                 run=True, volumes=False)
    assert engine.containers == {}
    assert containers.get_by_uuid(db, r.uuid).status == Status.ERROR


def test_a_create_still_queued_behind_other_work_is_left_to_its_flow(
        db: Database, deps: AgentDeps, engine: FakeRuntime) -> None:
    r = awaited_row(db, engine, Status.CREATING, run_state=None, action="create")
    assert repairer(deps, Queue(), busy=lambda uuid: uuid == r.uuid).run() == 0
    assert containers.get_by_uuid(db, r.uuid).status == Status.CREATING


def test_nothing_is_taken_before_the_deadline_elsewhere_or_while_a_flow_is_queued(
        db: Database, deps: AgentDeps, engine: FakeRuntime) -> None:
    on_time = awaited_row(db, engine, Status.DELETING, deadline=LATER + dt.timedelta(1))
    elsewhere = awaited_row(db, engine, Status.DELETING, host="node2")
    queued = awaited_row(db, engine, Status.RESTARTING)
    queue = Queue()
    assert repairer(deps, queue, busy=lambda uuid: uuid == queued.uuid).run() == 0
    assert queue.jobs == []
    for r in (on_time, elsewhere, queued):
        assert containers.get_by_uuid(db, r.uuid).task_deadline is not None


def test_a_row_with_a_task_is_the_task_expirers_not_a_lost_cast(
        db: Database, deps: AgentDeps, engine: FakeRuntime) -> None:
    r = awaited_row(db, engine, Status.DELETING, task_state=TaskState.CONTAINER_DELETING)
    queue = Queue()
    assert repairer(deps, queue).run() == 1
    assert queue.jobs == []
    after = containers.get_by_uuid(db, r.uuid)
    assert after.status_reason.startswith("container_deleting did not finish")


def test_a_deadline_left_on_another_status_is_only_cleared(
        db: Database, deps: AgentDeps, engine: FakeRuntime) -> None:
    r = awaited_row(db, engine, Status.RUNNING)
    queue = Queue()
    assert repairer(deps, queue).run() == 0
    assert queue.jobs == []
    after = containers.get_by_uuid(db, r.uuid)
    assert (after.status, after.task_deadline) == (Status.RUNNING, None)


@pytest.mark.parametrize("status", [Status.RESTARTING, Status.REBUILDING])
def test_the_state_syncs_leave_an_awaited_status_to_its_flow(
        db: Database, engine: FakeRuntime, status: Status) -> None:
    awaited = awaited_row(db, engine, status)
    assert skip_reason(awaited, HOST) == (
        f"the request it is {status} for is on its way to this agent")
    # Restarting as Docker reports it (a restart policy) has no deadline: synced.
    docker_says = awaited_row(db, engine, status, deadline=None)   # type: ignore[arg-type]
    assert skip_reason(docker_says, HOST) is None


def test_a_delete_with_stop_whose_delete_was_lost_is_done_after_the_stop(
        db: Database, deps: AgentDeps, engine: FakeRuntime) -> None:
    """``delete --stop`` casts a stop, then a delete: the stop ends with the row
    Deleting and a deadline again, so a lost delete is done once that passes."""
    r = awaited_row(db, engine, Status.DELETING, action="delete")
    lifecycle.stop_container(deps, RequestContext(request_id="req-delete"), r.uuid, None)
    assert engine.status_of(r.container_id) == RunState.EXITED
    after = containers.get_by_uuid(db, r.uuid)
    assert (after.status, after.task_state) == (Status.DELETING, None)
    # as far off as a delete's own task would be: [compute]task_state_timeout
    soon = dt.datetime.now(dt.UTC).replace(tzinfo=None) + dt.timedelta(
        seconds=deps.settings.task_state_timeout - 60)
    assert after.task_deadline is not None and after.task_deadline > soon
    queue = Queue()
    early = after.task_deadline - dt.timedelta(seconds=1)
    assert repairer(deps, queue, now=early).run() == 0
    late = after.task_deadline + dt.timedelta(seconds=1)
    assert repairer(deps, queue, now=late).run() == 1
    queue.run()
    assert containers.find_by_uuid(db, r.uuid) is None
    assert engine.containers == {}


def test_the_stop_of_a_delete_leaves_a_forced_deletes_task_alone(
        db: Database, deps: AgentDeps, engine: FakeRuntime) -> None:
    r = awaited_row(db, engine, Status.DELETING, task_state=TaskState.CONTAINER_DELETING)
    lifecycle.stop_container(deps, RequestContext(request_id="req-stop"), r.uuid, None)
    after = containers.get_by_uuid(db, r.uuid)
    assert (after.status, after.task_state, after.task_deadline) == (
        Status.DELETING, TaskState.CONTAINER_DELETING, T0)
    assert engine.status_of(r.container_id) == RunState.RUNNING


def test_a_cast_that_comes_after_its_repair_is_not_done_twice(
        db: Database, deps: AgentDeps, engine: FakeRuntime) -> None:
    late = RequestContext(request_id="req-reboot")
    repaired = awaited_row(db, engine, Status.RESTARTING, action="reboot")
    queue = Queue()
    repairer(deps, queue).run()
    queue.run()
    reboot = unless_done(action_flows.reboot_container, REBOOT_ACTIONS)
    reboot(deps, late, repaired.uuid, None)
    assert engine.calls.count(("restart", repaired.container_id)) == 1
    # A cast in time (its action still open) is done, and finishes the action.
    on_time = awaited_row(db, engine, Status.RESTARTING, action="reboot")
    reboot(deps, late, on_time.uuid, None)
    assert ("restart", on_time.container_id) in engine.calls
    assert actions.is_finished(db, on_time.uuid, "req-reboot", REBOOT_ACTIONS)


def test_a_rebuild_cast_after_its_repair_is_not_done_twice(db: Database) -> None:
    engine = ImageRuntime()                 # the rebuild's image is there
    deps = agent_deps(db, engine)
    r = awaited_row(db, engine, Status.REBUILDING, action="rebuild",
                    run_state=RunState.EXITED, image_pull_policy="ifnotpresent")
    queue = Queue()
    repairer(deps, queue).run()
    queue.run()
    rebuilt = containers.get_by_uuid(db, r.uuid)
    assert rebuilt.container_id != r.container_id
    assert (rebuilt.status, rebuilt.task_state) == (Status.CREATED, None)
    unless_done(rebuild.rebuild_container, REBUILD_ACTIONS)(
        deps, RequestContext(request_id="req-rebuild"), r.uuid, False)
    assert containers.get_by_uuid(db, r.uuid).container_id == rebuilt.container_id
