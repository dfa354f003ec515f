"""Start-up recovery of this host's capsules (``flows.recovery.init_containers`` calls
it first, before it sweeps Docker containers that no row reaches)::

    capsule as found                          what recovery does
    ────────────────────────────────────────  ──────────────────────────────────────────
    status Creating, or task container_        every Docker container of it removed (the
      creating (the agent died in the           sandbox and each member, by the names
      create; not one placed after the          zun-<uuid>), its Placement allocation
      agent started)                            released, the capsule and its members in
                                                Error "Capsule failed to create correctly"
    status Deleting, or task container_        deleted with force
      deleting
    anything else                             its status derived again from its sandbox
                                                and members (``capsules.status``)
"""

from __future__ import annotations

import datetime as dt
import logging

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.common.log import container_context
from berth.compute import status_writes
from berth.compute.capsules import create as capsule_create
from berth.compute.capsules import delete as capsule_delete
from berth.compute.capsules import status as capsule_status
from berth.compute.deps import AgentDeps
from berth.compute.states import Status, TaskState
from berth.db import capsules, containers
from berth.db.containers import Expect
from berth.db.models import Container

LOG = logging.getLogger(__name__)

FAILED_CREATE_REASON = "Capsule failed to create correctly"


def recover_capsules(deps: AgentDeps, started_at: dt.datetime | None = None) -> int:
    """Recover every capsule of this host; how many needed more than a refresh."""
    ctx = RequestContext.admin()
    acted = 0
    for row in containers.list_by_host(deps.db, deps.host, capsules.CAPSULE):
        with container_context(row.uuid):
            try:
                acted += _recover(deps, ctx, row, started_at)
            except Exception:  # a loop boundary: log this capsule, go on with the next
                LOG.exception("could not recover this capsule (status %s, task %s)",
                              row.status, row.task_state)
    return acted


def _recover(deps: AgentDeps, ctx: RequestContext, row: Container,
             started_at: dt.datetime | None) -> int:
    task = row.task_state
    if row.status == Status.DELETING or task == TaskState.CONTAINER_DELETING:
        LOG.info("the capsule's delete was interrupted; finishing it")
        capsule_delete.delete_capsule(deps, ctx, row.uuid, force=True)
        return 1
    if row.status == Status.CREATING or task == TaskState.CONTAINER_CREATING:
        if task is None and started_at is not None and row.created_at is not None \
                and row.created_at >= started_at:
            return 0            # placed after the agent started: its cast is on its way
        _undo_create(deps, row)
        return 1
    capsule_status.refresh(deps, row)
    return 0


def _undo_create(deps: AgentDeps, row: Container) -> None:
    fail_create(deps, row, f"{FAILED_CREATE_REASON}: the compute agent of host {deps.host} "
                           f"stopped during it. Delete the capsule and create it again.")


def fail_create(deps: AgentDeps, row: Container, reason: str,
                expect: Expect = containers.ANYTHING) -> bool:
    """The capsule's create undone: whatever it left in the engine removed, the capsule
    and its members in Error saying ``reason``. ``expect``: the compare-and-swap of the
    capsule's write; False, and nothing written, when the
    row moved on meanwhile."""
    removed = capsule_create.remove_left_by_create(deps, row)
    try:
        status_writes.mark_error(deps.db, row.uuid, reason, was=row.status,
                                 columns={"task_state": None, "task_deadline": None,
                                          "container_id": None}, expect=expect)
    except (exc.TaskInProgress, exc.ContainerNotFound) as err:
        LOG.info("not failing the capsule's create: the row moved on (%s)", err.msg)
        return False
    status_writes.members_in_error(deps.db, row, reason,
                                   {"container_id": None, "task_state": None})
    deps.tracker.publish_usage()          # a capsule in Error holds nothing
    LOG.warning("the capsule's create did not complete: %d %s removed, capsule in Error",
                removed, deps.capsules.units)
    return True
