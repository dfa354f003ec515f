"""container_delete: remove the Docker container, then the row (seed: deletion).

Without ``force`` an engine failure sets Error and keeps the row; with ``force`` it
is logged and the deletion goes on. A container the engine no longer has counts as
removed. The row goes last, and with it the node usage it held.
"""

from __future__ import annotations

import logging

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.compute.deps import AgentDeps
from berth.compute.flows import common
from berth.compute.states import TaskState
from berth.db import containers
from berth.runtime import base as rt

LOG = logging.getLogger(__name__)


def delete_container(deps: AgentDeps, ctx: RequestContext, uuid: str, force: bool) -> None:
    row = containers.find_by_uuid(deps.db, uuid)
    if row is None:
        LOG.info("already deleted")
        return
    try:
        with common.task(deps, uuid, TaskState.CONTAINER_DELETING, steal=force):
            if row.container_id:
                try:
                    deps.runtime.delete(row.container_id, force=force)
                except rt.RuntimeNotFound:
                    pass
                except rt.RuntimeDriverError as err:
                    if not force:
                        common.fail(deps, uuid,
                                    f"Docker could not remove the container: {err.msg}. "
                                    f"Stop it first, or delete it with --force.")
                        return
                    LOG.warning("Docker could not remove the container (%s); forced "
                                "delete goes on", err.msg)
            containers.destroy(deps.db, uuid)
    except exc.TaskInProgress as err:
        LOG.warning("not deleting: %s", err.msg)
        return
    deps.tracker.publish_usage()
    LOG.info("deleted (Docker container %s)", row.container_id or "never created")
