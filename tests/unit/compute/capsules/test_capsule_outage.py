"""A capsule's create and delete cut short by a database outage (flows.outage): done
again once the database answers, from what the cut-short attempt left; past the
patience, the capsule (and its members) in Error saying the database was unreachable,
with nothing left in the engine. A real SQLite database whose writes are made to fail
for a while, and the in-memory engine of tests/support/fake_runtime.py."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from support.agent_deps import add_node, agent_deps
from support.fake_runtime import ImageRuntime
from support.write_outage import Outage

from berth.common.context import RequestContext
from berth.compute.capsules import create as capsule_create
from berth.compute.capsules import delete as capsule_delete
from berth.compute.deps import AgentDeps
from berth.db import actions, capsules, containers
from berth.db.engine import Database

HOST = "n1"


@pytest.fixture
def engine() -> ImageRuntime:
    return ImageRuntime()


@pytest.fixture
def deps(db: Database, engine: ImageRuntime) -> Iterator[AgentDeps]:
    add_node(db, HOST)
    d = agent_deps(db, engine, HOST, database_patience=2.0,
                   sandbox_image="berth-test/pause:1")
    yield d
    d.overlap.shutdown(wait=True)


def new_capsule(deps: AgentDeps, ctx: RequestContext) -> str:
    common = {"host": HOST, "project_id": "p1", "status": "Creating", "cpu": 0.1,
              "memory": "16", "image": "busybox", "image_pull_policy": "ifnotpresent"}
    row = capsules.create(deps.db, {**common, "name": "cap", "cpu": 0.2, "memory": "32"}, [
        {**common, "name": "a", "container_type": capsules.MEMBER, "command": ["sleep"]},
        {**common, "name": "b", "container_type": capsules.MEMBER, "command": ["sleep"]}],
        along=lambda u: [actions.new_action(ctx, u, "create")])
    return row.uuid


def member_rows(deps: AgentDeps, uuid: str) -> list[Any]:
    row = containers.get_by_uuid(deps.db, uuid)
    inits, members = capsules.members_of(deps.db, row.id)
    return [*inits, *members]


def recording_member(values: dict[str, Any]) -> bool:
    """The write that records a member's Docker container: the middle of the create."""
    return "container_id" in values and "status" in values


def test_a_capsule_create_cut_short_is_done_again_once_the_database_answers(
        deps: AgentDeps, engine: ImageRuntime, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = RequestContext.admin()
    uuid = new_capsule(deps, ctx)
    cut = Outage(monkeypatch, recording_member, seconds=0.3)
    capsule_create.create_capsule(deps, ctx, uuid)
    assert cut.failed >= 1
    row = containers.get_by_uuid(deps.db, uuid)
    assert (row.status, row.task_state) == ("Running", None)
    members = member_rows(deps, uuid)
    assert {m.status for m in members} == {"Running"}
    # only what the row and its members name: the cut-short attempt's were removed
    assert set(engine.containers) == {row.container_id, *(m.container_id for m in members)}


def test_a_capsule_create_past_its_patience_ends_in_error_with_nothing_left(
        deps: AgentDeps, engine: ImageRuntime, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = RequestContext.admin()
    uuid = new_capsule(deps, ctx)
    Outage(monkeypatch, recording_member, seconds=2.5)
    capsule_create.create_capsule(deps, ctx, uuid)
    row = containers.get_by_uuid(deps.db, uuid)
    assert (row.status, row.task_state, row.container_id) == ("Error", None, None)
    assert "database was unreachable" in (row.status_reason or "")
    assert "capsule create" in (row.status_reason or "")
    assert {(m.status, m.container_id) for m in member_rows(deps, uuid)} == {("Error", None)}
    assert engine.containers == {}


def _running_capsule(deps: AgentDeps) -> str:
    ctx = RequestContext.admin()
    uuid = new_capsule(deps, ctx)
    capsule_create.create_capsule(deps, ctx, uuid)
    assert containers.get_by_uuid(deps.db, uuid).status == "Running"
    containers.update_(deps.db, uuid, {"status": "Deleting"})     # as the API does
    return uuid


def deleting(values: dict[str, Any]) -> bool:
    return values.get("task_state") == "container_deleting"


def test_a_capsule_delete_cut_short_is_done_again_once_the_database_answers(
        deps: AgentDeps, engine: ImageRuntime, monkeypatch: pytest.MonkeyPatch) -> None:
    uuid = _running_capsule(deps)
    cut = Outage(monkeypatch, deleting, seconds=0.3)
    capsule_delete.delete_capsule(deps, RequestContext.admin(), uuid, force=False)
    assert cut.failed >= 1
    assert containers.find_by_uuid(deps.db, uuid) is None
    assert engine.containers == {}


def test_a_capsule_delete_past_its_patience_ends_in_error_not_deleting(
        deps: AgentDeps, engine: ImageRuntime, monkeypatch: pytest.MonkeyPatch) -> None:
    uuid = _running_capsule(deps)
    Outage(monkeypatch, deleting, seconds=2.5)
    capsule_delete.delete_capsule(deps, RequestContext.admin(), uuid, force=False)
    row = containers.get_by_uuid(deps.db, uuid)
    assert (row.status, row.task_state, row.container_id) == ("Error", None, None)
    assert "database was unreachable" in (row.status_reason or "")
    assert {(m.status, m.container_id) for m in member_rows(deps, uuid)} == {("Error", None)}
    assert engine.containers == {}      # what the delete had not removed yet: removed
    monkeypatch.undo()
    capsule_delete.delete_capsule(deps, RequestContext.admin(), uuid, force=False)
    assert containers.find_by_uuid(deps.db, uuid) is None
    assert engine.containers == {}
