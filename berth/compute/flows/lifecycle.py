"""start, stop, and refreshing a container from the engine (show).

Each action owns the container's task for its duration, records its event on the
request's action, and ends with the row saying what the engine says.
"""

from __future__ import annotations

import concurrent.futures as cf
import logging

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.compute import status_writes
from berth.compute.deps import AgentDeps
from berth.compute.flows import common, outage
from berth.compute.flows.network_step import (
    drop_reservation,
    follow_network,
    reserve_networks,
    unplug_quietly,
)
from berth.compute.states import Status, TaskState
from berth.db import actions, containers
from berth.db.models import Container
from berth.runtime import base as rt

LOG = logging.getLogger(__name__)


def vanished(deps: AgentDeps, row: Container) -> None:
    """The engine has no such container: Deleted when it removed it itself
    (auto_remove), else Error with a reason."""
    if row.auto_remove:
        LOG.info("Docker removed the container itself (auto_remove); marking Deleted")
        status_writes.mark_deleted(deps.db, row.uuid, was=row.status)
    else:
        common.fail(deps, row.uuid,
                    f"No such container: {row.container_id} in docker. It was removed "
                    f"outside berth; rebuild or delete it.")


def start_in_runtime(deps: AgentDeps, row: Container, *, task_held: bool = False,
                     starting: cf.Future[None] | None = None,
                     reserving: cf.Future[None] | None = None, retaking: bool = False,
                     event: actions.EventEnding | None = None) -> Container:
    """docker start under task container_starting; Running and started_at on success,
    written with the end of the task. ``task_held``: ``row`` already carries the task
    (a create with run handed it over); ``starting``: the engine's start, already
    under way (a create with run began it beside its last writes), and ``reserving``
    the network reservation begun beside it (``reserve_networks``); ``retaking``: a
    retry after a database outage (``common.owned_task``); ``event``: the start
    event's end, made by the Running write when the start succeeded
    (``common.Recording.ending``)."""
    container_id = common.require_created(row)
    with common.owned_task(deps, row.uuid, TaskState.CONTAINER_STARTING,
                           held=row if task_held else None, retaking=retaking) as hold:
        try:
            if starting is not None:
                starting.result()
            else:
                reserving = reserve_networks(deps, row)
                deps.runtime.start(container_id)
            inspect_began = deps.last_inspected.now()
            seen = deps.runtime.inspect(container_id)
        except rt.RuntimeNotFound as err:
            drop_reservation(deps, row, reserving)
            vanished(deps, row)
            raise exc.Conflict(err.msg) from err
        except rt.RuntimeDriverError as err:
            drop_reservation(deps, row, reserving)
            common.fail(deps, row.uuid, f"Docker could not start the container: {err.msg}")
            raise
        if reserving is not None:
            common.settle(reserving)     # before the plug claims it
            if seen.state is None or not seen.state.running:
                unplug_quietly(deps, row, None)     # no plug will: dropped
        step = follow_network(deps, row, seen)
        if step.failed is not None and row.status == Status.CREATING:
            # The start of a create with run: the create ends in Error without its
            # Docker container (create._fail_unplugged), never shown Stopped first.
            raise step.failed
        row = hold.apply_and_end(deps, step.seen, {
            "started_at": common.now_utc().replace(tzinfo=None), "status_reason": None,
            **step.values}, inspected=inspect_began,
            event=event if step.failed is None else None)
    if step.failed is not None:
        raise step.failed
    LOG.info("started")
    return row


def start_container(deps: AgentDeps, ctx: RequestContext, uuid: str) -> None:
    def attempt(retry: bool) -> None:
        row = containers.find_by_uuid(deps.db, uuid)
        if row is None:
            return
        try:
            with common.recorded(deps, ctx, uuid, "compute__do_container_start"):
                start_in_runtime(deps, row, retaking=retry)
        except exc.BerthError as err:
            LOG.warning("start failed: %s", err.msg)

    outage.ride_out(deps, uuid, "start", attempt, ctx=ctx)


def stop_container(deps: AgentDeps, ctx: RequestContext, uuid: str, timeout: int | None) -> None:
    def attempt(retry: bool) -> None:
        row = containers.find_by_uuid(deps.db, uuid)
        if row is None:
            return
        try:
            with common.recorded(deps, ctx, uuid, "compute__do_container_stop"):
                container_id = common.require_created(row)
                with common.task(deps, uuid, TaskState.CONTAINER_STOPPING, retaking=retry):
                    try:
                        deps.runtime.stop(container_id, timeout)
                        inspect_began = deps.last_inspected.now()
                        seen = deps.runtime.inspect(container_id)
                    except rt.RuntimeNotFound as err:
                        vanished(deps, row)
                        raise exc.Conflict(err.msg) from err
                    common.apply_runtime_state(deps, row, seen, force=True,
                                               extra=unplug_quietly(deps, row, seen),
                                               inspected=inspect_began)
            LOG.info("stopped")
        except exc.BerthError as err:
            # Zun leaves the status as it was when a stop fails; the action says Error.
            LOG.warning("stop failed: %s", err.msg)
        finally:
            if row.status == Status.DELETING:
                _await_delete(deps, uuid)

    outage.ride_out(deps, uuid, "stop", attempt, ctx=ctx)


def _await_delete(deps: AgentDeps, uuid: str) -> None:
    """The stop of a ``delete --stop`` (the API wrote Deleting, then cast a stop and a
    delete) ends with the row Deleting and a deadline again, not as Docker shows it:
    the delete is still awaited, and if its cast was lost the agent's
    ``expire_tasks`` does it once the deadline passes (``periodic/lost_casts.py``).
    Left alone when a flow holds a task (a forced delete took it) or the row is gone."""
    try:
        status_writes.mark_deleting(deps.db, uuid, was=None, columns={
            "task_deadline": common.task_deadline(deps.settings,
                                                  TaskState.CONTAINER_DELETING)},
            expect=containers.NO_TASK)
    except (exc.TaskInProgress, exc.ContainerNotFound):
        pass


