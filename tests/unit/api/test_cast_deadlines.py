"""The deadline the API writes with a status it sets before a cast (reboot, rebuild,
delete, a capsule's delete), and what a cast that cannot be sent puts back: on a real
SQLite database with a recording RPC client. The agent's side is
tests/unit/compute/periodic/test_lost_casts.py."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy.exc
from sqlalchemy import event
from support.migrated_sqlite import migrated_url

from berth.api.operations import actions as api_actions
from berth.api.operations import capsules as api_capsules
from berth.api.operations import containers as api_containers
from berth.api.state import ApiSettings, ApiState
from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.compute.states import Status
from berth.db import containers
from berth.db.base import utcnow
from berth.db.capsules import CAPSULE
from berth.db.engine import Database

TIMEOUT = 300


class RecordingCompute:
    """The RPC client's casts, recorded; ``fail`` makes them raise as an unreachable
    agent does."""

    def __init__(self) -> None:
        self.casts: list[tuple[str, str, dict[str, Any]]] = []
        self.fail = False

    def check_host(self, container: Any) -> None:
        return None

    def cast(self, ctx: Any, container: Any, method: str, **kw: Any) -> None:
        if self.fail:
            raise exc.ServiceUnavailable(reason="no agent listens")
        self.casts.append((container.uuid, method, kw))

    def container_delete(self, ctx: Any, container: Any, force: bool) -> None:
        self.cast(ctx, container, "container_delete", force=force)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = Database(migrated_url(tmp_path))
    yield database
    database.dispose()


@pytest.fixture
def state(db: Database) -> ApiState:
    return ApiState(db=db, compute=RecordingCompute(),  # type: ignore[arg-type]
                    scheduler=None,  # type: ignore[arg-type]
                    settings=ApiSettings(task_state_timeout=TIMEOUT,
                                         enable_image_validation=False))


ADMIN = RequestContext.admin()


def running(db: Database, **extra: Any) -> Any:
    return containers.create(db, dict(project_id="p1", status=Status.RUNNING.value,
                                      host="node1", container_id="c" * 64, image="busybox",
                                      **extra))


def assert_awaited(row: Any, status: Status, since: dt.datetime) -> None:
    assert (row.status, row.task_state) == (status, None)
    assert dt.timedelta(seconds=TIMEOUT - 1) < row.task_deadline - since \
        < dt.timedelta(seconds=TIMEOUT + 1)


@pytest.mark.parametrize("request_it,status", [
    (lambda s, uuid: api_actions.reboot(s, ADMIN, uuid, None), Status.RESTARTING),
    (lambda s, uuid: api_actions.rebuild(s, ADMIN, uuid, None, None, None), Status.REBUILDING),
    (lambda s, uuid: api_containers.delete(s, ADMIN, uuid, True, False), Status.DELETING),
], ids=["reboot", "rebuild", "delete"])
def test_a_status_written_before_a_cast_carries_the_casts_deadline(
        db: Database, state: ApiState, request_it: Any, status: Status) -> None:
    row = running(db)
    before = utcnow()
    request_it(state, row.uuid)
    assert_awaited(containers.get_by_uuid(db, row.uuid), status, before)
    assert len(state.compute.casts) == 1  # type: ignore[attr-defined]


def test_a_capsules_delete_carries_the_deadline_too(db: Database, state: ApiState) -> None:
    row = running(db, container_type=CAPSULE)
    before = utcnow()
    api_capsules.delete(state, ADMIN, row.uuid)
    assert_awaited(containers.get_by_uuid(db, row.uuid), Status.DELETING, before)


@pytest.mark.parametrize("request_it", [
    lambda s, uuid: api_actions.reboot(s, ADMIN, uuid, None),
    lambda s, uuid: api_actions.rebuild(s, ADMIN, uuid, "busybox:2", None, None),
], ids=["reboot", "rebuild"])
def test_a_cast_that_cannot_be_sent_puts_the_row_back_without_a_deadline(
        db: Database, state: ApiState, request_it: Any) -> None:
    row = running(db)
    state.compute.fail = True  # type: ignore[attr-defined]
    with pytest.raises(exc.ServiceUnavailable):
        request_it(state, row.uuid)
    after = containers.get_by_uuid(db, row.uuid)
    assert (after.status, after.image, after.task_deadline) == (Status.RUNNING, "busybox",
                                                                None)


def test_no_deadline_when_task_state_timeout_is_off(db: Database, state: ApiState) -> None:
    state.settings = ApiSettings(task_state_timeout=0)  # type: ignore[misc]
    row = running(db)
    api_actions.reboot(state, ADMIN, row.uuid, None)
    after = containers.get_by_uuid(db, row.uuid)
    assert (after.status, after.task_deadline) == (Status.RESTARTING, None)


@pytest.fixture
def action_inserts_fail(db: Database) -> Iterator[None]:
    """The database goes away when the request's action is recorded: every INSERT
    into container_actions fails as a lost connection does."""
    def fail(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if statement.lstrip().upper().startswith("INSERT INTO CONTAINER_ACTIONS"):
            raise sqlalchemy.exc.OperationalError(statement, {}, Exception("gone"))

    engines = {db.engine, db._write_engine}
    for engine in engines:
        event.listen(engine, "before_cursor_execute", fail)
    yield
    for engine in engines:
        event.remove(engine, "before_cursor_execute", fail)


@pytest.mark.parametrize("request_it,extra", [
    (lambda s, uuid: api_actions.reboot(s, ADMIN, uuid, None), {}),
    (lambda s, uuid: api_actions.rebuild(s, ADMIN, uuid, "busybox:2", None, None), {}),
    (lambda s, uuid: api_containers.delete(s, ADMIN, uuid, True, False), {}),
    (lambda s, uuid: api_containers.delete(s, ADMIN, uuid, False, True), {}),
    (lambda s, uuid: api_capsules.delete(s, ADMIN, uuid), {"container_type": CAPSULE}),
], ids=["reboot", "rebuild", "delete", "stop-and-delete", "capsule-delete"])
def test_a_status_is_not_written_when_its_action_cannot_be(
        db: Database, state: ApiState, action_inserts_fail: None, request_it: Any,
        extra: dict[str, Any]) -> None:
    # The status and the action are one commit: a database lost between two commits
    # left the row Deleting (or Restarting, Rebuilding) with no cast to move it on,
    # until the deadline, while the user was told the request failed (R3, seen).
    row = running(db, **extra)
    with pytest.raises(sqlalchemy.exc.OperationalError):
        request_it(state, row.uuid)
    after = containers.get_by_uuid(db, row.uuid)
    assert (after.status, after.image, after.task_deadline) == (Status.RUNNING, "busybox",
                                                                None)
    assert state.compute.casts == []  # type: ignore[attr-defined]
