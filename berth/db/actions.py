"""Queries on ``container_actions`` and ``container_actions_events``: the audit trail
of what was asked of a container (by the API) and what the agent did about it."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import select, update

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.db.engine import Database
from berth.db.models import ContainerAction, ContainerActionEvent, utcnow


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


def _mark_finished(row: ContainerAction, error: bool) -> None:
    row.finish_time = utcnow()
    if error:
        row.message = "Error"


def action_start(db: Database, ctx: RequestContext, container_uuid: str, action: str
                 ) -> ContainerAction:
    row = new_action(ctx, container_uuid, action)
    with db.writer() as s:
        s.add(row)
    return row


def _find_action(s, container_uuid: str, request_id: str | None):  # type: ignore[no-untyped-def]
    stmt = select(ContainerAction).where(ContainerAction.container_uuid == container_uuid)
    if request_id:
        row = s.scalars(stmt.where(ContainerAction.request_id == request_id)
                        .order_by(ContainerAction.id.desc())).first()
        if row is not None:
            return row
    # The agent's own work (recovery, periodic tasks) has no API request: attach its
    # events to the newest action of the container, as Zun does.
    return s.scalars(stmt.order_by(ContainerAction.id.desc())).first()


def action_finish(db: Database, container_uuid: str, request_id: str | None,
                  error: bool) -> None:
    with db.writer() as s:
        _finish_action(s, container_uuid, request_id, error)


def _finish_action(s, container_uuid: str, request_id: str | None,  # type: ignore[no-untyped-def]
                   error: bool) -> None:
    row = _find_action(s, container_uuid, request_id)
    if row is not None:
        _mark_finished(row, error)


def event_start(db: Database, container_uuid: str, request_id: str | None, event: str
                ) -> int | None:
    with db.writer() as s:
        return start_event_in(s, container_uuid, request_id, event)


def start_event_in(s, container_uuid: str, request_id: str | None,  # type: ignore[no-untyped-def]
                   event: str) -> int | None:
    """``event_start`` within the caller's write transaction ``s``."""
    action = _find_action(s, container_uuid, request_id)
    if action is None:
        return None
    ev = ContainerActionEvent(event=event, action_id=action.id, start_time=utcnow())
    s.add(ev)
    s.flush()
    return ev.id


def event_finish(db: Database, event_id: int | None, error: bool, traceback: str | None = None,
                 *, action_of: tuple[str, str | None] | None = None,
                 then: tuple[str, str | None, str] | None = None) -> int | None:
    """End the event (Success or Error with the traceback); with ``action_of``
    (container uuid, request id), finish that action too; with ``then`` (container
    uuid, request id, event), start that event: all in one transaction. Returns the
    id of the event started (None without ``then``, or when there is no action)."""
    if event_id is None and action_of is None and then is None:
        return None
    with db.writer() as s:
        if event_id is not None:
            s.execute(update(ContainerActionEvent).where(ContainerActionEvent.id == event_id)
                      .values(finish_time=utcnow(), result="Error" if error else "Success",
                              traceback=traceback)
                      .execution_options(synchronize_session=False))
        if action_of is not None:
            _finish_action(s, action_of[0], action_of[1], error)
        return start_event_in(s, *then) if then is not None else None


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


def format_time(value: dt.datetime | None) -> str | None:
    return value.strftime("%Y-%m-%dT%H:%M:%S.%f") if value else None
