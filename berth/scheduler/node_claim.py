"""The API's side of a placement: the chosen node still has room when the row that
places the container there is written.

The scheduler reads every node's usage, then the API inserts the row naming the node
it chose; two API processes choosing at once read the same usage, and both rows
would land on a node that has room for one. So the insert's transaction first locks
the node's compute_node row, reads the node's usage again and checks that the
container still fits as Placement counts it (``ResourceFilter``); when it does not,
the insert is refused (``NodeFilledMeanwhile``) and the API schedules again without
that node::

    API process 1   BEGIN ─► quota lock ─► lock node ─► usage, fits? ─► INSERT ─► COMMIT
    API process 2            BEGIN ─► quota lock ─► lock node └ waits ┘ ─► usage, fits? ...

Concurrent requests read the same usage and all choose the same node, which would
pile a burst onto it. So the filter scheduler also asks, under the lock, whether the
node with its usage read again is still the best of the candidates it chose from
(``NodeNoLongerBest`` when it is not): the requests queued on one node's lock go,
one after the other, to the node that is emptiest now (``FilterScheduler.room_check``).

The check is the scheduler's ResourceFilter; with that filter disabled there is no
check (``FilterScheduler.room_check``), and only the agent's claim and Placement
refuse a node without room.

The lock is held for one short transaction, which an agent's write of the node's
usage (a statement of its own) waits for too. Locks are taken in one order: the
project's quota row, then the node, then the container's row (the insert, or an
evacuation's update); no transaction takes them the other way round.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from sqlalchemy import Connection

from berth.db import nodes
from berth.scheduler.base import HostState, NodeLock, RequestSpec, Selection
from berth.scheduler.filters.resource_filter import ResourceFilter
from berth.scheduler.host_state import usage_now

LOG = logging.getLogger(__name__)

_FITS = ResourceFilter()


class NodeFilledMeanwhile(Exception):
    """Other requests filled the chosen node between the scheduler's read and the
    insert (or, with ``summary``, the insert found it refused otherwise: Placement)."""

    def __init__(self, host: str, why: str, now: HostState | None = None,
                 summary: str | None = None) -> None:
        #: Why the node is passed over, as the scheduler's NoValidHost says it.
        self.summary = summary or f"filled by other requests meanwhile ({why})"
        super().__init__(f"node {host}: {self.summary}")
        self.host = host
        self.why = why
        #: The node as read under its lock.
        self.now = now


class NodeNoLongerBest(Exception):
    """The chosen node still fits, but what other requests placed there since the
    scheduler's read makes another candidate the better choice now (spread).
    ``instead``: that candidate as read under the lock, with the others weighed
    beside it as its alternatives: the next choice, without another pass over every
    node."""

    def __init__(self, host: str, better: str, instead: Selection | None = None) -> None:
        super().__init__(f"node {host} is no longer the best choice ({better} is)")
        self.host = host
        self.better = better
        self.instead = instead


def fresh_fit(conn: Connection, host: HostState, spec: RequestSpec,
              lock: NodeLock | None = None) -> HostState:
    """Lock ``host`` for the rest of ``conn``'s transaction (``lock``, else its
    compute_node row) and read its usage again; the node as it is now.
    NodeFilledMeanwhile when the container no longer fits there."""
    if lock is None or not lock(conn):
        nodes.lock_compute_node(conn, host.node_uuid)
    now = usage_now(conn, host)
    why = _FITS.passes(now, spec)
    if why is not None:
        raise NodeFilledMeanwhile(host.hostname, why, now)
    return now


def still_fits(selection: Selection, spec: RequestSpec) -> Callable[[Connection], None]:
    """The check to run in the insert's transaction (after any other lock it takes):
    NodeFilledMeanwhile when the container no longer fits on the chosen node. A
    selection without the node's state (another scheduler) is not checked."""
    host = selection.state

    def check(conn: Connection) -> None:
        if host is not None and host.node_uuid:
            fresh_fit(conn, host, spec)

    return check
