"""delete_unused_containers: remove the rows of ``auto_remove`` containers that Docker
already removed (status Deleted, no task_state), on this host only.

Zun's version reads every host's rows (so each node tries to delete every node's
containers) and stops the cycle at the first error; here one failure is logged with
the container's uuid, counted, and the cycle goes on with the next row.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from berth.common.context import RequestContext
from berth.common.log import container_context
from berth.compute.deps import AgentDeps
from berth.compute.flows import delete
from berth.compute.states import Status
from berth.db import containers
from berth.db.models import Container

LOG = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class CleanupReport:
    rows_read: int
    deleted: int
    failed: int


def is_unused(row: Container) -> bool:
    """An auto_remove container that Docker removed and no task is working on."""
    return bool(row.auto_remove) and row.status == Status.DELETED and not row.task_state


def delete_unused_containers(deps: AgentDeps) -> CleanupReport:
    rows = containers.list_by_host(deps.db, deps.host)
    unused = [row for row in rows if is_unused(row)]
    deleted = failed = 0
    ctx = RequestContext.admin()
    for row in unused:
        with container_context(row.uuid):
            try:
                delete.delete_container(deps, ctx, row.uuid, force=True)
            except Exception:
                failed += 1
                LOG.exception("could not delete this unused auto_remove container; the "
                              "next cycle tries again")
            else:
                deleted += 1
    if unused:
        LOG.info("delete_unused_containers on %s: %d deleted, %d failed", deps.host,
                 deleted, failed)
    return CleanupReport(rows_read=len(rows), deleted=deleted, failed=failed)
