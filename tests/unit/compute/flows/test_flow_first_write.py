"""flows.common.begin_task (a flow's task and its action event in one commit) and
flows.common.overlapped (a call beside the flow, logged under the container)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator

import pytest
from support.fake_runtime import FakeRuntime

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.common.log import ContainerFilter, container_context
from berth.compute.capsules.docker.engine import DockerCapsules
from berth.compute.claims import ResourceTracker
from berth.compute.deps import AgentDeps, AgentSettings
from berth.compute.flows import common
from berth.compute.states import TaskState
from berth.db import actions, containers
from berth.db.containers import Expect
from berth.db.engine import Database

EVENT = "compute__do_container_create"


@pytest.fixture
def deps(db: Database) -> Iterator[AgentDeps]:
    d = AgentDeps(db=db, runtime=FakeRuntime(), tracker=ResourceTracker(db, "n1"),
                  settings=AgentSettings(host="n1", create_task_timeout=1800),
                  capsules=DockerCapsules())
    yield d
    d.overlap.shutdown(wait=True)


def creating_row(db: Database, ctx: RequestContext, status: str = "Creating") -> str:
    return containers.create(db, {"status": status, "host": "n1"},
                             along=lambda u: [actions.new_action(ctx, u, "create")]).uuid


#: What a create's first write expects: a Creating row with no task.
CREATING = Expect(status="Creating", task_state=None)


def events_of(db: Database, uuid: str, ctx: RequestContext) -> list[tuple[str, str | None]]:
    _, events = actions.get_action(db, uuid, ctx.request_id)
    return [(e.event, e.result) for e in events]


def test_begin_task_sets_the_task_and_starts_the_event_together(deps: AgentDeps) -> None:
    ctx = RequestContext.admin()
    uuid = creating_row(deps.db, ctx)
    row, event_id = common.begin_task(deps, ctx, uuid, TaskState.CONTAINER_CREATING, EVENT,
                                      expect=CREATING)
    assert row.task_state == TaskState.CONTAINER_CREATING
    assert row.task_deadline is not None
    stored = containers.get_by_uuid(deps.db, uuid)
    assert (stored.task_state, stored.task_deadline) == (row.task_state, row.task_deadline)
    assert event_id is not None
    assert events_of(deps.db, uuid, ctx) == [(EVENT, None)]     # started, not finished


def test_begin_task_on_another_status_changes_nothing(deps: AgentDeps) -> None:
    ctx = RequestContext.admin()
    uuid = creating_row(deps.db, ctx, status="Deleting")
    with pytest.raises(exc.TaskInProgress):
        common.begin_task(deps, ctx, uuid, TaskState.CONTAINER_CREATING, EVENT,
                          expect=CREATING)
    assert containers.get_by_uuid(deps.db, uuid).task_state is None
    assert events_of(deps.db, uuid, ctx) == []


def test_begin_task_on_a_busy_row_changes_nothing(deps: AgentDeps) -> None:
    ctx = RequestContext.admin()
    uuid = creating_row(deps.db, ctx)
    containers.update_(deps.db, uuid, {"task_state": TaskState.CONTAINER_DELETING})
    with pytest.raises(exc.TaskInProgress):
        common.begin_task(deps, ctx, uuid, TaskState.CONTAINER_CREATING, EVENT,
                          expect=CREATING)
    assert containers.get_by_uuid(deps.db, uuid).task_state == TaskState.CONTAINER_DELETING
    assert events_of(deps.db, uuid, ctx) == []


def test_begin_task_on_a_removed_row_is_not_found(deps: AgentDeps) -> None:
    ctx = RequestContext.admin()
    uuid = creating_row(deps.db, ctx)
    containers.destroy(deps.db, uuid)
    with pytest.raises(exc.ContainerNotFound):
        common.begin_task(deps, ctx, uuid, TaskState.CONTAINER_CREATING, EVENT,
                          expect=CREATING)


def test_overlapped_runs_elsewhere_and_logs_under_the_container(
        deps: AgentDeps, caplog: pytest.LogCaptureFixture) -> None:
    log = logging.getLogger("berth.test.overlap")
    caplog.handler.addFilter(ContainerFilter())

    def work(x: int) -> tuple[int, str]:
        log.warning("overlapped work")
        return x * 2, threading.current_thread().name

    with caplog.at_level(logging.WARNING, "berth.test.overlap"), container_context("c-1"):
        future = common.overlapped(deps, work, 21)
        value, thread = future.result(10)
    assert value == 42
    assert thread != threading.current_thread().name
    [record] = [r for r in caplog.records if r.getMessage() == "overlapped work"]
    assert record.container == "c-1"   # type: ignore[attr-defined]


def test_settle_waits_and_swallows_the_failure(deps: AgentDeps) -> None:
    release = threading.Event()

    def fails() -> None:
        release.wait(10)
        raise RuntimeError("engine said no")

    future = common.overlapped(deps, fails)
    release.set()
    common.settle(future)          # no exception: the undo goes on
    assert future.done()
    assert isinstance(future.exception(), RuntimeError)
