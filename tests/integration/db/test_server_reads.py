"""Reads and the action log's writes on the servers berth runs on (PostgreSQL, MariaDB),
migrated with Alembic: on PostgreSQL a read runs outside any transaction (no BEGIN nor
ROLLBACK round trip, bench P15), also on a connection the pool checked after it sat
idle; a read never sees a writer's uncommitted row; an event goes on its request's
action in one statement, and on the container's newest action without one."""

from __future__ import annotations

import threading
import time

import pytest
from sqlalchemy import Connection, select
from support.statements import Statements

from berth.common.context import RequestContext
from berth.db import actions, containers
from berth.db.engine import PING_AFTER_IDLE, Database
from berth.db.models import Container


def _outside_a_transaction(conn: Connection) -> bool:
    """Whether PostgreSQL's connection under ``conn`` is in no transaction (IDLE, not
    INTRANS): psycopg began none, so it sends neither BEGIN nor, at the end, ROLLBACK."""
    raw = conn.connection.dbapi_connection
    info = getattr(raw, "info", None)      # psycopg's; MariaDB's driver has none
    return info is not None and info.transaction_status == 0


def _container(db: Database, request_id: str = "req-1") -> str:
    uuid = containers.create(db, {"project_id": "p1", "status": "Creating"}).uuid
    actions.action_start(db, RequestContext.admin(request_id), uuid, "create")
    return uuid


def test_a_read_runs_outside_a_transaction_on_postgresql(db: Database) -> None:
    uuid = _container(db)
    on_postgresql = db.engine.dialect.name == "postgresql"
    for _ in range(2):
        with db.reader() as s:
            assert s.scalars(select(Container).where(Container.uuid == uuid)).one().uuid == uuid
            assert _outside_a_transaction(s.connection()) is on_postgresql
        with db.connection() as conn:
            assert conn.execute(select(Container.status)
                                .where(Container.uuid == uuid)).scalar() == "Creating"
            assert _outside_a_transaction(conn) is on_postgresql
    if on_postgresql:      # and a writer still writes in a transaction
        with db.write_connection() as conn:
            conn.execute(select(Container.id).where(Container.uuid == uuid))
            assert not _outside_a_transaction(conn)
            raw = conn.connection.dbapi_connection
            assert not raw.autocommit
        assert raw.autocommit      # back in the pool as it waits there: for reads


def test_a_read_on_a_connection_checked_after_it_sat_idle_works(db: Database) -> None:
    uuid = _container(db)
    assert containers.find_by_uuid(db, uuid) is not None
    time.sleep(PING_AFTER_IDLE + 0.2)     # the next checkout pings the connection first
    assert containers.find_by_uuid(db, uuid) is not None
    with db.writer() as s:             # and a writer after a read still commits
        s.execute(select(Container.id).where(Container.uuid == uuid))
    containers.update_(db, uuid, {"status": "Created"})
    time.sleep(PING_AFTER_IDLE + 0.2)
    containers.update_(db, uuid, {"status": "Running"})
    assert containers.get_by_uuid(db, uuid).status == "Running"


def test_a_read_does_not_see_a_write_before_its_commit(db: Database) -> None:
    uuid = _container(db)
    written, release = threading.Event(), threading.Event()

    def writer() -> None:
        with db.write_connection() as conn:
            conn.execute(Container.__table__.update().where(Container.uuid == uuid)
                         .values(status="Stopped"))
            written.set()
            release.wait(10)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        assert written.wait(10)
        assert containers.get_by_uuid(db, uuid).status == "Creating"
    finally:
        release.set()
        thread.join(10)
    assert containers.get_by_uuid(db, uuid).status == "Stopped"


def test_an_event_goes_on_its_requests_action_in_one_statement(db: Database) -> None:
    uuid = _container(db, "req-1")
    actions.action_start(db, RequestContext.admin("req-2"), uuid, "stop")
    seen = Statements(db)
    event_id = actions.event_start(db, uuid, "req-1", "compute__do_container_create")
    inserts_and_selects = [s for s in seen.sent if s in ("INSERT", "SELECT")]
    if db.engine.dialect.insert_returning:
        assert inserts_and_selects == ["INSERT"]
    action, events = actions.get_action(db, uuid, "req-1")
    assert [(e.id, e.event, e.action_id) for e in events] == [
        (event_id, "compute__do_container_create", action.id)]
    assert events[0].start_time is not None and events[0].finish_time is None


def test_an_event_without_its_requests_action_goes_on_the_newest(db: Database) -> None:
    uuid = _container(db, "req-1")
    actions.action_start(db, RequestContext.admin("req-2"), uuid, "stop")
    event_id = actions.event_start(db, uuid, "req-unknown", "compute__do_container_stop")
    assert event_id is not None
    _, events = actions.get_action(db, uuid, "req-2")
    assert [e.id for e in events] == [event_id]
    _, first = actions.get_action(db, uuid, "req-1")
    assert first == []
    assert actions.event_start(db, "no-such-container", "req-1", "x") is None


def test_an_event_finished_then_the_next_begun_on_its_action(db: Database) -> None:
    uuid = _container(db)
    first = actions.event_start(db, uuid, "req-1", "compute__do_container_create")
    seen = Statements(db)
    second = actions.event_finish(db, first, False,
                                  then=(uuid, "req-1", "compute__do_container_start"))
    if db.engine.dialect.name == "postgresql":
        assert seen.sent == ["WITH"]
    actions.event_finish(db, second, True, "Traceback: boom", action_of=(uuid, "req-1"))
    if db.engine.dialect.name == "postgresql":
        assert seen.sent == ["WITH", "WITH"]
    action, events = actions.get_action(db, uuid, "req-1")
    assert action.finish_time is not None and action.message == "Error"
    assert [(e.id, e.event, e.result, e.traceback) for e in events] == [
        (first, "compute__do_container_create", "Success", None),
        (second, "compute__do_container_start", "Error", "Traceback: boom")]
    assert all(e.finish_time is not None and e.action_id == action.id for e in events)


def test_an_event_gone_finishes_its_requests_action_all_the_same(db: Database) -> None:
    uuid = _container(db)
    assert actions.event_finish(db, 999_999, False, action_of=(uuid, "req-1")) is None
    action, _ = actions.get_action(db, uuid, "req-1")
    assert action.finish_time is not None and action.message is None
    started = actions.event_finish(db, 999_998, False,
                                   then=(uuid, "req-1", "compute__do_container_start"))
    _, events = actions.get_action(db, uuid, "req-1")
    assert [(e.id, e.event) for e in events] == [(started, "compute__do_container_start")]


def test_json_columns_are_read_by_berths_reader(db: Database) -> None:
    """The servers' engines read JSON columns with ``_json_loads`` (psycopg hands it
    bytes): what was written comes back, an empty one as a fresh object each time,
    a long integer as an integer."""
    uuid = containers.create(db, {"project_id": "p1", "status": "Creating",
                                  "labels": {"big": 123456789012345678901234567890},
                                  "environment": {}, "command": ["sh", "-c", "é"]}).uuid
    first, second = containers.find_by_uuid(db, uuid), containers.find_by_uuid(db, uuid)
    assert first is not None and second is not None
    assert first.labels == {"big": 123456789012345678901234567890}
    assert isinstance(first.labels["big"], int)
    assert first.command == ["sh", "-c", "é"]
    assert first.environment == {} and first.environment is not second.environment
    loader = getattr(db.engine.dialect, "_json_deserializer", None)
    assert loader is not None and loader.__name__ == "_json_loads"


def test_an_update_returns_the_whole_row_or_says_why_not(db: Database) -> None:
    """``containers.update_`` on both servers (PostgreSQL hands the row back from the
    UPDATE, MariaDB has it read after): the row with its registry's uuid, and the
    reason when the expectation no longer holds or the row is gone."""
    from berth.common import exceptions as exc
    from berth.db import registries

    registry = registries.create(db, {"name": "r", "domain": "reg.example",
                                      "project_id": "p1", "user_id": "u"})
    uuid = containers.create(db, {"project_id": "p1", "status": "Creating",
                                  "registry_id": registry.id, "labels": {"a": "b"}}).uuid
    row = containers.update_(db, uuid, {"status": "Running", "task_state": None},
                             expect=containers.Expect(status="Creating"))
    assert (row.uuid, row.status, row.labels, row.registry_uuid) == \
        (uuid, "Running", {"a": "b"}, registry.uuid)
    with pytest.raises(exc.TaskInProgress):
        containers.update_(db, uuid, {"status": "Stopped"},
                           expect=containers.Expect(status="Creating"))
    with pytest.raises(exc.ContainerNotFound):
        containers.update_(db, "no-such-uuid", {"status": "Stopped"})
