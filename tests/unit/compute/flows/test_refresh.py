"""lifecycle.refresh (container_show while the event stream is down) writes only if
the row is still as it read it before its inspect (issue 24 item 6)."""

from __future__ import annotations

import pytest

from berth.compute.deps import AgentDeps
from berth.compute.flows import lifecycle
from berth.compute.states import Status
from berth.db import containers
from berth.db.engine import Database
from berth.runtime import base as rt
from berth.runtime.base import RunState


def test_a_stop_that_begins_during_the_inspect_is_not_overwritten(
        sync_db: Database, sync_deps: AgentDeps, sync_engine, sync_row,  # type: ignore[no-untyped-def]
        monkeypatch: pytest.MonkeyPatch) -> None:
    r = sync_row(Status.RUNNING, RunState.EXITED)
    real_inspect = sync_engine.inspect

    def inspect_while_a_start_runs(cid: str) -> rt.RuntimeContainer:
        seen = real_inspect(cid)
        containers.update_(sync_db, r.uuid, {"task_state": "container_starting"})
        return seen

    monkeypatch.setattr(sync_engine, "inspect", inspect_while_a_start_runs)
    after = lifecycle.refresh(sync_deps, r.uuid)
    assert (after.status, after.task_state) == (Status.RUNNING, "container_starting")


def test_a_row_rebuilt_during_the_inspect_keeps_its_new_container(
        sync_db: Database, sync_deps: AgentDeps, sync_engine, sync_row,  # type: ignore[no-untyped-def]
        monkeypatch: pytest.MonkeyPatch) -> None:
    r = sync_row(Status.CREATED, RunState.EXITED)
    real_inspect = sync_engine.inspect

    def inspect_while_rebuilt(cid: str) -> rt.RuntimeContainer:
        seen = real_inspect(cid)
        containers.update_(sync_db, r.uuid, {"container_id": "new"})
        return seen

    monkeypatch.setattr(sync_engine, "inspect", inspect_while_rebuilt)
    after = lifecycle.refresh(sync_deps, r.uuid)
    assert (after.status, after.container_id) == (Status.CREATED, "new")


def test_an_unchanged_row_gets_what_docker_says(
        sync_db: Database, sync_deps: AgentDeps, sync_row) -> None:  # type: ignore[no-untyped-def]
    r = sync_row(Status.RUNNING, RunState.EXITED)
    assert lifecycle.refresh(sync_deps, r.uuid).status == Status.STOPPED
