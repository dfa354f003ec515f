"""container_delete for a capsule: its members' Docker containers (init containers
included), then the sandbox (with the cri driver: the pod, StopPodSandbox then
RemovePodSandbox), then the Placement allocation, then the rows.

As for a container, an engine failure without ``force`` puts the capsule in Error and
keeps its rows (delete again, or with --force); with ``force`` it is logged and the
deletion goes on. A Docker container the engine no longer has counts as removed.
"""

from __future__ import annotations

import logging

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.compute.capsules import create as capsule_create
from berth.compute.deps import AgentDeps
from berth.compute.flows import common, outage
from berth.compute.states import TaskState
from berth.db import capsules, containers
from berth.db.models import Container
from berth.metrics.catalog import timed_action
from berth.placement.base import PlacementError

LOG = logging.getLogger(__name__)


def delete_capsule(deps: AgentDeps, ctx: RequestContext, uuid: str, force: bool) -> None:
    """Delete the capsule ``uuid``. A database outage in the middle is ridden out
    (``outage.ride_out``): the delete runs again once the database answers (every step
    is idempotent: a removed container, a released allocation, destroyed rows; the task
    is taken over whoever set it). Past the patience, or when it fails in a way it did
    not plan for, what is left of it in the engine is removed and its allocation
    released (``capsules.create.abandon``), and the capsule ends in Error saying so (not
    Deleting, which nothing else would end): delete it again to remove its rows."""
    def attempt(_retry: bool) -> None:
        row = containers.find_by_uuid(deps.db, uuid)
        if row is None:
            LOG.info("capsule already deleted")
            return
        with timed_action("delete") as result:     # as a container's delete counts
            if not _delete(deps, row, force, ctx):
                result.fail()

    outage.ride_out(deps, uuid, "capsule delete", attempt, ctx=ctx,
                    undo=lambda: capsule_create.abandon(deps, uuid, "delete"),
                    container_id=None, addresses={})


def _delete(deps: AgentDeps, row: Container, force: bool,
            ctx: RequestContext | None = None) -> bool:
    """False when the capsule could not be deleted (its row says why, or another task
    holds it)."""
    uuid = row.uuid
    inits, members = capsules.members_of(deps.db, row.id)
    try:
        with common.task(deps, uuid, TaskState.CONTAINER_DELETING, steal=True):
            if not deps.capsules.remove(deps, row, [*members, *inits], force):
                return False
            if deps.volumes is not None:
                deps.volumes.release(ctx, [m.uuid for m in (*members, *inits)])
            if deps.placement is not None:
                try:
                    deps.placement.remove_allocation(uuid)
                except PlacementError as err:
                    common.fail(deps, uuid, f"Placement could not release the capsule's "
                                            f"resources: {err.msg}. Delete it again once "
                                            f"Placement answers.")
                    return False
            capsules.destroy(deps.db, uuid)
            for member in (*members, *inits, row):
                deps.last_inspected.forget(member.uuid)
    except exc.TaskInProgress as err:
        LOG.warning("not deleting the capsule: %s", err.msg)
        return False
    deps.tracker.publish_usage_soon()
    LOG.info("capsule deleted (sandbox %s, %d members)", row.container_id or "never created",
             len(members) + len(inits))
    return True
