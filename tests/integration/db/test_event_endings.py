"""A container write that ends an event too (``containers.update_(..., ending=...)``,
``actions.EventEnding``) on the servers berth runs on: on PostgreSQL one statement
writes the row and ends the event, finishing its action or starting the next event on
it, and ends nothing when the row does not meet the expectation; on MariaDB the write
is the row's alone and the event is left to ``actions.event_finish``."""

from __future__ import annotations

import pytest
from support.statements import Statements

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.db import actions, containers, registries
from berth.db.containers import Expect
from berth.db.engine import Database

CREATE, START = "compute__do_container_create", "compute__do_container_start"


def _started(db: Database, **values: object) -> tuple[str, int]:
    """A container in task container_creating whose request's create event is open."""
    uuid = containers.create(db, {"project_id": "p1", "status": "Creating",
                                  "task_state": "container_creating", **values}).uuid
    actions.action_start(db, RequestContext.admin("req-1"), uuid, "create")
    event_id = actions.event_start(db, uuid, "req-1", CREATE)
    assert event_id is not None
    return uuid, event_id


def _log(db: Database, uuid: str) -> tuple[bool, list[tuple[str, str | None, bool]]]:
    """Whether the request's action is finished, and its events: (name, result,
    finished)."""
    action, events = actions.get_action(db, uuid, "req-1")
    return action.finish_time is not None, [
        (e.event, e.result, e.finish_time is not None) for e in events]


def _on_postgresql(db: Database) -> bool:
    return db.engine.dialect.name == "postgresql"


def test_the_write_ends_the_event_and_finishes_its_action(db: Database) -> None:
    registry = registries.create(db, {"name": "r", "domain": "reg.example",
                                      "project_id": "p1", "user_id": "u"})
    uuid, event_id = _started(db, registry_id=registry.id)
    ending = actions.EventEnding(event_id, finish_action=True, then=None)
    seen = Statements(db)
    row = containers.update_(db, uuid, {"status": "Running", "task_state": None},
                             expect=Expect(task_state="container_creating"), ending=ending)
    assert (row.status, row.task_state, row.registry_uuid) == ("Running", None, registry.uuid)
    assert containers.get_by_uuid(db, uuid).status == "Running"
    if _on_postgresql(db):
        assert seen.sent[0] == "WITH" and len(seen.sent) == 2     # and get_by_uuid's read
        assert ending.ended and ending.next_event_id is None
        assert _log(db, uuid) == (True, [(CREATE, "Success", True)])
    else:
        assert not ending.ended
        assert _log(db, uuid) == (False, [(CREATE, None, False)])


def test_the_write_ends_the_event_and_starts_the_next(db: Database) -> None:
    uuid, event_id = _started(db)
    ending = actions.EventEnding(event_id, finish_action=False, then=START)
    containers.update_(db, uuid, {"task_state": "container_starting"},
                       expect=Expect(task_state="container_creating"), ending=ending)
    if not _on_postgresql(db):
        assert not ending.ended and _log(db, uuid) == (False, [(CREATE, None, False)])
        return
    assert ending.ended and ending.next_event_id is not None
    finished, events = _log(db, uuid)
    assert not finished
    assert sorted(events) == [(CREATE, "Success", True), (START, None, False)]
    _, rows = actions.get_action(db, uuid, "req-1")
    assert ending.next_event_id in {e.id for e in rows if e.event == START}


def test_a_row_that_moved_on_ends_no_event(db: Database) -> None:
    uuid, event_id = _started(db)
    ending = actions.EventEnding(event_id, finish_action=True, then=None)
    with pytest.raises(exc.TaskInProgress):
        containers.update_(db, uuid, {"status": "Running"},
                           expect=Expect(task_state="container_deleting"), ending=ending)
    assert not ending.ended
    assert _log(db, uuid) == (False, [(CREATE, None, False)])
    assert containers.get_by_uuid(db, uuid).status == "Creating"


def test_an_event_gone_leaves_it_to_event_finish(db: Database) -> None:
    uuid, _ = _started(db)
    ending = actions.EventEnding(999_999, finish_action=True, then=START)
    row = containers.update_(db, uuid, {"status": "Running", "task_state": None},
                             ending=ending)
    assert row.status == "Running"
    assert not ending.ended and ending.next_event_id is None
    assert _log(db, uuid) == (False, [(CREATE, None, False)])
