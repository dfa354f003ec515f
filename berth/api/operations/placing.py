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
from berth.placement.embedded import allocate_locked, lock_provider
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
                ledger = NodeAllocation(state, selection, allocation)
                node_check = state.scheduler.room_check(selection, spec,
                                                        best=reweighs < MAX_REWEIGHS,
                                                        lock=ledger.lock)

                def guard(conn: Connection, node_check: Guard = node_check,
                          ledger: NodeAllocation = ledger) -> None:
                    first(conn)
                    node_check(conn)
                    ledger.allocate(conn)

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


class NodeAllocation:
    """With the embedded Placement (``state.placement``), the container's allocation
    on the chosen node's provider, written in the transaction that places its row: a
    node Placement refuses is never chosen (NodeFilledMeanwhile: the scheduler
    chooses again without it), and the agent finds the allocation made
    (``berth.compute.steps.allocation.allocate``) instead of making it. A node that has
    not reported to Placement yet is left to its agent, which allocates (or refuses)
    as before.

    The provider's row is the node's lock in that transaction too (``lock``, which the
    scheduler's room check takes instead of the node's compute_node row: one
    statement fewer a create, bench P15); placings on one node are serialised by
    either, and a node has a provider once it has reported."""

    def __init__(self, state: ApiState, selection: Selection,
                 allocation: Allocation | None) -> None:
        node = selection.state
        self._host = selection.host
        self._allocation = allocation
        self._provider = (node.provider_uuid if state.placement is not None
                          and allocation is not None and node is not None else None)
        # What ``lock`` found in this transaction: the provider's id, locked; or that
        # the node has no provider yet.
        self._locked: int | None = None
        self._absent = False

    def lock(self, conn: Connection) -> bool:
        """Lock the node's provider row in ``conn``'s transaction; False when there is
        none to allocate on (the caller locks the node another way)."""
        self._locked, self._absent = None, False
        if not self._provider:
            return False
        try:
            self._locked = lock_provider(conn, self._provider)
        except ProviderNotFound:
            self._absent = True
            return False
        return True

    def allocate(self, conn: Connection) -> None:
        """Write the allocation, on the provider ``lock`` locked in this transaction
        (else locked now)."""
        locked, absent = self._locked, self._absent
        self._locked, self._absent = None, False
        allocation = self._allocation
        if not self._provider or allocation is None or absent:
            return
        try:
            rp_id = locked if locked is not None else lock_provider(conn, self._provider)
            allocate_locked(conn, rp_id, self._provider, allocation.consumer_uuid,
                            allocation.resources, allocation.project_id,
                            allocation.user_id, new_consumer=True)
        except AllocationFailed as err:
            raise NodeFilledMeanwhile(self._host, err.msg,
                                      summary=f"Placement refuses it: {err.msg}") from err
        except ProviderNotFound:
            return
