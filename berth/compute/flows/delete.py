"""container_delete: remove the Docker container, then the row (seed: deletion).

A container that still runs is stopped first (``_remove``: the stop of a ``delete
--stop`` may come after the delete). Without ``force`` an engine failure sets Error
and keeps the row; with ``force`` it is logged and the deletion goes on. A
container the engine no longer has counts as removed. Then the Placement allocation
is released, and the row goes last (only once Placement has released it, even with
``force``, so no allocation outlives its row), and with it the node usage it held.
"""

from __future__ import annotations

import logging

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.compute import networking
from berth.compute.deps import AgentDeps
from berth.compute.flows import common, outage, unexpected
from berth.compute.flows.network_step import unplug_quietly
from berth.compute.states import TaskState
from berth.db import containers
from berth.db.models import Container
from berth.metrics.catalog import timed_action
from berth.placement.base import PlacementError
from berth.runtime import base as rt

LOG = logging.getLogger(__name__)


def delete_container(deps: AgentDeps, ctx: RequestContext, uuid: str, force: bool) -> None:
    """Delete, and when the database goes away in the middle, delete again once it
    answers (``outage.patiently``): every step is idempotent (a gone Docker
    container, a released allocation, a destroyed row are no-ops), and the task this
    flow set may be taken back from itself. Past the patience the row keeps its task,
    and its deadline reports it. Any other error let out ends the delete in Error
    saying so (``unexpected.settle``): Deleting has no deadline of its own."""
    def attempt(retry: bool) -> None:
        row = containers.find_by_uuid(deps.db, uuid)
        if row is None:
            LOG.info("already deleted")
            return
        with timed_action("delete") as result:
            if not _delete(deps, row, force or retry, ctx, force=force):
                result.fail()

    try:
        outage.patiently(attempt, what="deleting", patience=deps.settings.database_patience)
    except outage.DATABASE_ERRORS:
        raise                   # the task's deadline reports it
    except Exception as err:  # noqa: BLE001 - the flow's boundary: not left Deleting
        unexpected.settle(deps, uuid, "delete", err, ctx=ctx)


#: Seconds a delete gives a container that still runs to stop (the API's stop of a
#: ``delete --stop`` gives it as much).
STOP_TIMEOUT = 10


def _remove(deps: AgentDeps, container_id: str, force: bool) -> None:
    """Remove the Docker container; one that still runs is stopped first unless
    ``force`` (which kills it). The API makes a ``delete --stop`` two casts,
    container_stop then container_delete (Zun's RPC contract), and the agent's RPC
    server may hand them to the container's worker in either order: a delete that
    comes first stops it as the stop would have (the stop that follows finds no row).
    The API refuses a plain delete of a Running row, so a running container here is
    that, or one started behind berth's back since."""
    try:
        deps.runtime.delete(container_id, force=force)
    except rt.RuntimeConflict:
        if force:
            raise
        LOG.info("the Docker container still runs (its stop has not come first); "
                 "stopping it, then removing it")
        deps.runtime.stop(container_id, STOP_TIMEOUT)
        deps.runtime.delete(container_id, force=False)


def _delete(deps: AgentDeps, row: Container, steal: bool,
            ctx: RequestContext | None = None, force: bool | None = None) -> bool:
    """False when the container could not be deleted (the row says why, or another
    task holds it). ``steal``: take the task over (a forced delete, or this flow's own
    task left by an attempt the database cut short); ``force`` defaults to it."""
    uuid = row.uuid
    force = steal if force is None else force
    try:
        with common.task(deps, uuid, TaskState.CONTAINER_DELETING, steal=steal):
            if row.container_id:
                try:
                    _remove(deps, row.container_id, force)
                except rt.RuntimeNotFound:
                    pass
                except rt.RuntimeDriverError as err:
                    if not force:
                        common.fail(deps, uuid,
                                    f"Docker could not remove the container: {err.msg}. "
                                    f"Stop it first, or delete it with --force.")
                        return False
                    LOG.warning("Docker could not remove the container (%s); forced "
                                "delete goes on", err.msg)
            unplug_quietly(deps, row, None)
            networking.release(deps.networks, row)
            if deps.volumes is not None:
                deps.volumes.release(ctx, [uuid])
            if not _release_allocation(deps, uuid):
                return False
            containers.destroy(deps.db, uuid)
            deps.last_inspected.forget(uuid)
    except exc.TaskInProgress as err:
        LOG.warning("not deleting: %s", err.msg)
        return False
    # Shared with every claim and delete of the next moment: 50 deletes at once made
    # 50 census queries and 50 writes of the compute_node row.
    deps.tracker.publish_usage_soon()
    LOG.info("deleted (Docker container %s)", row.container_id or "never created")
    return True


def _release_allocation(deps: AgentDeps, uuid: str) -> bool:
    """Release the container's Placement allocation (idempotent). False, with the
    row in Error, when Placement fails: the row stays so that a retry can release it."""
    if deps.placement is None:
        return True
    try:
        deps.placement.remove_allocation(uuid)
    except PlacementError as err:
        common.fail(deps, uuid, f"Placement could not release the container's resources: "
                                f"{err.msg}. Delete it again once Placement answers.")
        return False
    return True
