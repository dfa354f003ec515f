"""container_create: turn a Creating row into a Docker container (seed steps 3-7).

Steps, each with its undo on one ExitStack, so every failure path cleans up the same
way (claim, allocation, volumes and the engine container are ``berth.compute.steps``,
shared with rebuild and capsule create)::

    task container_creating ──► claim resources ──► pull image ──► docker create
      + the create event          (the row's host;    undo: docker rm -f ─┘
      (one write)                  released by the
                                   Error write)
                                       ┆ allocate in Placement, beside the pull and the
                                       ┆ create (undo: remove the allocation); joined
                                       ┆ before the create when already answered,
                                       ┆ else right after it
                                       ┆ with run: the network reservation (local
                                       ┆ addresses and rules, Neutron's ports), joined
                                       ┆ by the start before its plug (undo: dropped)
                                       ┆ wait for and attach the volumes (seed steps
                                       ┆ 1-2), beside the pull, joined before the
                                       ┆ create (undo: made ones removed, the rest
                                       ┆ detached: berth.compute.volumes)
    ──► inspect → Created, task cleared                        (create only)
    ──► [run] docker start, begun beside the write that hands the task to
        container_starting (and the one that ends the create event); the start's
        inspect then writes Running and ends the task

A failure before or during ``docker create`` leaves no Docker container and sets
Error (which releases the claim) and no Placement allocation; so does an allocation
that does not fit, answered after the create (its Docker container is removed). A
failed start keeps the Docker container (its logs say why) and its allocation, and
sets Error; ``start`` may be retried from Error.

The overlaps (``common.overlapped``) take the database writes of a create with run
off its critical path: the engine's create and start take tens to hundreds of
milliseconds, the writes a few each (bench P1).
"""

from __future__ import annotations

import concurrent.futures as cf
import logging
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.compute import networking
from berth.compute.deps import AgentDeps
from berth.compute.flows import common, outage
from berth.compute.flows.lifecycle import start_in_runtime
from berth.compute.flows.network_step import drop_reservation, reserve_networks, unplug_quietly
from berth.compute.image_puller import pull_image
from berth.compute.states import Status, TaskState
from berth.compute.steps import take
from berth.compute.steps.allocation import Allocation, release_allocation
from berth.compute.steps.claim import Claim
from berth.compute.steps.engine_container import (
    EngineContainer,
    made_values,
    remove_left_by_create,
)
from berth.compute.steps.failures import errors_written, reason_of
from berth.compute.steps.volumes import Volumes, release_volumes
from berth.db import actions, containers
from berth.db.containers import Expect
from berth.db.models import Container
from berth.db.task_begin import Held
from berth.metrics.catalog import create_phase
from berth.runtime import base as rt

LOG = logging.getLogger(__name__)


def create_container(deps: AgentDeps, ctx: RequestContext, uuid: str, run: bool,
                     limits: dict[str, Any] | None = None, volumes: bool = True) -> None:
    """``volumes``: whether the container may have mounts (the API's
    ``requested_volumes`` names them); False spares a create without any the read.
    A database outage in the middle is ridden out (``outage.patiently``): the create
    begins again once the database answers, from what the cut-short attempt left;
    past the patience it ends in Error saying so, with nothing held."""
    volumes_for = ctx if volumes else None
    outage.ride_out(deps, uuid, "create",
                    lambda retry: _attempt(deps, ctx, uuid, run, volumes_for, retry),
                    ctx=ctx, undo=lambda: _undo_cut_short(deps, volumes_for, uuid),
                    container_id=None)


#: The tasks a create sets: a retry after an outage takes them back from itself.
_OWN_TASKS = (None, TaskState.CONTAINER_CREATING.value, TaskState.CONTAINER_STARTING.value)


def _attempt(deps: AgentDeps, ctx: RequestContext, uuid: str, run: bool,
             volumes_for: RequestContext | None, retry: bool) -> None:
    try:
        # The task and the create event in one write, the row read back from it.
        row, event_id, held = common.begin_placed_task(
            deps, ctx, uuid, TaskState.CONTAINER_CREATING, "compute__do_container_create",
            expect=Expect(status=Status.CREATING.value,
                          task_state=_OWN_TASKS if retry else None))
    except exc.ContainerNotFound:
        LOG.info("container was deleted before its creation began; nothing to do")
        return
    except exc.TaskInProgress as err:
        LOG.warning("not creating: the container is busy or no longer Creating (%s)",
                    err.msg)
        return
    if retry:     # the row is still ours and Creating: start again from nothing
        _undo_cut_short(deps, volumes_for, uuid)
        held = None     # read before the undo released it: the step asks again
    LOG.info("creating container from image %s (run=%s)", row.image, run)
    starting: _Starting | None = None
    try:
        # With run, the start event begins in the write that ends the create event.
        with common.recorded(deps, ctx, uuid, "compute__do_container_create",
                             finish_action=not run, started=event_id,
                             then="compute__do_container_start" if run else None) as create:
            row, starting = _create(deps, row, run, volumes_for, ctx, create.ending,
                                    held_now=held)
    except exc.BerthError:
        if starting is not None:      # the write ending the create event failed
            starting.settle()
        if run:
            _finish_create_action(deps, ctx, uuid, error=True)
        return
    if run:
        try:
            with common.recorded(deps, ctx, uuid, "compute__do_container_start",
                                 started=create.next_event_id) as start:
                start_in_runtime(deps, row, task_held=True,
                                 starting=starting.engine if starting else None,
                                 reserving=starting.networks if starting else None,
                                 event=start.ending)
        except networking.NetworkPlugFailed as err:
            _fail_unplugged(deps, volumes_for, uuid, row.container_id, err)
        except exc.BerthError:
            pass   # start_in_runtime recorded the failure on the row


def _undo_cut_short(deps: AgentDeps, volumes_for: RequestContext | None, uuid: str) -> None:
    """What an attempt cut short by the database may have left, which its own undo
    could not reach (a Docker container already started, an allocation): removed,
    released. Each step is idempotent; the embedded Placement's needs the database."""
    remove_left_by_create(deps, uuid)
    release_allocation(deps, uuid)
    try:
        release_volumes(deps, volumes_for, uuid)
    except outage.DATABASE_ERRORS as err:
        LOG.warning("could not release the volumes yet (%s); the start-up reconciliation "
                    "of volumes does", outage.describe(err))
    try:
        row = containers.find_by_uuid(deps.db, uuid)
    except outage.DATABASE_ERRORS as err:
        LOG.warning("could not read the row to unplug it (%s); the CNI daemon's sync "
                    "pass removes what it held", outage.describe(err))
        return
    if row is not None and networking.requested(row):   # a reservation, a plug
        unplug_quietly(deps, row, None)


def _fail_unplugged(deps: AgentDeps, ctx: RequestContext | None, uuid: str,
                    container_id: str | None, err: networking.NetworkPlugFailed) -> None:
    """A create whose network cannot be plugged ends as a failed create does: Error
    with the reason, no Docker container (a stopped one would be synced back to
    Stopped, hiding the reason), and nothing held (allocation, volumes, claim). A
    later start's failed plug leaves it Stopped."""
    if container_id:
        try:
            deps.runtime.delete(container_id, force=True)
        except rt.RuntimeNotFound:
            pass
        except rt.RuntimeDriverError as rm_err:
            LOG.warning("could not remove the unplugged Docker container %s: %s",
                        container_id[:12], rm_err.msg)
    release_allocation(deps, uuid)
    release_volumes(deps, ctx, uuid)
    common.fail(deps, uuid, _not_created(err), container_id=None)
    deps.tracker.publish_usage()


def _finish_create_action(deps: AgentDeps, ctx: RequestContext, uuid: str, error: bool) -> None:
    actions.action_finish(deps.db, uuid, ctx.request_id, error=error)


@dataclass(frozen=True, slots=True)
class _Starting:
    """What a create with run leaves under way for the start that follows: the
    engine's start, and beside it the network reservation (``reserve_networks``)."""

    engine: cf.Future[None]
    networks: cf.Future[None] | None

    def settle(self) -> None:
        common.settle(self.engine)
        if self.networks is not None:
            common.settle(self.networks)


def _create(deps: AgentDeps, row: Container, run: bool = False,
            volumes_for: RequestContext | None = None, ctx: RequestContext | None = None,
            event: actions.EventEnding | None = None,
            held_now: Held | None = None) -> tuple[Container, _Starting | None]:
    """``row`` carries task container_creating (``common.begin_task``). With
    ``volumes_for`` (the caller's context), the container's volumes are attached
    first (and released again by a failure). With ``run``,
    the row leaves with task container_starting (handed over in the write that
    records the Docker container) and status still Creating, and the engine's start
    is under way: the returned future. The start that follows joins it and ends the
    task with the Running write. ``event``: the create event's end, for the last
    write to make (``common.Recording.ending``). ``held_now``: what the container
    held in Placement as its task was set (``common.begin_placed_task``; None: not
    read)."""
    uuid = row.uuid
    starting: _Starting | None = None
    # On a failure the undo runs first, then the Error is written (the row's last
    # state, with nothing of the create left in the engine or in Placement), then the
    # task is cleared.
    with (common.owned_task(deps, uuid, TaskState.CONTAINER_CREATING, held=row) as hold,
          errors_written(deps, uuid, "creation", reason_for=_failure_of),
          ExitStack() as undo):
        # Begun beside the pull and the create. The API allocated with the row
        # (embedded Placement): Placement, counting this node's own inventory, had
        # room, which is what the claim would check.
        allocation = take(undo, Allocation(deps, row, overlapped=True, held_now=held_now))
        take(undo, Claim(deps, row, held=allocation.held))
        # With run, the network reservation (addresses and rules; Neutron's ports,
        # which take it 0.2-0.7 s) begins now, beside the pull and the engine's create
        # and start; the start joins it before the plug.
        reserving = reserve_networks(deps, row) if run else None
        if reserving is not None:
            undo.callback(drop_reservation, deps, row, reserving)
        # The volumes are attached beside the pull (a mkfs and a mount take tens of
        # milliseconds); joined before docker create, which binds them.
        volumes = (take(undo, Volumes(deps, volumes_for, [uuid], overlapped=True))
                   if volumes_for is not None else None)
        try:
            with create_phase("pull"):
                image = pull_image(deps, row, ctx)
            binds = volumes.binds().get(uuid, ()) if volumes is not None else ()
            if allocation.answered():
                allocation.join()      # refused: no docker create
            with create_phase("create"):
                engine = take(undo, EngineContainer(deps, row, image, binds))
        except (rt.RuntimeDriverError, exc.ImageNotFound):
            allocation.join()   # a refusal is the reason to give
            raise
        allocation.join()
        container_id = engine.container_id
        assert container_id is not None      # acquired
        created = {**made_values(row, engine.image, container_id), "status_reason": None}
        if run:   # the start's inspect tells the state; Creating until then
            starting = _Starting(common.overlapped(deps, _start_in_engine, deps, container_id),
                                 reserving)
            # The start is over before its container is removed (undone in reverse).
            undo.callback(common.settle, starting.engine)
            row = hold.hand_over(deps, TaskState.CONTAINER_STARTING, created, event=event)
        else:
            inspect_began = deps.last_inspected.now()
            seen = deps.runtime.inspect(container_id)
            row = hold.apply_and_end(deps, seen, created, inspected=inspect_began,
                                     event=event)
        undo.pop_all()
    # No publish_usage here: the claim published this container's share already, and
    # the node's per-status counts are refreshed by the next claim, delete or inventory.
    LOG.info("created Docker container %s", row.container_id)
    return row, starting


def _failure_of(err: BaseException, host: str) -> tuple[str, bool] | None:
    """The reason a failed create's row gets, and whether its host is cleared (the
    node refused it); None: not a failure the row records."""
    if isinstance(err, networking.NetworkPlugFailed):   # the kuryr driver's ports, at create
        return _not_created(err), False
    return reason_of(err, host)


def _not_created(err: networking.NetworkPlugFailed) -> str:
    """The reason of a create whose network could not be plugged."""
    return (f"{err.msg.rstrip('.')}. The container was not created; fix the cause and "
            f"create it again.")


def _start_in_engine(deps: AgentDeps, container_id: str) -> None:
    with create_phase("start"):
        deps.runtime.start(container_id)
