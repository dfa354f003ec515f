"""The API's half of task deadlines: a task past its deadline on a host whose agent is
down is failed on show and list (api/operations/stale_tasks.py), on a real SQLite
database."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.migrated_sqlite import migrated_url

from berth.api.operations import containers as ops
from berth.api.operations import stale_tasks
from berth.api.state import ApiSettings, ApiState
from berth.common.context import RequestContext
from berth.compute.states import Status, TaskState
from berth.db import containers, nodes
from berth.db.base import utcnow
from berth.db.engine import Database
from berth.db.models import ZunService

UP, DOWN = "up-node", "down-node"


class NoCompute:
    """Any RPC would be a bug here: the API must not reach a dead agent."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"compute.{name} called")


@pytest.fixture
def state(tmp_path: Path) -> Iterator[ApiState]:
    url = migrated_url(tmp_path)
    db = Database(url)
    nodes.report_service_up(db, UP, nodes.COMPUTE_BINARY, "nova")
    nodes.report_service_up(db, DOWN, nodes.COMPUTE_BINARY, "nova")
    with db.writer() as s:       # DOWN's last heartbeat: an hour ago
        svc = s.query(ZunService).filter_by(host=DOWN).one()
        svc.last_seen_up = utcnow() - dt.timedelta(hours=1)
    yield ApiState(db=db, compute=NoCompute(), scheduler=None,  # type: ignore[arg-type]
                   settings=ApiSettings(service_down_time=180))
    db.dispose()


def busy(state: ApiState, host: str, task: str, overdue: bool = True, **extra: Any
         ):  # type: ignore[no-untyped-def]
    deadline = utcnow() + dt.timedelta(minutes=-5 if overdue else 5)
    return containers.create(state.db, dict(project_id="p1", status=Status.RUNNING,
                                            host=host, task_state=task,
                                            task_deadline=deadline, **extra))


def test_overdue_task_on_a_down_host_becomes_error_on_show(state: ApiState) -> None:
    r = busy(state, DOWN, TaskState.CONTAINER_STOPPING, container_id="c" * 64)
    shown = ops.show(state, RequestContext.admin(), r.uuid)
    assert (shown.status, shown.task_state, shown.task_deadline) == (Status.ERROR, None, None)
    assert shown.status_reason.startswith("container_stopping did not finish by its deadline")
    assert f"the compute agent of host {DOWN} is down" in shown.status_reason
    assert "check it when the agent is back and retry" in shown.status_reason
    assert shown.container_id == "c" * 64          # only a create forgets its container
    assert containers.get_by_uuid(state.db, r.uuid).status == Status.ERROR


def test_overdue_create_on_a_down_host_forgets_its_container(state: ApiState) -> None:
    r = busy(state, DOWN, TaskState.CONTAINER_CREATING, container_id="c" * 64)
    shown = ops.show(state, RequestContext.admin(), r.uuid)
    assert shown.status == Status.ERROR and shown.container_id is None
    assert shown.status_reason.startswith("Container failed to create correctly: "
                                          "container_creating did not finish")


def test_task_not_yet_overdue_on_a_down_host_is_served_as_stored(state: ApiState) -> None:
    r = busy(state, DOWN, TaskState.CONTAINER_STOPPING, overdue=False)
    shown = ops.show(state, RequestContext.admin(), r.uuid)
    assert (shown.status, shown.task_state) == (Status.RUNNING, TaskState.CONTAINER_STOPPING)


def test_overdue_task_on_an_up_host_is_left_to_its_agent(state: ApiState) -> None:
    r = busy(state, UP, TaskState.CONTAINER_STOPPING)
    assert stale_tasks.expire_if_stale(state, r).task_state == TaskState.CONTAINER_STOPPING
    [listed] = stale_tasks.expire_stale(state, [r])
    assert listed.task_state == TaskState.CONTAINER_STOPPING


def test_list_fails_only_the_stale_rows_and_keeps_the_order(state: ApiState) -> None:
    a = busy(state, UP, TaskState.CONTAINER_STOPPING)
    b = busy(state, DOWN, TaskState.CONTAINER_DELETING)
    c = containers.create(state.db, {"project_id": "p1", "status": Status.STOPPED,
                                     "host": DOWN})
    d = busy(state, DOWN, TaskState.CONTAINER_STARTING, overdue=False)
    out = stale_tasks.expire_stale(state, [a, b, c, d])
    assert [r.uuid for r in out] == [a.uuid, b.uuid, c.uuid, d.uuid]
    assert [r.status for r in out] == [Status.RUNNING, Status.ERROR, Status.STOPPED,
                                       Status.RUNNING]
    assert [r.task_state for r in out] == [TaskState.CONTAINER_STOPPING, None, None,
                                           TaskState.CONTAINER_STARTING]


def test_a_task_that_moved_on_is_not_clobbered(state: ApiState) -> None:
    r = busy(state, DOWN, TaskState.CONTAINER_STOPPING)
    # The agent came back and set the task again (new deadline) after the API read it.
    fresh = utcnow() + dt.timedelta(minutes=10)
    containers.update_(state.db, r.uuid, {"task_deadline": fresh})
    out = stale_tasks.expire_if_stale(state, r, host_is_up=lambda _h: False)
    assert (out.status, out.task_state, out.task_deadline) == (
        Status.RUNNING, TaskState.CONTAINER_STOPPING, fresh)


def test_show_of_a_down_host_serves_the_stored_row_without_rpc(state: ApiState) -> None:
    r = containers.create(state.db, {"project_id": "p1", "status": Status.RUNNING,
                                     "host": DOWN, "container_id": "c" * 64})
    shown = ops.show(state, RequestContext.admin(), r.uuid)
    assert (shown.uuid, shown.status) == (r.uuid, Status.RUNNING)


def test_list_fails_stale_rows_read_as_list_columns(state: ApiState) -> None:
    """The list reads plain rows (containers.list_columns), not containers: a stale
    one comes back as the updated container, the others as they were read."""
    from berth.api.views import ADMIN_KEYS, LIST_COLUMNS, container_view, listed_view
    from berth.db.models import Container

    fresh = busy(state, UP, TaskState.CONTAINER_STOPPING)
    stale = busy(state, DOWN, TaskState.CONTAINER_DELETING)
    rows = containers.list_columns(state.db, LIST_COLUMNS, project_id="p1", filters={},
                                   limit=10)
    out = stale_tasks.expire_stale(state, rows)
    assert [r.uuid for r in out] == [fresh.uuid, stale.uuid]
    assert not isinstance(out[0], Container) and isinstance(out[1], Container)
    views = [container_view(r, shown=ADMIN_KEYS) if isinstance(r, Container)
             else listed_view(r, shown=ADMIN_KEYS) for r in out]
    assert [(v["status"], v["task_state"]) for v in views] == [
        (Status.RUNNING, TaskState.CONTAINER_STOPPING), (Status.ERROR, None)]


def test_show_answers_on_the_loop_only_when_the_stored_row_is_the_answer(
        state: ApiState) -> None:
    """show_on_loop: the row a show would return as it is, read on the event loop's
    own connection; None when show must run on a thread (ask the agent, fail a stale
    task). A container of another project is not found, as with show."""
    from berth.common import exceptions as exc

    admin, member = RequestContext.admin(), RequestContext(project_id="p2")
    assert state.db.reads_on_loop
    placed = containers.create(state.db, {"project_id": "p1", "status": Status.CREATING,
                                          "host": UP})
    in_docker = containers.create(state.db, {"project_id": "p1", "status": Status.RUNNING,
                                             "host": UP, "container_id": "abc"})
    stale = busy(state, DOWN, TaskState.CONTAINER_STOPPING)
    unplaced = containers.create(state.db, {"project_id": "p1", "status": Status.ERROR})
    assert ops.show_on_loop(state, admin, placed.uuid).uuid == placed.uuid
    assert ops.show_on_loop(state, admin, unplaced.uuid).uuid == unplaced.uuid
    assert ops.show_on_loop(state, admin, in_docker.uuid) is None    # the agent refreshes
    assert ops.show_on_loop(state, admin, stale.uuid) is None        # host down: maybe fail
    with pytest.raises(exc.ContainerNotFound):
        ops.show_on_loop(state, member, placed.uuid)
    live = ApiState(db=state.db, compute=state.compute, scheduler=None,  # type: ignore[arg-type]
                    settings=state.settings, local_state_live=lambda host: host == UP)
    assert ops.show_on_loop(live, admin, in_docker.uuid).container_id == "abc"
    # what the loop read is what the thread's show reads
    assert ops.show_on_loop(live, admin, in_docker.uuid).status == \
        ops.show(live, admin, in_docker.uuid).status
