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
agent's CPU per container).

A create also asks, in that one statement, what the container holds in the embedded
Placement (``begin_reading_allocations``): the API wrote its allocation with the row,
and the agent's allocation step takes it over instead of allocating again; that read
was a statement of its own, one of the four an agent sent per create (bench P15)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, cast

from sqlalchemy import Table, bindparam, exists, func, select

from berth.db import actions, containers, rows
from berth.db.base import utcnow
from berth.db.containers import Expect
from berth.db.engine import Database
from berth.db.models import Container, ContainerAction, registry_uuid_of
from berth.db.placement_models import ProviderAllocation, ResourceProvider

_ACTIONS = cast(Table, ContainerAction.__table__)

#: What the container (the consumer ``w_uuid``) holds in the embedded Placement, as
#: (provider uuid, resource class, amount) in a JSON array (NULL: nothing).
_HELD = (select(func.json_agg(func.json_build_array(
            ResourceProvider.uuid, ProviderAllocation.resource_class,
            ProviderAllocation.used)))
         .select_from(ProviderAllocation)
         .join(ResourceProvider,
               ResourceProvider.id == ProviderAllocation.resource_provider_id)
         .where(ProviderAllocation.consumer_id == bindparam("w_uuid"))
         .scalar_subquery().label("held"))

#: (provider uuid, resource class) -> amount: what a consumer holds in Placement.
Held = dict[tuple[str, str], int]


def begin(db: Database, uuid: str, values: Mapping[str, Any], *, expect: Expect,
          request_id: str | None, event: str) -> tuple[Container, int | None]:
    """Write ``values`` to the row when it meets ``expect``, and start ``event`` on
    the action ``request_id`` began on the container (on its newest action when the
    request began none, or there is no request), in one commit. Returns the row,
    detached, and the event's id (None when the container has no action at all).
    ContainerNotFound when the row is gone, TaskInProgress when it does not meet
    ``expect``; then nothing is written."""
    row, event_id, _ = _begin(db, uuid, values, expect, request_id, event, False)
    return row, event_id


def begin_reading_allocations(db: Database, uuid: str, values: Mapping[str, Any], *,
                              expect: Expect, request_id: str | None, event: str
                              ) -> tuple[Container, int | None, Held | None]:
    """``begin``, and what the container holds in the embedded Placement as its
    statement saw it: ``{}`` when nothing, None when it was not read (not one
    statement: the caller asks Placement itself)."""
    return _begin(db, uuid, values, expect, request_id, event, True)


def _begin(db: Database, uuid: str, values: Mapping[str, Any], expect: Expect,
           request_id: str | None, event: str, allocations: bool
           ) -> tuple[Container, int | None, Held | None]:
    if request_id and db.engine.dialect.name == "postgresql":
        return _in_one_statement(db, uuid, values, expect, request_id, event, allocations)
    row, event_id = containers.update_with(
        db, uuid, values, lambda s: actions.start_event_in(s, uuid, request_id, event),
        expect=expect)
    return row, event_id, None


def _in_one_statement(db: Database, uuid: str, values: Mapping[str, Any], expect: Expect,
                      request_id: str, event: str, allocations: bool
                      ) -> tuple[Container, int | None, Held | None]:
    update, params = containers.prepared_update(uuid, values, expect, returning=True)
    params.update(request_id=request_id, event_name=event, at=utcnow())
    with db.one_statement_connection() as conn:
        found = conn.execute(_with_event(update, allocations), params).first()
        if found is None:
            raise containers.refusal(conn, uuid)
    record = dict(found._mapping)
    event_id = record.pop("event_id")
    held: Held | None = None
    if allocations:
        held = {(str(rp), str(rc)): int(used) for rp, rc, used in record.pop("held") or ()}
    row: Container = rows.detached(Container, record)
    if event_id is None:
        # The request began no action on the container (the task is set, committed):
        # the event goes on its newest action, as ``actions.start_event_in`` does.
        event_id = actions.event_start(db, uuid, None, event)
    return row, event_id, held


@functools.lru_cache(maxsize=64)
def _with_event(update: Any, allocations: bool) -> Any:
    """``update`` (one of ``containers.prepared_update``'s, RETURNING the row) and the
    INSERT of the event on the request's action, made only if the update matched, as
    one statement; it answers the row, its ``registry_uuid`` and the ``event_id``
    (None when the request began no action on the container), with ``allocations``
    also what the container holds in Placement (``held``). Built once per shape of
    update (they are built once per shape too)."""
    updated = update.cte("updated")
    started = actions.started_event(
        _ACTIONS.c.id, _ACTIONS.c.container_uuid == bindparam("w_uuid"),
        _ACTIONS.c.request_id == bindparam("request_id"), exists(select(updated.c.id)),
        newest=True).cte("started")
    event_id = select(started.c.id).scalar_subquery().label("event_id")
    also = (_HELD,) if allocations else ()
    return select(*updated.c, registry_uuid_of(updated.c.registry_id), event_id, *also)
