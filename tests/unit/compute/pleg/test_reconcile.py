"""sync_container (what one PLEG event does to one row) on a real SQLite database and
the in-memory sync_engine."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from berth.compute.deps import AgentDeps
from berth.compute.pleg import reconcile
from berth.compute.pleg.reconcile import Outcome, describe, sync_container
from berth.compute.states import Status
from berth.db import containers
from berth.db.engine import Database
from berth.db.models import Container
from berth.runtime import base as rt
from berth.runtime.base import RunState

RowFactory = Callable[..., Container]
Engine = Any      # conftest.CountingRuntime


def get(db: Database, r: Container) -> Container:
    return containers.get_by_uuid(db, r.uuid)


def test_a_dead_container_makes_its_row_stopped_with_the_oom_reason(
        sync_db: Database, sync_deps: AgentDeps, sync_engine: Engine,
        sync_row: RowFactory) -> None:
    r = sync_row(Status.RUNNING, RunState.EXITED)
    c = sync_engine.containers[r.container_id]
    assert c.state is not None
    sync_engine.containers[r.container_id] = replace(
        c, state=replace(c.state, exit_code=137, oom_killed=True))
    assert sync_container(sync_deps, r.uuid) is Outcome.UPDATED
    after = get(sync_db, r)
    assert after.status == Status.STOPPED
    assert after.status_reason.startswith("OOMKilled")
    assert sync_container(sync_deps, r.uuid) is Outcome.UNCHANGED


def test_rows_that_are_not_ours_or_busy_are_not_inspected(
        sync_db: Database, sync_deps: AgentDeps, sync_engine: Engine,
        sync_row: RowFactory) -> None:
    other = sync_row(Status.RUNNING, RunState.EXITED, host="other-host")
    busy = sync_row(Status.RUNNING, RunState.EXITED, task_state="container_stopping")
    deleted = sync_row(Status.DELETED, RunState.EXITED)
    for r in (other, busy, deleted):
        assert sync_container(sync_deps, r.uuid) is Outcome.SKIPPED
    assert sync_container(sync_deps, "not-a-row-of-ours") is Outcome.SKIPPED
    assert sync_engine.inspected == []
    assert get(sync_db, other).status == Status.RUNNING


def test_a_container_being_removed_waits_for_its_destroy_event(
        sync_db: Database, sync_deps: AgentDeps, sync_engine: Engine,
        sync_row: RowFactory) -> None:
    r = sync_row(Status.RUNNING, RunState.RUNNING)
    sync_engine.set_state(r.container_id, RunState.REMOVING)
    assert sync_container(sync_deps, r.uuid) is Outcome.REMOVING
    assert get(sync_db, r).status == Status.RUNNING
    del sync_engine.containers[r.container_id]
    assert sync_container(sync_deps, r.uuid) is Outcome.ERROR
    assert get(sync_db, r).status_reason.startswith(f"No such container: {r.container_id} in docker")


def test_a_task_that_began_during_the_inspect_wins(
        sync_db: Database, sync_deps: AgentDeps, sync_engine: Engine,
        sync_row: RowFactory,
        monkeypatch: pytest.MonkeyPatch) -> None:
    r = sync_row(Status.RUNNING, RunState.EXITED)
    real_inspect = sync_engine.inspect

    def inspect_while_a_start_begins(cid: str) -> rt.RuntimeContainer:
        containers.update_(sync_db, r.uuid, {"task_state": "container_starting"})
        return real_inspect(cid)

    monkeypatch.setattr(sync_engine, "inspect", inspect_while_a_start_begins)
    assert sync_container(sync_deps, r.uuid) is Outcome.SKIPPED
    assert get(sync_db, r).status == Status.RUNNING


def test_engine_errors_propagate_for_a_retry(
        sync_db: Database, sync_deps: AgentDeps, sync_engine: Engine,
        sync_row: RowFactory) -> None:
    r = sync_row(Status.RUNNING, RunState.EXITED)
    sync_engine.broken[r.container_id] = rt.RuntimeUnavailable(reason="timeout")
    with pytest.raises(rt.RuntimeUnavailable):
        sync_container(sync_deps, r.uuid)


def test_one_heal_at_a_time_per_container(
        sync_db: Database, sync_deps: AgentDeps, sync_row: RowFactory,
        monkeypatch: pytest.MonkeyPatch) -> None:
    r = sync_row(Status.RUNNING, container_id="gone", auto_heal=True)
    inner: list[Outcome] = []

    def rebuild_that_races(deps: AgentDeps, ctx: object, uuid: str, run: bool) -> None:
        inner.append(reconcile.heal(deps, get(sync_db, r)))   # the other path finds it too

    monkeypatch.setattr(reconcile.rebuild, "rebuild_container", rebuild_that_races)
    assert sync_container(sync_deps, r.uuid) is Outcome.HEALED
    assert inner == [Outcome.SKIPPED]


def test_describe_says_what_docker_says() -> None:
    state = rt.ContainerState(status=RunState.EXITED, exit_code=137, oom_killed=True)
    assert describe(state) == "exited (exit 137, OOMKilled)"
    assert describe(rt.ContainerState(status=RunState.RUNNING)) == "running"
    assert describe(None) == "no state"
