"""flows.outage: a flow cut short by a database outage runs again once the database
answers, and past its patience ends in Error saying the database was unreachable,
with nothing held. A real SQLite database whose writes are made to fail for a while
(the outage), and the in-memory engine of tests/support/fake_runtime.py."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy.exc
from support.agent_deps import add_node, agent_deps
from support.fake_runtime import FakeRuntime, ImageRuntime
from support.write_outage import Outage, gone

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.compute.deps import AgentDeps
from berth.compute.flows import actions as actions_flow
from berth.compute.flows import create, lifecycle, outage
from berth.db import actions, containers
from berth.db.engine import Database

HOST = "n1"


# -- patiently ---------------------------------------------------------------------------

def test_an_attempt_cut_short_by_the_database_runs_again_told_it_is_a_retry() -> None:
    seen: list[bool] = []
    pauses: list[float] = []

    def attempt(retry: bool) -> str:
        seen.append(retry)
        if len(seen) < 3:
            raise gone()
        return "done"

    assert outage.patiently(attempt, what="testing", sleep=pauses.append) == "done"
    assert seen == [False, True, True]
    assert pauses == [1.0, 2.0]


def test_no_pause_goes_past_the_patience() -> None:
    calls: list[bool] = []
    pauses: list[float] = []

    def attempt(retry: bool) -> None:
        calls.append(retry)
        raise gone()

    with pytest.raises(sqlalchemy.exc.OperationalError):
        outage.patiently(attempt, what="testing", patience=0.5, sleep=pauses.append)
    assert (calls, pauses) == ([False], [])


def test_another_error_is_not_retried() -> None:
    calls: list[bool] = []

    def attempt(retry: bool) -> None:
        calls.append(retry)
        raise ValueError("not the database")

    with pytest.raises(ValueError):
        outage.patiently(attempt, what="testing", sleep=lambda _: None)
    assert calls == [False]


def test_past_the_patience_the_last_database_error_goes_on() -> None:
    def attempt(retry: bool) -> None:
        raise sqlalchemy.exc.TimeoutError("QueuePool limit of size 5 overflow 10 reached")

    with pytest.raises(sqlalchemy.exc.TimeoutError):
        outage.patiently(attempt, what="testing", patience=0.0, sleep=lambda _: None)


# -- flows -------------------------------------------------------------------------------

@pytest.fixture
def deps(db: Database) -> Iterator[AgentDeps]:
    add_node(db, HOST)
    d = agent_deps(db, ImageRuntime(), HOST, database_patience=2.0)
    yield d
    d.overlap.shutdown(wait=True)


def new_row(deps: AgentDeps, ctx: RequestContext, **values: object) -> str:
    values = {"status": "Creating", "host": HOST, "project_id": "p1", "cpu": 0.5,
              "memory": "64", "image": "busybox", "image_pull_policy": "ifnotpresent",
              **values}
    return containers.create(deps.db, values,
                             along=lambda u: [actions.new_action(ctx, u, "create")]).uuid


def handing_over(values: dict[str, Any]) -> bool:
    return values.get("task_state") == "container_starting"


def test_a_create_cut_short_after_docker_create_is_done_again_once_the_database_answers(
        deps: AgentDeps, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = RequestContext.admin()
    uuid = new_row(deps, ctx)
    cut = Outage(monkeypatch, handing_over, seconds=0.3)
    create.create_container(deps, ctx, uuid, run=True)
    assert cut.failed >= 1
    row = containers.get_by_uuid(deps.db, uuid)
    assert (row.status, row.task_state) == ("Running", None)
    engine = deps.runtime
    assert isinstance(engine, FakeRuntime)
    assert list(engine.containers) == [row.container_id]    # the first one was removed


def test_a_create_past_its_patience_ends_in_error_saying_why_with_nothing_left(
        deps: AgentDeps, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = RequestContext.admin()
    uuid = new_row(deps, ctx)
    Outage(monkeypatch, handing_over, seconds=1.5)
    create.create_container(deps, ctx, uuid, run=True)
    row = containers.get_by_uuid(deps.db, uuid)
    assert (row.status, row.task_state, row.container_id) == ("Error", None, None)
    assert "database was unreachable" in (row.status_reason or "")
    engine = deps.runtime
    assert isinstance(engine, FakeRuntime)
    assert engine.containers == {}


def test_a_stop_cut_short_is_done_again_once_the_database_answers(
        deps: AgentDeps, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = RequestContext.admin()
    uuid = new_row(deps, ctx)
    create.create_container(deps, ctx, uuid, run=True)
    cut = Outage(monkeypatch, lambda values: values.get("status") == "Stopped", seconds=0.3)
    lifecycle.stop_container(deps, ctx, uuid, timeout=None)
    assert cut.failed >= 1
    row = containers.get_by_uuid(deps.db, uuid)
    assert (row.status, row.task_state) == ("Stopped", None)


def renaming(values: dict[str, Any]) -> bool:
    """The update's last write (the new name), after its claim and Docker's update."""
    return "name" in values


def test_an_update_cut_short_is_done_again_once_the_database_answers(
        deps: AgentDeps, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = RequestContext.admin()
    uuid = new_row(deps, ctx)
    create.create_container(deps, ctx, uuid, run=True)
    cut = Outage(monkeypatch, renaming, seconds=0.3)
    row = actions_flow.update_container(deps, uuid, {"memory": 128, "name": "renamed"})
    assert cut.failed >= 1
    assert (row.memory, row.name, row.status) == ("128", "renamed", "Running")
    engine = deps.runtime
    assert isinstance(engine, FakeRuntime)
    assert engine.containers[row.container_id or ""].memory_mib == 128


def test_an_update_past_its_patience_is_refused_saying_why_with_row_and_docker_agreeing(
        deps: AgentDeps, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = RequestContext.admin()
    uuid = new_row(deps, ctx)
    create.create_container(deps, ctx, uuid, run=True)
    Outage(monkeypatch, renaming, seconds=2.5)
    with pytest.raises(exc.ServiceUnavailable, match="database was unreachable"):
        actions_flow.update_container(deps, uuid, {"memory": 128, "name": "renamed"})
    row = containers.get_by_uuid(deps.db, uuid)
    engine = deps.runtime
    assert isinstance(engine, FakeRuntime)
    # The container runs on; its limits are what the row (the claim) holds.
    assert (row.status, row.task_state, row.name) == ("Running", None, None)
    assert engine.containers[row.container_id or ""].memory_mib == int(row.memory or 0)
    assert "database was unreachable" in (row.status_reason or "")
    assert "during the update" in (row.status_reason or "")
