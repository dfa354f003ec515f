"""The action log's writes (agent event start/finish, action finish) against a real
SQLite file migrated with Alembic, read back through the API's queries."""

from __future__ import annotations

import datetime as dt

import pytest

from berth.common.context import RequestContext
from berth.db import actions, containers
from berth.db.engine import Database


def _container_with_action(db: Database, request_id: str = "req-1") -> str:
    uuid = containers.create(db, {"project_id": "p1", "status": "Creating"}).uuid
    actions.action_start(db, RequestContext.admin(request_id), uuid, "create")
    return uuid


def test_an_event_finished_with_its_action_records_success_and_times(db: Database) -> None:
    uuid = _container_with_action(db)
    event_id = actions.event_start(db, uuid, "req-1", "compute__do_container_create")
    assert event_id is not None
    assert actions.event_finish(db, event_id, False, action_of=(uuid, "req-1")) is None

    action, events = actions.get_action(db, uuid, "req-1")
    assert isinstance(action.finish_time, dt.datetime) and action.message is None
    [event] = events
    assert (event.id, event.event, event.result, event.traceback) == (
        event_id, "compute__do_container_create", "Success", None)
    assert isinstance(event.start_time, dt.datetime)
    assert isinstance(event.finish_time, dt.datetime)
    assert event.start_time <= event.finish_time


def test_a_failed_event_keeps_its_traceback_and_marks_the_action_error(db: Database) -> None:
    uuid = _container_with_action(db)
    event_id = actions.event_start(db, uuid, "req-1", "compute__do_container_start")
    actions.event_finish(db, event_id, True, "Traceback: boom", action_of=(uuid, "req-1"))

    action, [event] = actions.get_action(db, uuid, "req-1")
    assert action.message == "Error" and action.finish_time is not None
    assert (event.result, event.traceback) == ("Error", "Traceback: boom")


def test_finishing_one_event_can_start_the_next_on_the_same_action(db: Database) -> None:
    uuid = _container_with_action(db)
    first = actions.event_start(db, uuid, "req-1", "compute__do_container_create")
    second = actions.event_finish(db, first, False,
                                  then=(uuid, "req-1", "compute__do_container_start"))
    assert second is not None and second != first

    action, events = actions.get_action(db, uuid, "req-1")
    assert action.finish_time is None      # the action goes on
    assert [(e.id, e.event, e.result) for e in events] == [
        (first, "compute__do_container_create", "Success"),
        (second, "compute__do_container_start", None)]


def test_work_without_a_request_goes_on_the_newest_action(db: Database) -> None:
    uuid = _container_with_action(db, "req-old")
    actions.action_start(db, RequestContext.admin("req-new"), uuid, "start")
    event_id = actions.event_start(db, uuid, None, "compute__sync")
    actions.action_finish(db, uuid, None, error=True)

    _, old_events = actions.get_action(db, uuid, "req-old")
    newest, [event] = actions.get_action(db, uuid, "req-new")
    assert old_events == [] and event.id == event_id
    assert newest.message == "Error"


def test_a_container_without_actions_records_no_event(db: Database) -> None:
    uuid = containers.create(db, {"project_id": "p1", "status": "Creating"}).uuid
    assert actions.event_start(db, uuid, "req-1", "compute__do_container_create") is None
    assert actions.event_finish(db, None, False, action_of=(uuid, "req-1"),
                                then=(uuid, "req-1", "x")) is None


def test_finishing_an_event_and_its_action_reads_the_action_in_the_update_where_it_can(
        db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    """One round trip fewer with UPDATE ... RETURNING; MariaDB has none, and its path
    (the update, then a read of the event's action) gives the same records."""
    from sqlalchemy import event

    statements: list[str] = []
    for engine in {db.engine, db._write_engine}:
        event.listen(engine, "before_cursor_execute",
                     lambda conn, cur, stmt, *a: statements.append(stmt.split()[0]))
    for returning in (True, False):
        for engine in {db.engine, db._write_engine}:
            monkeypatch.setattr(engine.dialect, "update_returning", returning)
        uuid = _container_with_action(db)
        first = actions.event_start(db, uuid, "req-1", "compute__do_container_create")
        statements.clear()
        second = actions.event_finish(db, first, False,
                                      then=(uuid, "req-1", "compute__do_container_start"))
        assert [s.upper() for s in statements if s.upper() != "BEGIN"] == (
            ["UPDATE", "INSERT"] if returning else ["UPDATE", "SELECT", "INSERT"])
        _, events = actions.get_action(db, uuid, "req-1")
        assert [(e.id, e.result) for e in events] == [(first, "Success"), (second, None)]
