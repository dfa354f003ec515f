"""flows.unexpected: a flow that raises something it did not plan for (a bug, an
engine answer berth cannot read) ends with the row in Error saying what failed, or as
Docker reports it, never in the transitional status written before the work with no
task and so no deadline. A real SQLite database and the in-memory engine of
tests/support/fake_runtime.py, one of whose calls is made to raise."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.agent_deps import add_node, agent_deps
from support.fake_runtime import FakeRuntime

from berth.common.context import RequestContext
from berth.compute.deps import AgentDeps
from berth.compute.flows import actions as action_flows
from berth.compute.flows import create, delete, rebuild, unexpected
from berth.compute.states import Status
from berth.db import actions, containers
from berth.db.engine import Database
from berth.runtime import base as rt

HOST = "n1"


# -- the pure parts ----------------------------------------------------------------------

@pytest.mark.parametrize("status", ["Creating", "Restarting", "Rebuilding", "Deleting"])
def test_a_transitional_status_must_go_to_error(status: str) -> None:
    assert unexpected.must_fail(status, None)


@pytest.mark.parametrize("status", ["Created", "Running", "Stopped", "Paused", "Error"])
def test_a_settled_status_stays_unless_a_task_is_left(status: str) -> None:
    assert not unexpected.must_fail(status, None)
    assert unexpected.must_fail(status, "container_pausing")


def test_the_reason_names_the_action_and_the_error() -> None:
    reason = unexpected.reason_for("reboot", KeyError("State"))
    assert reason.startswith("The reboot failed unexpectedly (KeyError: 'State');")
    assert "retry the reboot or delete" in reason
    assert unexpected.reason_for("delete", ValueError()).startswith(
        "The delete failed unexpectedly (ValueError);")


# -- the flows ---------------------------------------------------------------------------

class Unreadable(Exception):
    """Stands for an engine answer berth cannot read (not a RuntimeDriverError)."""


class BrokenRuntime(FakeRuntime):
    """FakeRuntime with every image present, whose ``failing`` calls raise Unreadable."""

    def __init__(self) -> None:
        super().__init__()
        self.failing: set[str] = set()

    def _maybe_fail(self, call: str) -> None:
        if call in self.failing:
            raise Unreadable(f"the engine's answer to {call} could not be read")

    def inspect_image(self, ref: str) -> rt.ImageInfo:
        return rt.ImageInfo(id="sha256:1", repo_tags=(ref,), size=1, cmd=("sh",),
                            entrypoint=None)

    def create(self, spec: rt.ContainerSpec) -> str:
        cid = super().create(spec)        # made, as a real engine would have
        self._maybe_fail("create")
        return cid

    def restart(self, container_id: str, timeout: int | None = None) -> None:
        self.start(container_id)
        self._maybe_fail("restart")

    def pause(self, container_id: str) -> None:
        self._maybe_fail("pause")

    def delete(self, container_id: str, force: bool = False) -> None:
        self._maybe_fail("delete")
        super().delete(container_id, force)


@pytest.fixture
def engine() -> BrokenRuntime:
    return BrokenRuntime()


@pytest.fixture
def deps(db: Database, engine: BrokenRuntime) -> Iterator[AgentDeps]:
    add_node(db, HOST)
    d = agent_deps(db, engine, HOST, database_patience=2.0)
    yield d
    d.overlap.shutdown(wait=True)


def running_container(deps: AgentDeps, ctx: RequestContext) -> str:
    row = containers.create(deps.db, {
        "status": "Creating", "host": HOST, "project_id": "p1", "cpu": 0.5, "memory": "64",
        "image": "busybox", "image_pull_policy": "ifnotpresent"},
        along=lambda u: [actions.new_action(ctx, u, "create")])
    create.create_container(deps, ctx, row.uuid, run=True)
    assert containers.get_by_uuid(deps.db, row.uuid).status == "Running"
    return row.uuid


def as_the_api_sets_it(deps: AgentDeps, uuid: str, action: str, status: str | None
                       ) -> RequestContext:
    """The API's part of an action: its record, and the status it writes first."""
    ctx = RequestContext.admin()
    actions.action_start(deps.db, ctx, uuid, action)
    if status is not None:
        containers.update_(deps.db, uuid, {"status": status})
    return ctx


def action_message(deps: AgentDeps, uuid: str, ctx: RequestContext) -> str | None:
    """The message of the request's action, which must be finished, and whose events
    must say which failed, with the traceback."""
    action, events = actions.get_action(deps.db, uuid, ctx.request_id)
    assert action.finish_time is not None
    failed = [e for e in events if e.result == "Error"]
    assert failed and "Unreadable" in (failed[-1].traceback or "")
    return action.message


def test_a_reboot_failing_unexpectedly_is_not_left_restarting(
        deps: AgentDeps, engine: BrokenRuntime) -> None:
    uuid = running_container(deps, RequestContext.admin())
    ctx = as_the_api_sets_it(deps, uuid, "reboot", Status.RESTARTING)
    engine.failing.add("restart")
    action_flows.reboot_container(deps, ctx, uuid, timeout=None)
    row = containers.get_by_uuid(deps.db, uuid)
    # Docker runs it: the status it reports, and the reason says what failed.
    assert (row.status, row.task_state, row.task_deadline) == ("Running", None, None)
    assert (row.status_reason or "").startswith("The reboot failed unexpectedly (Unreadable")
    assert action_message(deps, uuid, ctx) == "Error"


def test_a_rebuild_failing_unexpectedly_ends_in_error_with_nothing_held(
        deps: AgentDeps, engine: BrokenRuntime) -> None:
    uuid = running_container(deps, RequestContext.admin())
    ctx = as_the_api_sets_it(deps, uuid, "rebuild", Status.REBUILDING)
    engine.failing.add("create")
    rebuild.rebuild_container(deps, ctx, uuid, run=True)
    row = containers.get_by_uuid(deps.db, uuid)
    assert (row.status, row.task_state, row.container_id) == ("Error", None, None)
    assert (row.status_reason or "").startswith("The rebuild failed unexpectedly")
    assert engine.containers == {}          # the new container the engine made: removed
    assert action_message(deps, uuid, ctx) == "Error"


def test_a_delete_failing_unexpectedly_is_not_left_deleting(
        deps: AgentDeps, engine: BrokenRuntime) -> None:
    uuid = running_container(deps, RequestContext.admin())
    ctx = as_the_api_sets_it(deps, uuid, "delete", Status.DELETING)
    engine.failing.add("delete")
    delete.delete_container(deps, ctx, uuid, force=True)
    row = containers.get_by_uuid(deps.db, uuid)
    assert row.task_state is None
    assert (row.status_reason or "").startswith("The delete failed unexpectedly")
    assert row.status == "Running"        # what Docker reports: delete it again
    engine.failing.clear()
    delete.delete_container(deps, ctx, uuid, force=True)
    assert containers.find_by_uuid(deps.db, uuid) is None


def test_a_create_failing_unexpectedly_ends_in_error_with_nothing_left(
        deps: AgentDeps, engine: BrokenRuntime) -> None:
    ctx = RequestContext.admin()
    engine.failing.add("create")
    row = containers.create(deps.db, {
        "status": "Creating", "host": HOST, "project_id": "p1", "cpu": 0.5, "memory": "64",
        "image": "busybox", "image_pull_policy": "ifnotpresent"},
        along=lambda u: [actions.new_action(ctx, u, "create")])
    create.create_container(deps, ctx, row.uuid, run=True)
    row = containers.get_by_uuid(deps.db, row.uuid)
    assert (row.status, row.task_state, row.container_id) == ("Error", None, None)
    assert (row.status_reason or "").startswith("The create failed unexpectedly")
    assert engine.containers == {}


def test_a_pause_failing_unexpectedly_leaves_the_status_docker_reports(
        deps: AgentDeps, engine: BrokenRuntime) -> None:
    uuid = running_container(deps, RequestContext.admin())
    ctx = as_the_api_sets_it(deps, uuid, "pause", None)
    engine.failing.add("pause")
    action_flows.pause_container(deps, ctx, uuid)
    row = containers.get_by_uuid(deps.db, uuid)
    assert (row.status, row.task_state, row.status_reason) == ("Running", None, None)
    assert action_message(deps, uuid, ctx) == "Error"


def test_a_row_another_actor_moved_on_is_left_to_it(deps: AgentDeps) -> None:
    uuid = running_container(deps, RequestContext.admin())
    containers.update_(deps.db, uuid, {"status": Status.DELETING.value})
    real = containers.find_by_uuid

    def read_then_move_on(db: Database, wanted: str):  # type: ignore[no-untyped-def]
        row = real(db, wanted)
        containers.update_(db, wanted, {"task_state": "container_deleting"})  # a delete
        return row

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(containers, "find_by_uuid", read_then_move_on)
        unexpected.settle(deps, uuid, "reboot", ValueError("boom"))
    row = containers.get_by_uuid(deps.db, uuid)
    assert (row.status, row.task_state) == ("Deleting", "container_deleting")
