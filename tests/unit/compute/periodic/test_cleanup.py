"""delete_unused_containers: this host's Deleted auto_remove rows only; one failure
does not stop the cycle."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from berth.common.context import RequestContext
from berth.compute.deps import AgentDeps
from berth.compute.periodic import cleanup
from berth.compute.periodic.cleanup import delete_unused_containers
from berth.compute.states import Status
from berth.db import containers
from berth.db.engine import Database
from berth.db.models import Container

RowFactory = Callable[..., Container]
Engine = Any      # conftest.CountingRuntime


def get(db: Database, r: Container) -> Container:
    return containers.get_by_uuid(db, r.uuid)


def test_deletes_this_hosts_unused_rows_and_goes_on_after_a_failure(
        sync_db: Database, sync_deps: AgentDeps, sync_row: RowFactory,
        monkeypatch: pytest.MonkeyPatch) -> None:
    unused = [sync_row(Status.DELETED, auto_remove=True, container_id=f"c{i}")
              for i in range(3)]
    kept = [
        sync_row(Status.DELETED, auto_remove=True, host="other-host"),
        sync_row(Status.DELETED, auto_remove=False),
        sync_row(Status.DELETED, auto_remove=True, task_state="container_deleting"),
        sync_row(Status.STOPPED, auto_remove=True),
    ]
    real_delete = cleanup.delete.delete_container
    tried: list[str] = []

    def delete_failing_once(deps: AgentDeps, ctx: RequestContext, uuid: str,
                            force: bool) -> None:
        assert force and ctx.is_admin
        tried.append(uuid)
        if uuid == unused[0].uuid:
            raise RuntimeError("database is locked")
        real_delete(deps, ctx, uuid, force)

    monkeypatch.setattr(cleanup.delete, "delete_container", delete_failing_once)
    report = delete_unused_containers(sync_deps)

    assert sorted(tried) == sorted(u.uuid for u in unused)
    assert (report.deleted, report.failed) == (2, 1)
    assert containers.find_by_uuid(sync_db, unused[0].uuid) is not None
    assert all(containers.find_by_uuid(sync_db, u.uuid) is None for u in unused[1:])
    assert all(containers.find_by_uuid(sync_db, k.uuid) is not None for k in kept)
    assert report.rows_read == 6               # this host's rows, never other-host's
