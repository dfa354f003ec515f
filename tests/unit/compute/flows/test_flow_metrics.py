"""What the flows count and time (berth_compute_actions, berth_compute_action_duration_
seconds, berth_compute_create_phase_duration_seconds): a real SQLite database and the
in-memory engine of tests/support/fake_runtime.py."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest
from support.agent_deps import add_node, agent_deps
from support.fake_runtime import ImageRuntime
from support.metrics import sample

from berth.common.context import RequestContext
from berth.compute.capsules import delete as capsule_delete
from berth.compute.deps import AgentDeps
from berth.compute.flows import create, delete, lifecycle
from berth.compute.states import TaskState
from berth.db import actions, containers
from berth.db.capsules import CAPSULE
from berth.db.engine import Database
from berth.runtime import base as rt

HOST = "n1"


@pytest.fixture
def deps(db: Database) -> Iterator[AgentDeps]:
    add_node(db, HOST)
    d = agent_deps(db, ImageRuntime(), HOST)
    yield d
    d.overlap.shutdown(wait=True)


def actions_of(action: str, result: str) -> float:
    return sample("berth_compute_actions_total", action=action, result=result)


def phase(name: str) -> float:
    return sample("berth_compute_create_phase_duration_seconds_count", phase=name, result="ok")


def new_row(deps: AgentDeps, ctx: RequestContext, **values: object) -> str:
    values = {"status": "Creating", "host": HOST, "project_id": "p1", "cpu": 0.5,
              "memory": "64", "image": "busybox", "image_pull_policy": "ifnotpresent",
              **values}
    return containers.create(deps.db, values,
                             along=lambda u: [actions.new_action(ctx, u, "create")]).uuid


def test_a_create_with_run_counts_create_and_start_and_times_its_three_phases(
        deps: AgentDeps) -> None:
    ctx = RequestContext.admin()
    before = {a: actions_of(a, "success") for a in ("create", "start")}
    phases = {p: phase(p) for p in ("pull", "create", "start")}
    uuid = new_row(deps, ctx)
    create.create_container(deps, ctx, uuid, run=True)
    assert containers.get_by_uuid(deps.db, uuid).status == "Running"
    assert {a: actions_of(a, "success") for a in ("create", "start")} == \
        {a: n + 1 for a, n in before.items()}
    assert {p: phase(p) for p in ("pull", "create", "start")} == \
        {p: n + 1 for p, n in phases.items()}


def test_a_stop_that_fails_is_an_error_and_one_that_works_a_success(deps: AgentDeps) -> None:
    ctx = RequestContext.admin()
    never_created = new_row(deps, ctx, status="Created")     # no Docker container
    failed = actions_of("stop", "error")
    lifecycle.stop_container(deps, ctx, never_created, timeout=None)
    assert actions_of("stop", "error") == failed + 1

    uuid = new_row(deps, ctx)
    create.create_container(deps, ctx, uuid, run=True)
    ok = actions_of("stop", "success")
    timed = sample("berth_compute_action_duration_seconds_count", action="stop")
    lifecycle.stop_container(deps, ctx, uuid, timeout=None)
    assert containers.get_by_uuid(deps.db, uuid).status == "Stopped"
    assert actions_of("stop", "success") == ok + 1
    assert sample("berth_compute_action_duration_seconds_count", action="stop") == timed + 1


def test_a_delete_counts_success_and_a_refused_delete_an_error(deps: AgentDeps) -> None:
    ctx = RequestContext.admin()
    busy = new_row(deps, ctx, status="Running")
    containers.update_(deps.db, busy, {"task_state": TaskState.CONTAINER_STOPPING})
    failed = actions_of("delete", "error")
    delete.delete_container(deps, ctx, busy, force=False)
    assert containers.find_by_uuid(deps.db, busy) is not None
    assert actions_of("delete", "error") == failed + 1

    uuid = new_row(deps, ctx)
    create.create_container(deps, ctx, uuid, run=False)
    ok = actions_of("delete", "success")
    delete.delete_container(deps, ctx, uuid, force=False)
    assert containers.find_by_uuid(deps.db, uuid) is None
    assert actions_of("delete", "success") == ok + 1


class StuckRuntime(ImageRuntime):
    """An engine that will not remove anything."""

    def delete(self, container_id: str, force: bool = False) -> None:
        raise rt.RuntimeConflict(reason="device or resource busy")


def test_a_capsule_delete_counts_as_a_delete(deps: AgentDeps) -> None:
    ctx = RequestContext.admin()
    stuck = new_row(deps, ctx, status="Running", container_type=CAPSULE,
                    container_id=deps.runtime.add("x", HOST))
    failed = actions_of("delete", "error")
    capsule_delete.delete_capsule(replace(deps, runtime=StuckRuntime()), ctx, stuck,
                                  force=False)
    assert containers.find_by_uuid(deps.db, stuck) is not None
    assert actions_of("delete", "error") == failed + 1

    ok = actions_of("delete", "success")
    capsule_delete.delete_capsule(deps, ctx, stuck, force=False)
    assert containers.find_by_uuid(deps.db, stuck) is None
    assert actions_of("delete", "success") == ok + 1
