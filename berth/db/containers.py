"""Queries on the ``container`` table.

Writes that depend on the row's current state are compare-and-swap updates
(``UPDATE ... WHERE uuid = :u AND task_state IS NULL``), as Nova's
``save(expected_task_state=...)``: two actors can never both believe they own a
container's task. What a write expects of the row is one ``Expect`` value.
"""

from __future__ import annotations

import datetime as dt
import functools
import uuid as uuidlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from sqlalchemy import Connection, Row, Table, bindparam, func, select, update
from sqlalchemy.orm import Session
from sqlalchemy.sql import Select

from berth.common import exceptions as exc
from berth.common.units import memory_mib
from berth.db import actions, container_pages, rows
from berth.db.base import utcnow
from berth.db.engine import Database
from berth.db.inline_lists import inline_in, inline_not_in
from berth.db.models import Container, Registry, registry_uuid_of

CONTAINER = 0

T = TypeVar("T")

#: Sentinel: "no expectation on this column".
ANY = object()


@dataclass(frozen=True)
class Expect:
    """What a compare-and-swap write expects of the row, column by column: ``ANY``
    (nothing), None (IS NULL), one value, or an iterable of values (None among them:
    or NULL). ``task_deadline`` tells one run of a task from a later run of the same
    task; ``container_id`` names the Docker container a judgement was made of (a
    status can come back to what it was, A-B-A, but a rebuild always gives the row
    another Docker container)."""

    task_state: Any = ANY
    status: Any = ANY
    task_deadline: Any = ANY
    container_id: Any = ANY

    @classmethod
    def as_read(cls, row: Container) -> Expect:
        """No task, and the status and Docker container ``row`` was read with: a
        judgement of the engine's state, written only if nothing moved meanwhile."""
        return cls(task_state=None, status=row.status, container_id=row.container_id)


#: No expectation: the write is made whatever the row holds.
ANYTHING = Expect()
#: Only while the row has no task.
NO_TASK = Expect(task_state=None)

#: Rows in these statuses hold no resources on their host.
NOT_HOLDING = ("Error", "Deleted")


def is_uuid_like(value: str) -> bool:
    try:
        return str(uuidlib.UUID(value)) == value.lower()
    except (ValueError, AttributeError, TypeError):
        return False


def create(db: Database, values: Mapping[str, Any], *,
           along: Callable[[str], Iterable[Any]] | None = None,
           guard: Callable[[Connection], object] | None = None) -> Container:
    """Insert the row; ``along(uuid)`` gives other new records (its action) written in
    the same transaction, in turn, each after the one before was inserted; they refer
    to the row by its uuid, never its id (the first goes in with the row, in one
    statement on PostgreSQL); ``guard(conn)`` runs first in that transaction and may
    refuse the insert by raising (the quota check: ``berth.quota``). The row comes
    back with its id and every column's value (the defaults filled in), unattached
    to any session."""
    row = Container(**values)
    row.uuid = row.uuid or str(uuidlib.uuid4())
    if row.container_type is None:
        row.container_type = CONTAINER
    with db.write_connection() as conn:
        if guard is not None:
            guard(conn)
        others = iter(along(row.uuid) if along is not None else ())
        rows.insert_new_leading(conn, row, others)    # with its create action, usually
        for other in others:      # each may need the one before's id (a volume's)
            rows.insert_new(conn, other)
    return row


# The lookups by uuid behind every show, action and flow step, built once: building
# a statement and its cache key on each call cost a third of the lookup's CPU.
_BY_UUID = select(Container).where(Container.uuid == bindparam("uuid"))
_BY_UUID_OF_TYPE = _BY_UUID.where(Container.container_type == bindparam("ctype"))
_BY_UUID_OF_TYPE_IN_PROJECT = _BY_UUID_OF_TYPE.where(
    Container.project_id == bindparam("project"))


def _scoped(stmt: Select, project_id: str | None) -> Select:
    return stmt if project_id is None else stmt.where(Container.project_id == project_id)


def get(db: Database, ident: str, project_id: str | None = None,
        container_type: int = CONTAINER) -> Container:
    """Look up by uuid or name within ``project_id`` (None: all projects).
    ContainerNotFound, or Conflict when a name matches several containers."""
    with db.reader() as s:
        if is_uuid_like(ident):
            params: dict[str, Any] = {"uuid": ident.lower(), "ctype": container_type}
            if project_id is None:
                row = s.scalars(_BY_UUID_OF_TYPE, params).first()
            else:
                row = s.scalars(_BY_UUID_OF_TYPE_IN_PROJECT,
                                dict(params, project=project_id)).first()
            if row is not None:
                return row
        base = _scoped(select(Container).where(Container.container_type == container_type),
                       project_id)
        rows = s.scalars(base.where(Container.name == ident).limit(2)).all()
    return _the_one(ident, rows)


def _the_one(ident: str, rows: Sequence[T]) -> T:
    if not rows:
        raise exc.ContainerNotFound(container=ident)
    if len(rows) > 1:
        raise exc.Conflict(
            f"Multiple containers exist with the name {ident}; use the uuid instead.")
    return rows[0]


def get_columns_on_loop(db: Database, ident: str, columns: tuple[str, ...],
                        project_id: str | None = None,
                        container_type: int = CONTAINER) -> Row[Any]:
    """``get`` as one row of only ``columns`` (as ``list_columns``), read on the
    calling thread's ``db.loop_connection`` (SQLite; the API's event loop): each
    lookup is one statement, the uuid's first, then the name's."""
    with db.loop_connection() as conn:
        if is_uuid_like(ident):
            params: dict[str, Any] = {"uuid": ident.lower(), "ctype": container_type}
            if project_id is not None:
                params["project"] = project_id
            row = conn.execute(_columns_by_uuid(columns, project_id is not None),
                               params).first()
            if row is not None:
                return row
        stmt = _scoped(select(*(container_pages.column(name) for name in columns)).where(
            Container.container_type == container_type, Container.name == ident), project_id)
        rows = conn.execute(stmt.limit(2)).all()
    return _the_one(ident, rows)


@functools.lru_cache(maxsize=8)
def _columns_by_uuid(columns: tuple[str, ...], in_project: bool) -> Select:
    stmt = select(*(container_pages.column(name) for name in columns)).where(
        Container.uuid == bindparam("uuid"), Container.container_type == bindparam("ctype"))
    return stmt.where(Container.project_id == bindparam("project")) if in_project else stmt


def get_by_uuid(db: Database, uuid: str) -> Container:
    row = find_by_uuid(db, uuid)
    if row is None:
        raise exc.ContainerNotFound(container=uuid)
    return row


def find_by_uuid(db: Database, uuid: str) -> Container | None:
    """The row, read without an ORM session (``rows.detached``: a fifth less CPU)."""
    with db.connection() as conn:
        found = conn.execute(_ROW_BY_UUID, {"uuid": uuid}).first()
    return None if found is None else rows.detached(Container, dict(found._mapping))


def find_by_uuids(db: Database, uuids: Iterable[str]) -> list[Container]:
    """The rows of these uuids that exist (one query per 500 uuids)."""
    wanted = sorted(set(uuids))
    found: list[Container] = []
    with db.reader() as s:
        for i in range(0, len(wanted), 500):
            chunk = wanted[i:i + 500]
            found.extend(s.scalars(select(Container).where(Container.uuid.in_(chunk))).all())
    return found


def name_taken(db: Database, name: str, project_id: str | None) -> bool:
    """Case-insensitive, as Zun's unique_container_name_scope."""
    with db.reader() as s:
        stmt = _scoped(select(Container.id).where(func.lower(Container.name) == name.lower()),
                       project_id)
        return s.execute(stmt.limit(1)).first() is not None


def list_columns(db: Database, columns: Sequence[str], *, project_id: str | None,
                 filters: Mapping[str, Any], limit: int, marker: str | None = None,
                 sort_key: str = "id", sort_dir: str = "asc",
                 container_type: int = CONTAINER) -> list[Row[Any]]:
    """One page of containers, as rows of only ``columns`` (names of the container's
    columns, or ``registry_uuid``), in that order: what a list view reads, without
    building an ORM object per row (a page of 1,000 spent most of its time there).
    ``marker`` is the uuid of the last row of the previous page (ContainerNotFound if
    unknown); ``sort_key`` must be a column."""
    with db.connection() as conn:
        stmt, params = container_pages.page_query(
            conn, tuple(columns), project_id=project_id, filters=filters, limit=limit,
            marker=marker, sort_key=sort_key, sort_dir=sort_dir,
            container_type=container_type)
        return list(conn.execute(stmt, params).all())


def list_rows(db: Database, *, project_id: str | None, limit: int,
              marker: str | None = None, sort_key: str = "id", sort_dir: str = "asc",
              container_type: int = CONTAINER) -> list[Container]:
    """``list_columns`` as whole rows (for the few lists that show more than columns:
    capsules with their members)."""
    with db.reader() as s:
        stmt, params = container_pages.page_query(
            s, None, project_id=project_id, filters={}, limit=limit, marker=marker,
            sort_key=sort_key, sort_dir=sort_dir, container_type=container_type)
        return list(s.scalars(stmt, params))


def list_by_host(db: Database, host: str, container_type: int | None = CONTAINER
                 ) -> list[Container]:
    """The rows placed on ``host`` (of ``container_type``; None: of any type)."""
    with db.reader() as s:
        if container_type is None:
            return list(s.scalars(_ON_HOST, {"host": host}).all())
        return list(s.scalars(_ON_HOST_OF_TYPE, {"host": host, "type": container_type}).all())


# Built once: each agent reads its rows every minute, and building the statement at
# each read was a fifth of the read's cost (bench P15, idle agents).
_ON_HOST = select(Container).where(Container.host == bindparam("host"))
_ON_HOST_OF_TYPE = _ON_HOST.where(Container.container_type == bindparam("type"))


def update_(db: Database, uuid: str, values: Mapping[str, Any], *,
            expect: Expect = ANYTHING,
            guard: Callable[[Connection], object] | None = None,
            ending: actions.EventEnding | None = None) -> Container:
    """Update one row; with an expectation (``Expect``), only if the row still meets it.

    ``guard(conn)`` runs first in the update's transaction and may refuse it by raising
    (the quota check of a resize). Raises ContainerNotFound when the row is gone,
    TaskInProgress when the expectation no longer holds.

    Without ``guard`` the write is one statement (``Database.one_statement_connection``):
    the row comes back from it, and the reads that tell why nothing matched, or that
    fill a registry's uuid in, follow it. ``ending`` (no ``guard``): the end of an
    event the same statement makes too where it can (``actions.EventEnding``)."""
    if guard is None:
        with db.one_statement_connection() as conn:
            if ending is not None and conn.dialect.name == "postgresql":
                return _update_ending(conn, uuid, values, expect, ending)
            return _update_in(conn, uuid, values, expect)
    assert ending is None, "an event's end rides only on a write of one statement"
    with db.write_connection() as conn:
        guard(conn)
        return _update_in(conn, uuid, values, expect)


def update_with(db: Database, uuid: str, values: Mapping[str, Any],
                along: Callable[[Session], T], *, expect: Expect = ANYTHING,
                guard: Callable[[Connection], object] | None = None
                ) -> tuple[Container, T]:
    """``update_``, and ``along(session)`` in the same transaction once the update has
    succeeded (a flow's first write: its task and its action event in one commit).
    ``guard`` as ``update_``'s."""
    with db.writer() as s:
        conn = s.connection()
        if guard is not None:
            guard(conn)
        row = _update_in(conn, uuid, values, expect)
        return row, along(s)


_TABLE: Table = Container.__table__  # type: ignore[assignment]
_COLUMNS = _TABLE.c
#: The uuid of a container's registry, which the row keeps as Zun's integer
#: registry_id (``Container.registry_uuid``).
_REGISTRY_UUID = select(Registry.uuid).where(Registry.id == bindparam("registry_id"))
#: A row as ``select(Container)`` loads it, read without a session (``rows.detached``).
_ROW_BY_UUID = select(*_COLUMNS, registry_uuid_of(_COLUMNS.registry_id)).where(
    _COLUMNS.uuid == bindparam("uuid"))
_STATE_BY_UUID = select(_COLUMNS.task_state, _COLUMNS.status).where(
    _COLUMNS.uuid == bindparam("uuid"))


def prepared_update(uuid: str, values: Mapping[str, Any], expect: Expect, returning: bool
                    ) -> tuple[Any, dict[str, Any]]:
    """The compare-and-swap UPDATE of the row (``update_``'s, built once per shape;
    with ``returning``, RETURNING every column) and its parameters: ``w_uuid`` is the
    row's uuid, the others are named ``v_<column>`` and ``w_<expectation>``."""
    values = dict(values)
    values.setdefault("updated_at", utcnow())
    params: dict[str, Any] = {"w_uuid": uuid}
    params.update({f"v_{key}": value for key, value in values.items()})
    stmt = _update_statement(
        tuple(sorted(values)), _shape(expect.task_state, "w_task", params),
        _shape(expect.status, "w_status", params),
        _shape(expect.task_deadline, "w_deadline", params),
        _shape(expect.container_id, "w_cid", params), returning)
    return stmt, params


def refusal(conn: Connection, uuid: str) -> exc.BerthError:
    """Why a compare-and-swap write of the row matched nothing: ContainerNotFound when
    it is gone, TaskInProgress (naming its task, or its status) when it moved on."""
    state = conn.execute(_STATE_BY_UUID, {"uuid": uuid}).first()
    if state is None:
        return exc.ContainerNotFound(container=uuid)
    return exc.TaskInProgress(uuid=uuid, task_state=state.task_state or state.status)


def _update_in(conn: Connection, uuid: str, values: Mapping[str, Any], expect: Expect
               ) -> Container:
    """The update, as Core statements on ``conn``: the updated row comes back as a
    detached ``Container`` (``rows.detached``), as a session's query would leave it."""
    returning = conn.dialect.update_returning
    stmt, params = prepared_update(uuid, values, expect, returning)
    updated: Container | None = None
    if returning:
        # PostgreSQL and SQLite hand the updated row back: no second query, but
        # for a container pulling from a registry (its uuid).
        found = conn.execute(stmt, params).first()
        if found is not None:
            row = dict(found._mapping)
            registry_id = row["registry_id"]
            row["registry_uuid"] = None if registry_id is None else conn.execute(
                _REGISTRY_UUID, {"registry_id": registry_id}).scalar()
            updated = rows.detached(Container, row)
    elif conn.execute(stmt, params).rowcount:  # type: ignore[attr-defined]
        updated = rows.detached(Container, dict(
            conn.execute(_ROW_BY_UUID, {"uuid": uuid}).one()._mapping))
    if updated is None:
        raise refusal(conn, uuid)
    return updated


def _update_ending(conn: Connection, uuid: str, values: Mapping[str, Any], expect: Expect,
                   ending: actions.EventEnding) -> Container:
    """``_update_in`` on PostgreSQL, ending the event of ``ending`` in the same
    statement if the update matched (``actions.with_ending``)."""
    stmt, params = prepared_update(uuid, values, expect, returning=True)
    params.update(ending.params())
    found = conn.execute(actions.with_ending(stmt, ending.finish_action,
                                             ending.then is not None), params).first()
    if found is None:
        raise refusal(conn, uuid)
    record = dict(found._mapping)
    ending.take(record)
    updated: Container = rows.detached(Container, record)
    return updated


#: How an expectation constrains its column: not at all, IS NULL, = one value, or
#: IN values (with OR IS NULL when None is among them).
_Shape = tuple[str, bool]


def _shape(expected: Any, name: str, params: dict[str, Any]) -> _Shape:
    """The expectation's shape, its values put in ``params`` under ``name``."""
    if expected is ANY:
        return ("any", False)
    if expected is None:
        return ("null", False)
    if isinstance(expected, str | dt.datetime):
        params[name] = expected
        return ("eq", False)
    values = list(expected)
    params[name] = [v for v in values if v is not None]
    return ("in", None in values)


@functools.lru_cache(maxsize=256)
def _update_statement(keys: tuple[str, ...], task: _Shape, status: _Shape,
                      deadline: _Shape, container_id: _Shape, returning: bool) -> Any:
    """The UPDATE of one row by uuid, setting ``keys``, under the expectations'
    shapes: built once per shape (flows write a handful of them, thousands of times),
    so that neither its construction nor its cache key is paid per write."""
    stmt = update(_TABLE).where(_COLUMNS.uuid == bindparam("w_uuid"))
    for column, (kind, or_null), name in ((_COLUMNS.task_state, task, "w_task"),
                                          (_COLUMNS.status, status, "w_status"),
                                          (_COLUMNS.task_deadline, deadline, "w_deadline"),
                                          (_COLUMNS.container_id, container_id, "w_cid")):
        if kind == "null":
            stmt = stmt.where(column.is_(None))
        elif kind == "eq":
            stmt = stmt.where(column == bindparam(name))
        elif kind == "in":
            cond = column.in_(bindparam(name, expanding=True))
            stmt = stmt.where(cond | column.is_(None) if or_null else cond)
    stmt = stmt.values({key: bindparam(f"v_{key}") for key in keys})
    return stmt.returning(*_COLUMNS) if returning else stmt


def list_past_deadline(db: Database, now: dt.datetime, host: str | None = None
                       ) -> list[Container]:
    """Rows (of ``host``, or of every host) whose task_deadline is before ``now``
    (naive UTC): with a task_state, an overdue task; without one, a status the API
    wrote whose cast the agent has not taken up in time (``api/operations/
    cast_deadlines.py``)."""
    with db.reader() as s:
        stmt = select(Container).where(Container.task_deadline.is_not(None),
                                       Container.task_deadline < now)
        if host is not None:
            stmt = stmt.where(Container.host == host)
        return list(s.scalars(stmt.order_by(Container.id)).all())


def destroy(db: Database, uuid: str) -> bool:
    """Delete the row (its actions and events go with it). False if it was gone."""
    return rows.destroy_by_uuid(db, Container, uuid)


_HELD_ON_HOST = select(Container.cpu, Container.memory).where(
    Container.host == bindparam("host"), inline_not_in(Container.status, NOT_HOLDING),
    inline_in(Container.container_type, (0, 1)))
_HELD_ON_HOST_BUT = _HELD_ON_HOST.where(
    Container.uuid.not_in(bindparam("excluded", expanding=True)))


def usage_on_host(db: Database, host: str, exclude: Iterable[str] = ()) -> tuple[float, int, int]:
    """(cpu, memory MiB, count) held by the containers on ``host``: every row placed
    there except those in Error or Deleted, which hold nothing."""
    excluded = list(exclude)
    with db.connection() as conn:
        if excluded:
            rows = conn.execute(_HELD_ON_HOST_BUT, {"host": host, "excluded": excluded}).all()
        else:
            rows = conn.execute(_HELD_ON_HOST, {"host": host}).all()
    return _held(rows)


def _held(rows: Sequence[Any]) -> tuple[float, int, int]:
    """(cpu, memory MiB, count) of rows that hold resources."""
    cpu = sum(r.cpu or 0.0 for r in rows)
    mem = sum(memory_mib(r.memory) for r in rows)
    return cpu, mem, len(rows)


def fingerprints(db: Database, container_types: Sequence[int]) -> list[Row[Any]]:
    """``(uuid, container_type, project_id, status, task_state, updated_at)`` of every
    row of ``container_types``: the few columns the console's change watcher compares
    from one second to the next (berth.dashboard.watch)."""
    c = Container.__table__.c
    stmt = select(c.uuid, c.container_type, c.project_id, c.status, c.task_state,
                  c.updated_at).where(c.container_type.in_(list(container_types)))
    with db.reader() as s:
        found: list[Row[Any]] = list(s.connection().execute(stmt).all())  # type: ignore[arg-type]
        return found


def list_columns_of(db: Database, columns: Sequence[str], uuids: Iterable[str]
                    ) -> list[Row[Any]]:
    """The rows of ``uuids`` (any project) as rows of ``columns``, as ``list_columns``;
    uuids without a row are left out."""
    wanted = sorted(set(uuids))
    base = select(*(container_pages.column(name) for name in columns))
    found: list[Row[Any]] = []
    with db.reader() as s:
        for i in range(0, len(wanted), 500):   # as find_by_uuids: bounded IN lists
            stmt = base.where(Container.uuid.in_(wanted[i:i + 500]))
            found.extend(s.connection().execute(stmt).all())
    return found
