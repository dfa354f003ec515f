"""audit_allocations: this node's Placement allocations match what its containers hold.

The flows write Placement as they go: a create allocates, a delete and a failed create
release, a resize moves the allocation. When a later step fails, the earlier ones are
undone. An undo that cannot reach Placement (OpenStack Placement down at that moment)
leaves an allocation that no longer matches its row: a failed create still holding its
resources, or a resize undone in the row but not in Placement. Zun never looks again,
so the node's capacity in Placement stays smaller than it is.

Each run reads the provider's allocations once and this host's rows once. A consumer
whose allocation differs from what its row holds is a *suspect*. For each suspect a
check is queued on the container's worker, after anything already queued there (a
resize or a delete about to settle it), so it never races a flow of the same container.
The check reads the row and the allocation again and then:

    no row, or a failed create (Error, no Docker container)   -> release
    a settled row (no task; not Creating, Deleting,
      Rebuilding; holds resources)                             -> allocate what it holds
    anything else (work in flight, Error with a Docker
      container, a row now on another host)                    -> leave it

A check that cannot reach Placement, or whose correction does not fit yet (another
leftover released in the same run, in parallel, was still held), is logged; the next
run tries again.

On a provider shared with Nova (``[compute]host_shared_with_nova``) the consumers
without a container row on this host are Nova's instances as much as berth's
leftovers: the audit leaves them alone and checks only this host's containers.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from berth.compute.deps import AgentDeps
from berth.compute.flows.recovery import create_undone
from berth.compute.states import Status
from berth.db import containers, nodes
from berth.db.capsules import CAPSULE
from berth.db.models import Container
from berth.metrics import catalog
from berth.placement.base import PlacementError
from berth.placement.requests import container_resources

LOG = logging.getLogger(__name__)

#: Statuses whose row is in the middle of a flow: their allocation is the flow's.
_IN_FLIGHT = (Status.CREATING.value, Status.DELETING.value, Status.REBUILDING.value)

Submit = Callable[..., None]


@dataclass(slots=True)
class AuditReport:
    suspects: int = 0        # checks queued


def wanted_allocation(row: Container | None, host: str) -> dict[str, int] | None:
    """What the consumer should hold on ``host``'s provider: its resources, ``{}``
    (nothing), or None when the audit must leave it alone."""
    if row is None:
        return {}
    failed_create = create_undone(row, host)
    if row.host != host:         # elsewhere: ours only if it gave this host back
        return {} if failed_create else None
    if row.task_state is not None or row.status in _IN_FLIGHT:
        return None
    if row.status == Status.ERROR.value:
        return {} if failed_create else None
    if row.status == Status.DELETED.value:
        return {}
    return container_resources(row.cpu, row.memory, row.disk)


def audit_allocations(deps: AgentDeps, submit: Submit, shared: bool = False) -> AuditReport:
    """Find the suspects (one read of Placement, one of the rows) and queue a check
    for each with ``submit(uuid, fn, *args)`` (``ContainerWorkers.submit``).
    ``shared``: the provider is Nova's too; consumers without a row here are left
    alone."""
    report = AuditReport()
    if deps.placement is None:
        return report
    provider = nodes.provider_uuid_of(deps.db, deps.host)
    try:
        held = deps.placement.provider_allocations(provider)
    except PlacementError as err:
        catalog.ALLOCATION_AUDIT_FAILURES.inc()
        LOG.warning("could not read the allocations of provider %s to audit them: %s; "
                    "the next run tries again", provider, err.msg)
        return report
    # Containers and capsules hold allocations; a capsule's members do not.
    rows = {row.uuid: row for row in (*containers.list_by_host(deps.db, deps.host),
                                      *containers.list_by_host(deps.db, deps.host, CAPSULE))}
    suspects = {uuid for uuid, resources in held.items()
                if (uuid in rows or not shared)
                and _differs(rows.get(uuid), resources, deps.host)}
    suspects.update(uuid for uuid, row in rows.items() if uuid not in held
                    and wanted_allocation(row, deps.host))
    for uuid in sorted(suspects):
        submit(uuid, check_allocation, deps, uuid, provider)
    report.suspects = len(suspects)
    if suspects:
        LOG.info("allocation audit: %d of %d consumer(s) to check", len(suspects),
                 len(held))
    return report


def _differs(row: Container | None, held: dict[str, int], host: str) -> bool:
    """Whether a consumer holding ``held`` needs a check: it has no row on this host
    (gone, or a failed create: the check reads it), or a row the audit may fix wants
    something else."""
    if row is None:
        return True
    want = wanted_allocation(row, host)
    return want is not None and want != held


def check_allocation(deps: AgentDeps, uuid: str, provider: str) -> None:
    """Make the consumer's allocation what its row holds (``wanted_allocation``),
    reading both again; runs on the container's worker."""
    assert deps.placement is not None
    row = containers.find_by_uuid(deps.db, uuid)
    want = wanted_allocation(row, deps.host)
    if want is None:
        return
    try:
        held = deps.placement.get_allocation(uuid)
        if held == ({provider: want} if want else {}):
            return
        if not want:
            deps.placement.remove_allocation(uuid)
            catalog.ALLOCATION_CORRECTIONS.labels("released").inc()
            LOG.warning("released the Placement allocation %s that %s", held,
                        "no container holds any more" if row is None
                        else "this failed create still held")
            return
        assert row is not None
        deps.placement.allocate(uuid, provider, want, row.project_id, row.user_id)
        catalog.ALLOCATION_CORRECTIONS.labels("allocated").inc()
        LOG.warning("Placement allocation corrected from %s to %s (what the container "
                    "holds)", held, want)
    except PlacementError as err:
        catalog.ALLOCATION_AUDIT_FAILURES.inc()
        LOG.warning("could not correct the Placement allocation of this container: %s; "
                    "the next audit tries again", err.msg)
