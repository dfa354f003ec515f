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

The check is the scheduler's ResourceFilter; with that filter disabled there is no
check (``FilterScheduler.room_check``), and only the agent's claim and Placement
refuse a node without room. The lock is held for one short transaction; an agent's write of the node's usage
waits for it as well, and nothing else is locked after it, so locks are always taken
in one order (project, then node).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from sqlalchemy import Connection

from berth.db import nodes
from berth.scheduler.base import RequestSpec, Selection
from berth.scheduler.filters.resource_filter import ResourceFilter
from berth.scheduler.host_state import usage_now

LOG = logging.getLogger(__name__)

_FITS = ResourceFilter()


class NodeFilledMeanwhile(Exception):
    """Other requests filled the chosen node between the scheduler's read and the
    insert."""

    def __init__(self, host: str, why: str) -> None:
        super().__init__(f"node {host} was filled meanwhile: {why}")
        self.host = host
        self.why = why


def still_fits(selection: Selection, spec: RequestSpec) -> Callable[[Connection], None]:
    """The check to run in the insert's transaction (after any other lock it takes):
    NodeFilledMeanwhile when the container no longer fits on the chosen node. A
    selection without the node's state (another scheduler) is not checked."""
    host = selection.state

    def check(conn: Connection) -> None:
        if host is None or not host.node_uuid:
            return
        nodes.lock_compute_node(conn, host.node_uuid)
        why = _FITS.passes(usage_now(conn, host), spec)
        if why is not None:
            raise NodeFilledMeanwhile(host.hostname, why)

    return check
