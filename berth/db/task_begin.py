"""A flow's first write: the container's task set by a compare-and-swap (as
``containers.update_``) and the event of the request's action started, in one commit.

On PostgreSQL, for a request's flow, it is ONE statement, run in autocommit: the
UPDATE and the event's INSERT are data-modifying parts of a ``WITH``, the INSERT
taking place only when the UPDATE matched the row, and the row, its registry's
uuid and the event's id come back from it. Elsewhere (MariaDB, SQLite), and for the
agent's own work (no request: the event goes on the container's newest action), it
is a transaction of its own: BEGIN, the update, the event's statements, COMMIT.
Every create, rebuild and capsule create begins this way; the transaction's way
cost three round trips and an ORM session more (bench P15: about a tenth of an
agent's CPU per container)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, cast

from sqlalchemy import Table, bindparam, exists, select

from berth.db import actions, containers, rows
from berth.db.base import utcnow
from berth.db.containers import Expect
from berth.db.engine import Database
from berth.db.models import Container, ContainerAction, registry_uuid_of

_ACTIONS = cast(Table, ContainerAction.__table__)


def begin(db: Database, uuid: str, values: Mapping[str, Any], *, expect: Expect,
          request_id: str | None, event: str) -> tuple[Container, int | None]:
    """Write ``values`` to the row when it meets ``expect``, and start ``event`` on
    the action ``request_id`` began on the container (on its newest action when the
    request began none, or there is no request), in one commit. Returns the row,
    detached, and the event's id (None when the container has no action at all).
    ContainerNotFound when the row is gone, TaskInProgress when it does not meet
    ``expect``; then nothing is written."""
    if request_id and db.engine.dialect.name == "postgresql":
        return _in_one_statement(db, uuid, values, expect, request_id, event)
    return containers.update_with(
        db, uuid, values, lambda s: actions.start_event_in(s, uuid, request_id, event),
        expect=expect)


def _in_one_statement(db: Database, uuid: str, values: Mapping[str, Any], expect: Expect,
                      request_id: str, event: str) -> tuple[Container, int | None]:
    update, params = containers.prepared_update(uuid, values, expect, returning=True)
    params.update(request_id=request_id, event_name=event, at=utcnow())
    with db.one_statement_connection() as conn:
        found = conn.execute(_with_event(update), params).first()
        if found is None:
            raise containers.refusal(conn, uuid)
    record = dict(found._mapping)
    event_id = record.pop("event_id")
    row: Container = rows.detached(Container, record)
    if event_id is None:
        # The request began no action on the container (the task is set, committed):
        # the event goes on its newest action, as ``actions.start_event_in`` does.
        event_id = actions.event_start(db, uuid, None, event)
    return row, event_id


@functools.lru_cache(maxsize=64)
def _with_event(update: Any) -> Any:
    """``update`` (one of ``containers.prepared_update``'s, RETURNING the row) and the
    INSERT of the event on the request's action, made only if the update matched, as
    one statement; it answers the row, its ``registry_uuid`` and the ``event_id``
    (None when the request began no action on the container). Built once per shape
    of update (they are built once per shape too)."""
    updated = update.cte("updated")
    started = actions.started_event(
        _ACTIONS.c.id, _ACTIONS.c.container_uuid == bindparam("w_uuid"),
        _ACTIONS.c.request_id == bindparam("request_id"), exists(select(updated.c.id)),
        newest=True).cte("started")
    event_id = select(started.c.id).scalar_subquery().label("event_id")
    return select(*updated.c, registry_uuid_of(updated.c.registry_id), event_id)
