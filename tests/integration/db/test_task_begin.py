"""A flow's first write (``berth.db.task_begin``) on the servers berth runs on: on
PostgreSQL one statement sets the task and starts the event on the request's action,
and writes neither when the row does not meet the expectation; MariaDB does the same
in a transaction of its own."""

from __future__ import annotations

import pytest
from support.statements import Statements

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.db import actions, containers, registries, task_begin
from berth.db.containers import Expect
from berth.db.engine import Database
from berth.placement.base import MEMORY_MB, VCPU, Inventory
from berth.placement.embedded import EmbeddedPlacement

CREATE = "compute__do_container_create"
CREATING = Expect(status="Creating", task_state=None)
TASK = {"task_state": "container_creating"}


def _container(db: Database, **values: object) -> str:
    uuid = containers.create(db, {"project_id": "p1", "status": "Creating", **values}).uuid
    actions.action_start(db, RequestContext.admin("req-1"), uuid, "create")
    return uuid


def _events(db: Database, uuid: str, request_id: str) -> list[tuple[int, str]]:
    _, events = actions.get_action(db, uuid, request_id)
    return [(e.id, e.event) for e in events]


def test_the_task_and_the_event_in_one_statement(db: Database) -> None:
    registry = registries.create(db, {"name": "r", "domain": "reg.example",
                                      "project_id": "p1", "user_id": "u"})
    uuid = _container(db, registry_id=registry.id, labels={"a": "b"})
    # A later request's action: the event goes on its own request's, not the newest.
    actions.action_start(db, RequestContext.admin("req-2"), uuid, "stop")
    seen = Statements(db)
    row, event_id = task_begin.begin(db, uuid, TASK, expect=CREATING,
                                     request_id="req-1", event=CREATE)
    if db.engine.dialect.name == "postgresql":
        assert seen.sent == ["WITH"]
    assert (row.uuid, row.task_state, row.status, row.labels, row.registry_uuid) == \
        (uuid, "container_creating", "Creating", {"a": "b"}, registry.uuid)
    assert containers.get_by_uuid(db, uuid).task_state == "container_creating"
    assert event_id is not None
    assert _events(db, uuid, "req-1") == [(event_id, CREATE)]
    assert _events(db, uuid, "req-2") == []


def test_a_row_that_moved_on_gets_neither(db: Database) -> None:
    uuid = _container(db)
    containers.update_(db, uuid, {"task_state": "container_deleting"})
    with pytest.raises(exc.TaskInProgress) as raised:
        task_begin.begin(db, uuid, TASK, expect=CREATING, request_id="req-1", event=CREATE)
    assert "container_deleting" in raised.value.msg
    assert containers.get_by_uuid(db, uuid).task_state == "container_deleting"
    assert _events(db, uuid, "req-1") == []
    with pytest.raises(exc.ContainerNotFound):
        task_begin.begin(db, "no-such-uuid", TASK, expect=CREATING, request_id="req-1",
                         event=CREATE)


def test_without_the_requests_action_the_event_goes_on_the_newest(db: Database) -> None:
    uuid = _container(db)
    for request_id in ("req-unknown", None):
        containers.update_(db, uuid, {"task_state": None})
        row, event_id = task_begin.begin(db, uuid, TASK, expect=CREATING,
                                         request_id=request_id, event=CREATE)
        assert row.task_state == "container_creating" and event_id is not None
    assert [event for _, event in _events(db, uuid, "req-1")] == [CREATE, CREATE]
    bare = containers.create(db, {"project_id": "p1", "status": "Creating"}).uuid
    row, event_id = task_begin.begin(db, bare, TASK, expect=CREATING, request_id="req-1",
                                     event=CREATE)
    assert (row.task_state, event_id) == ("container_creating", None)


def test_a_create_reads_what_its_container_holds_in_placement_in_the_same_statement(
        db: Database) -> None:
    ledger = EmbeddedPlacement(db)
    provider = "8f14e45f-ceea-467f-a0e6-8e1b2c3d4e5f"
    ledger.ensure_provider(provider, "n1")
    ledger.set_inventory(provider, {VCPU: Inventory(total=4), MEMORY_MB: Inventory(total=8192)})
    placed, bare = _container(db), _container(db)
    ledger.allocate(placed, provider, {VCPU: 1, MEMORY_MB: 64}, "p1", None)
    seen = Statements(db)
    row, event_id, held = task_begin.begin_reading_allocations(
        db, placed, TASK, expect=CREATING, request_id="req-1", event=CREATE)
    assert row.task_state == "container_creating" and event_id is not None
    if db.engine.dialect.name == "postgresql":
        assert seen.sent == ["WITH"]
        assert held == {(provider, VCPU): 1, (provider, MEMORY_MB): 64}
    else:       # a transaction of its own: the allocation step asks Placement itself
        assert held is None
    _, _, held = task_begin.begin_reading_allocations(
        db, bare, TASK, expect=CREATING, request_id="req-1", event=CREATE)
    assert held == ({} if db.engine.dialect.name == "postgresql" else None)
    # A refusal writes nothing, as begin's.
    with pytest.raises(exc.TaskInProgress):
        task_begin.begin_reading_allocations(db, placed, TASK, expect=CREATING,
                                             request_id="req-1", event=CREATE)
