"""container_rebuild: replace a container's Docker container with a fresh one made from
its (possibly new) image and the same spec; start it again when ``run``.

Also what auto-heal does to a container whose Docker container vanished (Zun's
auto-heal called rebuild without ``run`` and never healed anything)::

    event compute__do_container_rebuild ─► task container_rebuilding
        ─► docker rm -f <old> (gone already: fine) ─► container_id cleared
        ─► pull per policy ─► docker create (same name zun-<uuid>, same spec)
        ─► Created, reason cleared ─► task cleared
    [run] event compute__do_container_start ─► task container_starting ─► Running

Any failure sets Error with a reason that says what to do; the old Docker container
is gone by then, so the row no longer names it. The container keeps its host. Its cpu
and memory are claimed on the node and recorded in Placement again before the new
Docker container is made (a row in Error held neither: a rebuild of a failed create
used to give it a container but no claim check and no allocation). These steps are
create's (``berth.compute.steps``), on one ExitStack: a failure at any of them undoes
the ones taken, in reverse (the new Docker container removed, the volumes detached but
kept, the allocation released), and the Error then releases the claim.
"""

from __future__ import annotations

import logging
from contextlib import ExitStack
from typing import Any

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.compute import status_writes
from berth.compute.deps import AgentDeps
from berth.compute.flows import common, outage
from berth.compute.flows.lifecycle import start_in_runtime
from berth.compute.flows.network_step import unplug_quietly
from berth.compute.image_puller import pull_image
from berth.compute.states import VALID_STATES, Status, TaskState
from berth.compute.steps import take
from berth.compute.steps.allocation import Allocation, release_allocation
from berth.compute.steps.claim import Claim
from berth.compute.steps.engine_container import (
    EngineContainer,
    made_values,
    remove_left_by_create,
)
from berth.compute.steps.failures import errors_written
from berth.compute.steps.volumes import Volumes
from berth.db import actions, containers
from berth.db.containers import Expect
from berth.db.models import Container
from berth.runtime import base as rt

LOG = logging.getLogger(__name__)


#: The statuses a rebuild takes its task from: those the API lets a rebuild start
#: from, and Rebuilding, which the API writes before it casts. Never Deleting: a
#: delete accepted meanwhile wins, and the rebuild does nothing.
REBUILD_FROM = frozenset(VALID_STATES["rebuild"] | {Status.REBUILDING})


def rebuild_container(deps: AgentDeps, ctx: RequestContext, uuid: str, run: bool, *,
                      judged: Expect = containers.ANYTHING) -> bool:
    """Rebuild ``uuid`` on this node, then start it when ``run``. Records its events on
    the action of ``ctx.request_id`` (else the newest action of the container) and
    finishes that action; never raises a berth error (it is logged and the row says
    Error). The task is taken only while the row has no task, a status of
    ``judged.status`` (of ``REBUILD_FROM``, all of them when not given) and, when
    given, the Docker container ``judged.container_id`` (its ``task_state`` is not
    read); otherwise nothing is done and the action ends in Error. Returns whether the
    rebuild began."""
    began: list[bool] = []

    def attempt(retry: bool) -> None:
        began.append(_attempt(deps, ctx, uuid, run, judged, retry))

    outage.ride_out(deps, uuid, "rebuild", attempt, ctx=ctx,
                    undo=lambda: _undo_cut_short(deps, uuid), container_id=None)
    return any(began)


#: The tasks a rebuild sets: a retry after an outage takes them back from itself.
_OWN_TASKS = (None, TaskState.CONTAINER_REBUILDING.value, TaskState.CONTAINER_STARTING.value)


def _undo_cut_short(deps: AgentDeps, uuid: str) -> None:
    """What a rebuild cut short by the database may have left: a Docker container
    (the old one, or a new one no row names yet) and an allocation."""
    remove_left_by_create(deps, uuid)
    release_allocation(deps, uuid)


def _attempt(deps: AgentDeps, ctx: RequestContext, uuid: str, run: bool,
             judged: Expect, retry: bool) -> bool:
    wanted = judged.status
    allowed = REBUILD_FROM if wanted is containers.ANY else REBUILD_FROM & (
        {wanted} if isinstance(wanted, str) else set(wanted))
    try:
        row, event_id = common.begin_task(
            deps, ctx, uuid, TaskState.CONTAINER_REBUILDING, "compute__do_container_rebuild",
            expect=Expect(status=sorted(allowed),
                          container_id=containers.ANY if retry else judged.container_id,
                          task_state=_OWN_TASKS if retry else None))
    except exc.ContainerNotFound:
        LOG.info("not rebuilding: the container was deleted")
        return False
    except exc.TaskInProgress as err:
        LOG.warning("not rebuilding: the container is busy, or moved on since the rebuild "
                    "was asked for (%s)", err.msg)
        actions.action_finish(deps.db, uuid, ctx.request_id, error=True)
        return False
    if retry:     # still ours: start again from no Docker container
        _undo_cut_short(deps, uuid)
    LOG.info("rebuilding from image %s (run=%s)", row.image, run)
    try:
        with (common.recorded(deps, ctx, uuid, "compute__do_container_rebuild",
                              finish_action=not run, started=event_id),
              common.owned_task(deps, uuid, TaskState.CONTAINER_REBUILDING,
                                held=row) as hold):
            row = _rebuild(deps, hold.row)
    except exc.BerthError as err:
        LOG.warning("rebuild failed: %s", err.msg)
        if run:
            actions.action_finish(deps.db, uuid, ctx.request_id, error=True)
        return True
    if not run:
        return True
    try:
        with common.recorded(deps, ctx, uuid, "compute__do_container_start"):
            start_in_runtime(deps, row, retaking=retry)
    except exc.BerthError as err:
        LOG.warning("start after rebuild failed: %s", err.msg)
    return True


def _rebuild(deps: AgentDeps, row: Container) -> Container:
    uuid = row.uuid
    if row.status != Status.REBUILDING:
        row = status_writes.mark_rebuilding(deps.db, uuid, was=row.status)
    if row.container_id:
        row = _remove_old(deps, row)
    # A row in Error holds nothing (a failed create or rebuild released its claim by
    # that status, and its allocation with it), so a rebuild from Error is a create as
    # far as resources go; for a row that held them, the claim fits as it did and the
    # allocation is found held. A failure undoes every step taken, in reverse, before
    # the Error is written: the new Docker container removed, the volumes detached
    # (kept: they are the container's), the allocation released.
    with errors_written(deps, uuid, "the rebuild", prefix="Rebuild failed: ",
                        keeps_host=True), ExitStack() as undo:
        take(undo, Claim(deps, row))
        take(undo, Allocation(deps, row))
        binds = take(undo, Volumes(deps, None, [uuid], made_here=False)).binds()
        image = pull_image(deps, row)
        engine = take(undo, EngineContainer(deps, row, image, binds.get(uuid, ())))
        container_id = engine.container_id
        assert container_id is not None      # acquired
        seen = deps.runtime.inspect(container_id)
        row = containers.update_(deps.db, uuid, _rebuilt_values(row, engine.image,
                                                                container_id))
        row = common.apply_runtime_state(deps, row, seen)
        undo.pop_all()
    deps.tracker.publish_usage()
    LOG.info("rebuilt as Docker container %s from %s", container_id[:12], engine.image[0].ref)
    return row


def _remove_old(deps: AgentDeps, row: Container) -> Container:
    old_id = row.container_id or ""
    try:
        deps.runtime.delete(old_id, force=True)        # already gone: a no-op
    except rt.RuntimeDriverError as err:
        common.fail(deps, row.uuid, f"Rebuild failed: Docker could not remove the old "
                                    f"container {old_id[:12]}: {err.msg}. Remove it with "
                                    f"docker rm -f, then rebuild again.")
        raise
    LOG.info("removed the old Docker container %s", old_id[:12])
    # Its namespace went with it: unplug now, so that its addresses are free at once.
    return containers.update_(deps.db, row.uuid, {"container_id": None,
                                                  **unplug_quietly(deps, row, None)})


def _rebuilt_values(row: Container, image: tuple[rt.ImageRef, rt.ImageInfo],
                    container_id: str) -> dict[str, Any]:
    return status_writes.status_values(
        Status.CREATED, was=Status.REBUILDING, uuid=row.uuid, by="rebuild",
        status_reason=None, status_detail="Created",
        **made_values(row, image, container_id))
