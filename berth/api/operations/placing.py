"""Writing a new container's row onto the node the scheduler chose, atomically with
the check that the node still has room (``berth.scheduler.node_claim``); when other
requests filled it meanwhile, the scheduler chooses again without it."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

from sqlalchemy import Connection

from berth.api.state import ApiState
from berth.common import exceptions as exc
from berth.scheduler.base import RequestSpec, Selection
from berth.scheduler.node_claim import NodeFilledMeanwhile

LOG = logging.getLogger(__name__)

T = TypeVar("T")
Guard = Callable[[Connection], object]

#: Nodes found filled meanwhile before the request fails as unscheduled.
MAX_RESCHEDULES = 8


def insert_placed(state: ApiState, spec: RequestSpec, selection: Selection, quota: Guard,
                  insert: Callable[[str, Guard], T]) -> tuple[Selection, T]:
    """``insert(host, guard)`` the row placed on ``selection``'s node; ``guard`` (the
    project's ``quota`` check, then the node's) must run in the insert's transaction.
    Returns the node finally used and what ``insert`` returned. NoValidHost when every
    node that fitted was filled by other requests before the row could be written."""
    full: set[str] = set()
    while True:
        node_check = state.scheduler.room_check(selection, spec)

        def guard(conn: Connection, node_check: Guard = node_check) -> None:
            quota(conn)
            node_check(conn)

        try:
            return selection, insert(selection.host, guard)
        except NodeFilledMeanwhile as err:
            full.add(err.host)
            LOG.info("%s; scheduling again without it", err)
            if len(full) >= MAX_RESCHEDULES:
                raise exc.NoValidHost(
                    f"There are not enough hosts available: {len(full)} nodes were "
                    f"filled by other requests while this one was placed.") from err
            selection = state.scheduler.select_destination(spec, exclude=frozenset(full))
