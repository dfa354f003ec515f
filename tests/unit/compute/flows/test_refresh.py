"""sync.refresh (container_show while the event stream is down) writes only if
the row is still as it read it before its inspect (issue 24 item 6)."""

from __future__ import annotations

from typing import Any

import pytest

from berth.compute.deps import AgentDeps
from berth.compute.flows import sync
from berth.compute.states import Status
from berth.db import containers
from berth.db.engine import Database
from berth.runtime import base as rt
from berth.runtime.base import RunState


@pytest.mark.parametrize("status, meanwhile, kept", [
    # a start began during the inspect: its task owns the status
    (Status.RUNNING, {"task_state": "container_starting"}, ("status", Status.RUNNING)),
    # a rebuild replaced the Docker container during the inspect
    (Status.CREATED, {"container_id": "new"}, ("container_id", "new")),
])
def test_a_row_that_changed_during_the_inspect_is_not_overwritten(
        sync_db: Database, sync_deps: AgentDeps, sync_engine, sync_row,  # type: ignore[no-untyped-def]
        monkeypatch: pytest.MonkeyPatch, status: str, meanwhile: dict[str, Any],
        kept: tuple[str, Any]) -> None:
    r = sync_row(status, RunState.EXITED)
    real_inspect = sync_engine.inspect

    def inspect_while_the_row_changes(cid: str) -> rt.RuntimeContainer:
        seen = real_inspect(cid)
        containers.update_(sync_db, r.uuid, meanwhile)
        return seen

    monkeypatch.setattr(sync_engine, "inspect", inspect_while_the_row_changes)
    after = sync.refresh(sync_deps, r.uuid)
    assert after.status == status                # not the Stopped Docker showed
    assert getattr(after, kept[0]) == kept[1]


def test_an_unchanged_row_gets_what_docker_says(
        sync_db: Database, sync_deps: AgentDeps, sync_row) -> None:  # type: ignore[no-untyped-def]
    r = sync_row(Status.RUNNING, RunState.EXITED)
    assert sync.refresh(sync_deps, r.uuid).status == Status.STOPPED
