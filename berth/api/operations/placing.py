"""Writing the row that places a container on the node the scheduler chose,
atomically with the check that the node still has room and is still the best
choice (``berth.scheduler.node_claim``). When other requests filled the node
meanwhile, the scheduler chooses again without it; when they only made another node
the better choice, that node is tried next, as read under the lock (a few times at
most; then the node that still fits is taken)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

from sqlalchemy import Connection

from berth.api.state import ApiState
from berth.common import exceptions as exc
from berth.placement.base import Allocation, AllocationFailed, ProviderNotFound
from berth.placement.embedded import allocate_in
from berth.scheduler.base import RequestSpec, Selection
from berth.scheduler.node_claim import NodeFilledMeanwhile, NodeNoLongerBest

LOG = logging.getLogger(__name__)

T = TypeVar("T")
Guard = Callable[[Connection], object]

#: Nodes found filled meanwhile before the request fails as unscheduled.
MAX_RESCHEDULES = 8
#: Choices found no longer the best before the next one that fits is taken as it is.
MAX_REWEIGHS = 4


def insert_placed(state: ApiState, spec: RequestSpec, selection: Selection, first: Guard,
                  insert: Callable[[str, Guard], T],
                  check_host: Callable[[str], None] | None = None,
                  allocation: Allocation | None = None) -> tuple[Selection, T]:
    """``insert(host, guard)`` the row placed on ``selection``'s node; ``guard`` (the
    caller's ``first`` check, such as the project's quota, then the node's) must run
    in the insert's transaction. Returns the node finally used and what ``insert``
    returned. NoValidHost when every node that fitted was filled by other requests
    before the row could be written.

    ``check_host(host)`` (such as: the host can get the image) runs, outside the
    transaction, before the first insert on each node this placement tries: a
    request scheduled again onto another node is checked there too, never placed on
    a node only its first choice was checked on. What it raises ends the placement.

    ``allocation`` (its ``provider_uuid`` ignored): with the embedded Placement, what
    the new row's consumer is given on the chosen node's provider, in the insert's
    transaction after the node's lock (``allocate``)."""
    full: dict[str, str] = {}     # node -> why it was passed over
    checked: set[str] = set()
    reweighs = 0
    while True:
        try:
            # Counted in this process's choices while in flight (from its choice to
            # its commit): concurrent requests choose other nodes instead of queueing
            # on this one's lock to be refused there.
            with state.scheduler.holding(selection, spec):
                if check_host is not None and selection.host not in checked:
                    check_host(selection.host)
                    checked.add(selection.host)
                node_check = state.scheduler.room_check(selection, spec,
                                                        best=reweighs < MAX_REWEIGHS)

                def guard(conn: Connection, node_check: Guard = node_check,
                          chosen: Selection = selection) -> None:
                    first(conn)
                    node_check(conn)
                    allocate(state, conn, chosen, allocation)

                placed = insert(selection.host, guard)
                state.scheduler.placed(selection, spec)
            return selection, placed
        except NodeFilledMeanwhile as err:
            full[err.host] = err.summary
            LOG.info("%s; scheduling again without it", err)
            if len(full) >= MAX_RESCHEDULES:
                raise exc.NoValidHost(
                    f"There are not enough hosts available: {len(full)} nodes were "
                    f"filled by other requests while this one was placed.") from err
        except NodeNoLongerBest as err:
            reweighs += 1
            if err.instead is not None and err.instead.host not in full:
                LOG.debug("%s; trying it instead", err)
                selection = err.instead
                continue
            LOG.debug("%s; scheduling again", err)
        selection = state.scheduler.select_destination(spec, exclude=full)


def allocate(state: ApiState, conn: Connection, selection: Selection,
             allocation: Allocation | None) -> None:
    """With the embedded Placement (``state.placement``), write the container's
    allocation on the chosen node's provider in the transaction that places its row:
    a node Placement refuses is never chosen (NodeFilledMeanwhile: the scheduler
    chooses again without it), and the agent finds the allocation made
    (``berth.compute.steps.allocation.allocate``) instead of making it. A node that has
    not reported to Placement yet is left to its agent, which allocates (or refuses)
    as before."""
    node = selection.state
    if state.placement is None or allocation is None or node is None or not node.provider_uuid:
        return
    try:
        allocate_in(conn, allocation.consumer_uuid, node.provider_uuid, allocation.resources,
                    allocation.project_id, allocation.user_id, new_consumer=True)
    except AllocationFailed as err:
        raise NodeFilledMeanwhile(selection.host, err.msg,
                                  summary=f"Placement refuses it: {err.msg}") from err
    except ProviderNotFound:
        return
