"""expire_tasks (TaskExpirer): overdue tasks of this host are failed with a reason, on a
real SQLite database, an in-memory engine and an injected clock."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.agent_deps import HOST, agent_deps, node_database
from support.fake_runtime import FakeRuntime

from berth.compute.deps import AgentDeps
from berth.compute.periodic.task_deadlines import TaskExpirer
from berth.compute.states import Status, TaskState
from berth.db import containers, nodes
from berth.db.engine import Database
from berth.runtime.base import RunState

T0 = dt.datetime(2030, 1, 1, 12, 0, 0)          # naive UTC, as the database stores times


class Clock:
    def __init__(self, now: dt.datetime) -> None:
        self.now = now

    def __call__(self) -> dt.datetime:
        return self.now


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    yield from node_database(tmp_path)


@pytest.fixture
def engine() -> FakeRuntime:
    return FakeRuntime()


@pytest.fixture
def deps(db: Database, engine: FakeRuntime) -> AgentDeps:
    return agent_deps(db, engine, task_state_timeout=600, create_task_timeout=1800)


def busy_row(db: Database, engine: FakeRuntime, task: str, deadline: dt.datetime,
             status: str = Status.RUNNING, run_state: RunState | None = RunState.RUNNING,
             host: str = HOST, **extra: Any):  # type: ignore[no-untyped-def]
    r = containers.create(db, dict(project_id="p1", status=status, task_state=task,
                                   task_deadline=deadline, host=host, cpu=1.0, **extra))
    if run_state is not None:
        cid = engine.add(r.uuid, host, run_state, started=run_state != RunState.CREATED)
        r = containers.update_(db, r.uuid, {"container_id": cid})
    return r


def test_overdue_stop_is_failed_with_a_reason_then_read_from_docker(
        db: Database, deps: AgentDeps, engine: FakeRuntime) -> None:
    r = busy_row(db, engine, TaskState.CONTAINER_STOPPING, T0, run_state=RunState.RUNNING)
    clock = Clock(T0 + dt.timedelta(seconds=1))
    assert TaskExpirer(deps, clock=clock).run() == 1
    after = containers.get_by_uuid(db, r.uuid)
    assert (after.task_state, after.task_deadline) == (None, None)
    assert after.status == Status.RUNNING       # what Docker says, after the Error write
    assert after.status_reason == (
        "container_stopping did not finish within 600 s (the agent may have lost the "
        "request); Docker shows the container Running: retry the action if it is still "
        "wanted")


def test_overdue_task_whose_container_is_gone_stays_error(db: Database, deps: AgentDeps,
                                                          engine: FakeRuntime) -> None:
    r = busy_row(db, engine, TaskState.CONTAINER_DELETING, T0, status=Status.DELETING,
                 run_state=None, container_id="g" * 64)
    TaskExpirer(deps, clock=Clock(T0 + dt.timedelta(minutes=1))).run()
    after = containers.get_by_uuid(db, r.uuid)
    assert (after.status, after.task_state) == (Status.ERROR, None)
    assert after.status_reason.startswith("container_deleting did not finish within 600 s")


def test_task_before_its_deadline_is_left_alone(db: Database, deps: AgentDeps,
                                                engine: FakeRuntime) -> None:
    r = busy_row(db, engine, TaskState.CONTAINER_STOPPING, T0)
    assert TaskExpirer(deps, clock=Clock(T0 - dt.timedelta(seconds=1))).run() == 0
    assert containers.get_by_uuid(db, r.uuid).task_state == TaskState.CONTAINER_STOPPING


def test_task_still_running_on_this_agent_is_left_alone(db: Database, deps: AgentDeps,
                                                        engine: FakeRuntime) -> None:
    r = busy_row(db, engine, TaskState.CONTAINER_STOPPING, T0)
    expirer = TaskExpirer(deps, is_busy=lambda uuid: uuid == r.uuid,
                          clock=Clock(T0 + dt.timedelta(hours=1)))
    assert expirer.run() == 0
    assert expirer.run() == 0
    assert containers.get_by_uuid(db, r.uuid).task_state == TaskState.CONTAINER_STOPPING


def test_rows_of_other_hosts_and_rows_without_deadline_are_left_alone(
        db: Database, deps: AgentDeps, engine: FakeRuntime) -> None:
    other = busy_row(db, engine, TaskState.CONTAINER_STOPPING, T0, host="node2")
    none = busy_row(db, engine, TaskState.CONTAINER_STOPPING, None)  # type: ignore[arg-type]
    assert TaskExpirer(deps, clock=Clock(T0 + dt.timedelta(days=1))).run() == 0
    assert containers.get_by_uuid(db, other.uuid).task_state == TaskState.CONTAINER_STOPPING
    assert containers.get_by_uuid(db, none.uuid).task_state == TaskState.CONTAINER_STOPPING


def test_overdue_create_is_failed_and_its_docker_container_removed(
        db: Database, deps: AgentDeps, engine: FakeRuntime) -> None:
    r = busy_row(db, engine, TaskState.IMAGE_PULLING, T0, status=Status.CREATING,
                 run_state=None)
    cid = engine.add(r.uuid, HOST, RunState.CREATED, started=False)   # id never saved
    TaskExpirer(deps, clock=Clock(T0 + dt.timedelta(seconds=30))).run()
    after = containers.get_by_uuid(db, r.uuid)
    assert after.status == Status.ERROR and after.task_state is None
    assert after.status_reason.startswith(
        "Container failed to create correctly: image_pulling did not finish within 1800 s")
    assert cid not in engine.containers
    assert float(nodes.get_compute_node(db, HOST).cpu_used or 0) == 0.0


def test_a_task_that_moved_on_meanwhile_is_not_clobbered(
        db: Database, deps: AgentDeps, engine: FakeRuntime,
        monkeypatch: pytest.MonkeyPatch) -> None:
    r = busy_row(db, engine, TaskState.CONTAINER_STOPPING, T0)
    stale = containers.get_by_uuid(db, r.uuid)
    # The task ended and the same task was set again, with a new deadline, between the
    # expirer's read and its write.
    later = T0 + dt.timedelta(hours=1)
    containers.update_(db, r.uuid, {"task_deadline": later})
    monkeypatch.setattr(containers, "list_past_deadline", lambda *a, **k: [stale])
    assert TaskExpirer(deps, clock=Clock(T0 + dt.timedelta(seconds=5))).run() == 0
    after = containers.get_by_uuid(db, r.uuid)
    assert (after.task_state, after.task_deadline) == (TaskState.CONTAINER_STOPPING, later)
    assert after.status == Status.RUNNING and after.status_reason is None


def test_a_create_that_finished_after_the_read_keeps_its_docker_container(
        db: Database, deps: AgentDeps, engine: FakeRuntime,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The expirer read a create past its deadline; the create then finished (the
    container ran and stopped) before the expirer acted: nothing is written and the
    Docker container stays (it was removed first, leaving a Stopped row over nothing)."""
    r = busy_row(db, engine, TaskState.CONTAINER_CREATING, T0, status=Status.CREATING,
                 run_state=None)
    stale = containers.get_by_uuid(db, r.uuid)
    cid = engine.add(r.uuid, HOST, RunState.EXITED)
    containers.update_(db, r.uuid, {"status": Status.STOPPED, "task_state": None,
                                    "task_deadline": None, "container_id": cid})
    monkeypatch.setattr(containers, "list_past_deadline", lambda *a, **k: [stale])
    assert TaskExpirer(deps, clock=Clock(T0 + dt.timedelta(seconds=5))).run() == 0
    after = containers.get_by_uuid(db, r.uuid)
    assert (after.status, after.container_id) == (Status.STOPPED, cid)
    assert cid in engine.containers


def test_one_failing_row_does_not_stop_the_others(db: Database, deps: AgentDeps,
                                                  engine: FakeRuntime) -> None:
    bad = busy_row(db, engine, TaskState.CONTAINER_STOPPING, T0)
    engine.broken[bad.container_id] = ValueError("engine answered nonsense")
    good = busy_row(db, engine, TaskState.CONTAINER_STARTING, T0)
    assert TaskExpirer(deps, clock=Clock(T0 + dt.timedelta(seconds=5))).run() == 1
    assert containers.get_by_uuid(db, good.uuid).task_state is None
