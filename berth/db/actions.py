"""Queries on ``container_actions`` and ``container_actions_events``: the audit trail
of what was asked of a container (by the API) and what the agent did about it."""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Table, bindparam, exists, func, insert, select, update
from sqlalchemy.orm import Session

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.db.base import utcnow
from berth.db.engine import Database
from berth.db.models import Container, ContainerAction, ContainerActionEvent, registry_uuid_of


def new_action(ctx: RequestContext, container_uuid: str, action: str, *,
               failed: bool = False) -> ContainerAction:
    """The record of ``action`` on the container, begun by this request (not saved);
    ``failed``: already over, in Error."""
    row = ContainerAction(action=action, container_uuid=container_uuid,
                          request_id=ctx.request_id, user_id=ctx.user_id,
                          project_id=ctx.project_id, start_time=ctx.started)
    if failed:
        _mark_finished(row, error=True)
    return row


def _finished(error: bool) -> dict[str, object]:
    """What finishing an action writes: its finish time, and "Error" when it failed."""
    values: dict[str, object] = {"finish_time": utcnow()}
    if error:
        values["message"] = "Error"
    return values


def _mark_finished(row: ContainerAction, error: bool) -> None:
    for column, value in _finished(error).items():
        setattr(row, column, value)


def action_start(db: Database, ctx: RequestContext, container_uuid: str, action: str
                 ) -> ContainerAction:
    row = new_action(ctx, container_uuid, action)
    with db.writer() as s:
        s.add(row)
    return row


# The agent's event writes, built once over the tables and run on the session's
# connection: every create and start records two or three events, and the ORM's
# select, add, flush and bulk-update paths cost several times the SQL (bench P2).
_ACTIONS = cast(Table, ContainerAction.__table__)
_EVENTS = cast(Table, ContainerActionEvent.__table__)
_ACTION_OF_REQUEST = (
    select(_ACTIONS.c.id)
    .where(_ACTIONS.c.container_uuid == bindparam("uuid"),
           _ACTIONS.c.request_id == bindparam("request_id"))
    .order_by(_ACTIONS.c.id.desc()).limit(1))
_NEWEST_ACTION = (
    select(_ACTIONS.c.id).where(_ACTIONS.c.container_uuid == bindparam("uuid"))
    .order_by(_ACTIONS.c.id.desc()).limit(1))
_ACTION_OF_EVENT = select(_EVENTS.c.action_id).where(_EVENTS.c.id == bindparam("event_id"))
# (Bound names differ from the column names: SQLAlchemy keeps those for itself.)
_FINISH_EVENT = (
    update(_EVENTS).where(_EVENTS.c.id == bindparam("event_id"))
    .values(finish_time=bindparam("at"), result=bindparam("outcome"),
            traceback=bindparam("trace")))
#: The same, answering the event's action in the one round trip, where the database
#: can (PostgreSQL, SQLite: UPDATE ... RETURNING; MariaDB cannot): each create with
#: run finishes two events this way (bench P15).
_FINISH_EVENT_OF_ACTION = _FINISH_EVENT.returning(_EVENTS.c.action_id)
_INSERT_EVENT = insert(_EVENTS).values(
    event=bindparam("event_name"), action_id=bindparam("of"), start_time=bindparam("at"))


def started_event(action_id: Any, *where: Any, newest: bool = False) -> Any:
    """The INSERT of the event ``event_name``, started at ``at``, on the action whose
    id is ``action_id`` (a column of the rows ``where`` admits; with ``newest``, of
    the newest of them only), RETURNING the event's id: the statement of every event
    begun where its action is found, with no round trip between. (No bound name here
    is a column's: an UPDATE in the same statement would take a parameter named
    after one of its table's columns as a value to set.)"""
    source = select(bindparam("event_name", type_=_EVENTS.c.event.type), action_id,
                    bindparam("at", type_=_EVENTS.c.start_time.type),
                    bindparam("at", type_=_EVENTS.c.created_at.type)).where(*where)
    if newest:
        source = source.order_by(action_id.desc()).limit(1)
    return insert(_EVENTS).from_select(
        ["event", "action_id", "start_time", "created_at"], source).returning(_EVENTS.c.id)


#: An event on the action of a request, found and inserted in one round trip where the
#: database returns the new id of an INSERT ... SELECT (PostgreSQL, SQLite, MariaDB
#: 10.5+): no row when the request began no action on the container.
_INSERT_EVENT_OF_REQUEST = started_event(
    _ACTIONS.c.id, _ACTIONS.c.container_uuid == bindparam("uuid"),
    _ACTIONS.c.request_id == bindparam("request_id"), newest=True)
#: Finishing an action, for success and for error: the columns ``_finished`` writes.
_FINISH_ACTION = {
    error: update(_ACTIONS).where(_ACTIONS.c.id == bindparam("action_id"))
    .values(**{column: bindparam(f"new_{column}") for column in _finished(error)})
    for error in (False, True)}
# PostgreSQL runs an UPDATE inside a WITH: an event finished and, in the same
# statement, its action finished or the next event begun on its action (a create
# with run does each once: bench P15). No row (nothing updated, no id) when the
# event is gone.
# (Each UPDATE names its ``updated_at`` bound: the columns' own ``onupdate`` would
# give both the same name.)
_FINISHED = _FINISH_EVENT_OF_ACTION.values(updated_at=bindparam("at")).cte("finished")
_FINISH_EVENT_AND_ACTION = {
    error: update(_ACTIONS).where(_ACTIONS.c.id.in_(select(_FINISHED.c.action_id)))
    .values(updated_at=bindparam("at"),
            **{column: bindparam(f"new_{column}") for column in _finished(error)})
    .add_cte(_FINISHED)
    for error in (False, True)}
_FINISH_EVENT_THEN_START = started_event(_FINISHED.c.action_id).add_cte(_FINISHED)


@dataclass
class EventEnding:
    """An event's successful end, offered to the write that ends its block
    (``containers.update_(..., ending=...)``): on PostgreSQL that write ends the event
    in the same statement (``with_ending``), finishing its action (``finish_action``)
    or starting the event ``then`` on it, and says so in ``ended`` (with
    ``next_event_id``, the event started); elsewhere it leaves ``ended`` False and
    the event is ended as ever (``event_finish``). A create with run saves a
    statement at the end of each of its two events (bench P15)."""

    event_id: int
    finish_action: bool
    then: str | None
    ended: bool = False
    next_event_id: int | None = None

    def params(self) -> dict[str, object]:
        """The bound values of ``with_ending``'s statement (``at`` for every time)."""
        return {"event_id": self.event_id, "at": utcnow(), "outcome": "Success",
                "trace": None, "event_name": self.then}

    def take(self, record: dict[str, object]) -> None:
        """Read what the write's statement answered (``event_ended``,
        ``next_event_id``), and take those keys out of ``record``."""
        self.ended = bool(record.pop("event_ended"))
        started = record.pop("next_event_id", None)
        self.next_event_id = None if started is None else int(cast(int, started))


@functools.lru_cache(maxsize=64)
def with_ending(write: Any, finish_action: bool, then: bool) -> Any:
    """``write`` (an UPDATE RETURNING the container's row: ``containers.
    prepared_update``) and, only if it matched, the end of the event ``event_id`` in
    Success, with its action finished (``finish_action``) or the event ``event_name``
    started on it (``then``): one PostgreSQL statement. It answers the row, its
    ``registry_uuid``, ``event_ended`` (0 when the write matched nothing or the event
    is gone) and, with ``then``, ``next_event_id``."""
    updated = write.cte("updated")
    finished = (_FINISH_EVENT_OF_ACTION.values(updated_at=bindparam("at"))
                .where(exists(select(updated.c.id))).cte("finished"))
    columns = [*updated.c,
               registry_uuid_of(updated.c.registry_id),
               select(func.count()).select_from(finished).scalar_subquery()
               .label("event_ended")]
    extra = []
    if finish_action:
        extra.append(update(_ACTIONS).where(_ACTIONS.c.id.in_(select(finished.c.action_id)))
                     .values(updated_at=bindparam("at"), finish_time=bindparam("at"))
                     .returning(_ACTIONS.c.id).cte("action_finished"))
    if then:
        started = started_event(finished.c.action_id).cte("next_started")
        columns.append(select(started.c.id).scalar_subquery().label("next_event_id"))
    return select(*columns).add_cte(*extra) if extra else select(*columns)


def _action_id(s: Session, container_uuid: str, request_id: str | None) -> int | None:
    """The action of this request; the agent's own work (recovery, periodic tasks)
    has no API request: its events go on the container's newest action, as in Zun."""
    if request_id:
        found = s.connection().execute(
            _ACTION_OF_REQUEST, {"uuid": container_uuid, "request_id": request_id}).scalar()
        if found is not None:
            return int(found)
    found = s.connection().execute(_NEWEST_ACTION, {"uuid": container_uuid}).scalar()
    return None if found is None else int(found)


def action_finish(db: Database, container_uuid: str, request_id: str | None,
                  error: bool) -> None:
    with db.writer() as s:
        action_id = _action_id(s, container_uuid, request_id)
        if action_id is not None:
            _finish_action(s, action_id, error)


def _finish_action(s: Session, action_id: int, error: bool) -> None:
    s.connection().execute(_FINISH_ACTION[error], {
        "action_id": action_id, **{f"new_{k}": v for k, v in _finished(error).items()}})


def event_start(db: Database, container_uuid: str, request_id: str | None, event: str
                ) -> int | None:
    with db.writer() as s:
        return start_event_in(s, container_uuid, request_id, event)


def start_event_in(s: Session, container_uuid: str, request_id: str | None,
                   event: str) -> int | None:
    """``event_start`` within the caller's write transaction ``s``."""
    conn = s.connection()
    if request_id and conn.dialect.insert_returning:
        found = conn.execute(_INSERT_EVENT_OF_REQUEST, {
            "event_name": event, "at": utcnow(), "uuid": container_uuid,
            "request_id": request_id}).scalar()
        if found is not None:
            return int(found)
    action_id = _action_id(s, container_uuid, request_id)
    return None if action_id is None else _insert_event(s, action_id, event)


def _insert_event(s: Session, action_id: int, event: str) -> int:
    result = s.connection().execute(_INSERT_EVENT,
                                    {"event_name": event, "of": action_id, "at": utcnow()})
    return int(result.inserted_primary_key[0])  # type: ignore[index]


def event_finish(db: Database, event_id: int | None, error: bool, traceback: str | None = None,
                 *, action_of: tuple[str, str | None] | None = None,
                 then: tuple[str, str | None, str] | None = None) -> int | None:
    """End the event (Success or Error with the traceback); with ``action_of``
    (container uuid, request id), finish that action too; with ``then`` (container
    uuid, request id, event), start that event: all in one transaction. Returns the
    id of the event started (None without ``then``, or when there is no action)."""
    if event_id is None and action_of is None and then is None:
        return None
    if event_id is not None and (action_of is None) != (then is None) \
            and db.engine.dialect.name == "postgresql":
        return _finish_in_one_statement(db, event_id, error, traceback, action_of, then)
    with db.writer() as s:
        of_event: int | None = None
        if event_id is not None:
            conn = s.connection()
            values = {"event_id": event_id, "at": utcnow(),
                      "outcome": "Error" if error else "Success", "trace": traceback}
            if action_of is None and then is None:
                conn.execute(_FINISH_EVENT, values)
            else:
                if conn.dialect.update_returning:
                    found = conn.execute(_FINISH_EVENT_OF_ACTION, values).scalar()
                else:
                    conn.execute(_FINISH_EVENT, values)
                    found = conn.execute(_ACTION_OF_EVENT, {"event_id": event_id}).scalar()
                of_event = None if found is None else int(found)
        if action_of is not None:
            action_id = of_event if of_event is not None else _action_id(s, *action_of)
            if action_id is not None:
                _finish_action(s, action_id, error)
        if then is None:
            return None
        action_id = of_event if of_event is not None else _action_id(s, then[0], then[1])
        return None if action_id is None else _insert_event(s, action_id, then[2])


def _finish_in_one_statement(db: Database, event_id: int, error: bool, traceback: str | None,
                             action_of: tuple[str, str | None] | None,
                             then: tuple[str, str | None, str] | None) -> int | None:
    """``event_finish`` with either ``action_of`` or ``then`` on PostgreSQL: one
    statement, run as a transaction of its own. When the event is gone (its
    container's records deleted meanwhile), the action is looked up as
    ``event_finish`` does."""
    values = {"event_id": event_id, "at": utcnow(),
              "outcome": "Error" if error else "Success", "trace": traceback}
    with db.one_statement_writer() as s:
        conn = s.connection()
        if action_of is not None:
            done = conn.execute(_FINISH_EVENT_AND_ACTION[error], {
                **values, **{f"new_{k}": v for k, v in _finished(error).items()}})
            if done.rowcount:
                return None
            action_id = _action_id(s, *action_of)
            if action_id is not None:
                _finish_action(s, action_id, error)
            return None
        assert then is not None
        found = conn.execute(_FINISH_EVENT_THEN_START,
                             {**values, "event_name": then[2]}).scalar()
        if found is not None:
            return int(found)
        action_id = _action_id(s, then[0], then[1])
        return None if action_id is None else _insert_event(s, action_id, then[2])


def is_finished(db: Database, container_uuid: str, request_id: str,
                names: tuple[str, ...]) -> bool:
    """Whether the container's action named in ``names`` that this request began is
    over (the newest such, if it began more than one)."""
    with db.reader() as s:
        finish = s.scalars(select(ContainerAction.finish_time).where(
            ContainerAction.container_uuid == container_uuid,
            ContainerAction.request_id == request_id, ContainerAction.action.in_(names))
            .order_by(ContainerAction.id.desc()).limit(1)).first()
    return finish is not None


def list_actions(db: Database, container_uuid: str) -> list[ContainerAction]:
    with db.reader() as s:
        return list(s.scalars(select(ContainerAction)
                              .where(ContainerAction.container_uuid == container_uuid)
                              .order_by(ContainerAction.start_time.desc(),
                                        ContainerAction.id.desc())).all())


def get_action(db: Database, container_uuid: str, request_id: str
               ) -> tuple[ContainerAction, list[ContainerActionEvent]]:
    with db.reader() as s:
        action = s.scalars(select(ContainerAction).where(
            ContainerAction.container_uuid == container_uuid,
            ContainerAction.request_id == request_id)).first()
        if action is None:
            raise exc.ResourceNotFound(
                resource=f"Action {request_id} of container {container_uuid}")
        events = list(s.scalars(select(ContainerActionEvent)
                                .where(ContainerActionEvent.action_id == action.id)
                                .order_by(ContainerActionEvent.id)).all())
    return action, events


def recent(db: Database, project_id: str | None, limit: int
           ) -> list[tuple[ContainerAction, str | None]]:
    """The latest ``limit`` actions on the containers of a project (of every project
    when ``project_id`` is None), newest first, each with its container's name: the
    console's events view."""
    query = (select(ContainerAction, Container.name)
             .join(Container, Container.uuid == ContainerAction.container_uuid)
             .order_by(ContainerAction.start_time.desc(), ContainerAction.id.desc())
             .limit(limit))
    if project_id is not None:
        query = query.where(Container.project_id == project_id)
    with db.reader() as s:
        return [(action, name) for action, name in s.execute(query)]


def format_time(value: dt.datetime | None) -> str | None:
    return value.strftime("%Y-%m-%dT%H:%M:%S.%f") if value else None
