"""init_containers: start-up recovery of this host's rows (seed: "Recovery at start-up").

The agent runs it once when it starts: after the heartbeat and the inventory (so the
tracker knows the node's capacity), before the RPC server opens (so no new cast
races with it). Each row of this host gets the first matching rule::

    row as found                                   what recovery does
    ─────────────────────────────────────────────  ──────────────────────────────────────
    status Creating, or task container_creating,   Error "Container failed to create
      image_pulling, network_*, sg_*                 correctly"; any Docker container the
                                                     create left (by id, by the uuid label,
                                                     by the name zun-<uuid>) removed first;
                                                     claim and Placement allocation released;
                                                     volumes made for it removed, the
                                                     others detached
    status Deleting, or task container_deleting    deleted with force
    task container_{starting,stopping,rebooting,   task cleared, the action run again
      pausing,unpausing,killing}, or status          (see ``_RETRIES`` for the details)
      Restarting without a task (the API's half
      of a reboot whose cast was lost)
    any other task (container_rebuilding, ...),    task cleared, Error with a reason
      or status Rebuilding without a task            saying what was interrupted, status
                                                     read again from Docker
    Running, stopped in Docker, and                started again
      [compute]resume_container_state
    anything else                                  left to the state sync, but first:
                                                     Docker's memory and cpu limits
                                                     that differ from the row's (a
                                                     resize killed half-way) are made
                                                     the row's, and so is its allocation

Then capsules are recovered (``berth.compute.capsules.recovery``), the pods of this
host that no capsule reaches are removed (``capsule_driver = cri``), and Docker
containers labelled for this host that no row can ever reach (their row is
gone, or their create failed and released the host) are removed, and the Placement
allocations of this host's failed creates (Error, no Docker container) are released:
such a row holds nothing, neither in the claims nor in Placement.

One row's failure is logged and recovery goes on with the next row; a row whose Docker
container is gone is handled by the flows like any vanished container.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from typing import Any

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.common.log import container_context
from berth.compute import networking, status_writes
from berth.compute.capsules.recovery import recover_capsules
from berth.compute.deps import AgentDeps
from berth.compute.flows import actions, delete, lifecycle, network_step, sync
from berth.compute.states import CREATE_TASK_STATES, Status, TaskState
from berth.compute.steps.allocation import release_allocation
from berth.compute.steps.engine_container import named_container
from berth.compute.steps.volumes import release_volumes
from berth.db import containers
from berth.db.containers import Expect
from berth.db.models import Container
from berth.placement.base import PlacementError
from berth.runtime import base as rt

LOG = logging.getLogger(__name__)

FAILED_CREATE_REASON = "Container failed to create correctly"


@dataclass(slots=True)
class RecoveryReport:
    """What start-up recovery did, counted per outcome."""

    failed_creates: int = 0     # interrupted creates set to Error
    deleted: int = 0            # interrupted deletes finished with force
    retried: int = 0            # interrupted actions run again
    refreshed: int = 0          # interrupted actions with no flow to rerun: task cleared
    failed_tasks: int = 0       # other interrupted tasks: Error with a reason
    resumed: int = 0            # Running rows found stopped, started again
    resizes_finished: int = 0   # resizes interrupted between the row and Docker, finished
    untouched: int = 0          # nothing to recover
    capsules_recovered: int = 0  # capsules whose interrupted create or delete was ended
    orphans_removed: int = 0    # Docker containers that no row can reach, removed
    allocations_released: int = 0  # Placement allocations of failed creates, released
    failures: int = 0           # rows whose recovery raised (logged; recovery went on)

    def add(self, outcome: str) -> None:
        setattr(self, outcome, getattr(self, outcome) + 1)

    def summary(self) -> str:
        return ", ".join(f"{f.name.replace('_', ' ')} {getattr(self, f.name)}"
                         for f in fields(self))


def init_containers(deps: AgentDeps, started_at: dt.datetime | None = None
                    ) -> RecoveryReport:
    """Recover this host's rows (see the module docstring); return what was done.

    ``started_at`` (naive UTC): rows in Creating without a task that were created at or
    after it are left alone, because their create cast may still be on its way (an API
    on another machine can place containers here as soon as the heartbeat says up)."""
    report = RecoveryReport()
    ctx = RequestContext.admin()
    engine = _engine_containers(deps)
    rows = containers.list_by_host(deps.db, deps.host)
    LOG.info("start-up recovery: %d rows and %d Docker containers on host %s",
             len(rows), len(engine), deps.host)
    for row in rows:
        with container_context(row.uuid):
            try:
                report.add(_recover(deps, ctx, row, engine, started_at))
            except Exception:  # a loop boundary: log this row, go on with the next
                LOG.exception("could not recover this container (status %s, task %s); "
                              "going on with the next one", row.status, row.task_state)
                report.failures += 1
    report.capsules_recovered = recover_capsules(deps, started_at)
    report.orphans_removed += _sweep_capsule_engine(deps)
    report.orphans_removed += remove_unreachable(deps, _engine_containers(deps))
    report.orphans_removed += _sweep_ports(deps)
    report.allocations_released = release_failed_allocations(deps)
    LOG.info("start-up recovery done: %s", report.summary())
    return report


def _sweep_ports(deps: AgentDeps) -> int:
    """What the network driver holds for containers no row records it for (with
    Neutron, this host's orphan ports: ``ContainerNetworks.sweep_orphans``)."""
    if deps.networks is None:
        return 0
    return deps.networks.sweep_orphans(
        lambda: {r.uuid: r for r in containers.list_by_host(deps.db, deps.host)})


def _sweep_capsule_engine(deps: AgentDeps) -> int:
    try:
        return deps.capsules.sweep_orphans(deps)
    except rt.RuntimeDriverError as err:
        LOG.error("could not list this host's %s (%s); recovery goes on without them",
                  deps.capsules.units, err.msg)
        return 0


def _engine_containers(deps: AgentDeps) -> list[rt.RuntimeContainer]:
    try:
        return deps.runtime.list(host=deps.host)
    except rt.RuntimeDriverError as err:
        LOG.error("could not list this host's Docker containers (%s); recovery goes on "
                  "without them", err.msg)
        return []


def _recover(deps: AgentDeps, ctx: RequestContext, row: Container,
             engine: list[rt.RuntimeContainer], started_at: dt.datetime | None) -> str:
    if deps.capsules.runs_member(row):
        return "untouched"      # a member of a pod: recovered with its capsule
    task = row.task_state
    if row.status == Status.CREATING and task == TaskState.CONTAINER_STARTING \
            and row.container_id:
        # A create with run had recorded its Docker container and handed its task to the
        # start (flows.create): the create is done, so run the start again.
        return _retry(deps, ctx, row, task)
    if row.status == Status.CREATING or task in CREATE_TASK_STATES:
        if task is None and started_at is not None and row.created_at is not None \
                and row.created_at >= started_at:
            LOG.info("Creating row placed here after the agent started; its create "
                     "is on its way")
            return "untouched"
        when = f"during {task}" if task else "before it began the create"
        reason = (f"{FAILED_CREATE_REASON}: the compute agent of host {deps.host} "
                  f"stopped {when}. Delete this container and create it again.")
        return "failed_creates" if fail_interrupted_create(deps, row, reason, engine) \
            else "untouched"
    if row.status == Status.DELETING or task == TaskState.CONTAINER_DELETING:
        LOG.info("delete was interrupted (status %s, task %s); deleting with force",
                 row.status, task)
        delete.delete_container(deps, ctx, row.uuid, force=True)
        return "deleted"
    if task is None and row.status in (Status.RESTARTING, Status.REBUILDING) \
            and _changed_since(row, started_at):
        LOG.info("%s row changed after the agent started; its cast is on its way",
                 row.status)
        return "untouched"
    if task in _RETRIES or (task is None and row.status == Status.RESTARTING):
        return _retry(deps, ctx, row, task or TaskState.CONTAINER_REBOOTING)
    if task is not None or row.status == Status.REBUILDING:
        return _fail_task(deps, row, task or "the rebuild")
    resized = _finish_resize(deps, row)
    if task is None and row.status == Status.RUNNING and deps.settings.resume_container_state:
        return _resume(deps, ctx, row)
    return "resizes_finished" if resized else "untouched"


def _finish_resize(deps: AgentDeps, row: Container) -> bool:
    """``actions.finish_interrupted_resize``, its failure logged."""
    try:
        return actions.finish_interrupted_resize(deps, row)
    except (rt.RuntimeDriverError, exc.BerthError) as err:
        LOG.error("could not check or finish an interrupted resize (%s); the next start-up "
                  "tries again", err.msg)
        return False


def fail_interrupted_create(deps: AgentDeps, row: Container, reason: str,
                            engine: Iterable[rt.RuntimeContainer] = (), *,
                            deadline: Any = containers.ANY) -> bool:
    """Set an interrupted create to Error, then remove whatever Docker container it
    left: the row's ``container_id`` may not be written yet when the agent died between
    ``docker create`` and the database write, so the engine is searched by the uuid label
    (``engine``, this host's containers) and by the name ``zun-<uuid>`` too. Error
    releases the row's claim; the usage is republished.

    Compare-and-swap on the task state read (and on ``deadline``, when given):
    False, with nothing written and nothing removed, when the row moved on meanwhile
    (a create that finished after ``row`` was read keeps its container). The row goes
    first: a crash or an engine failure after it leaves an Error row that names no
    container, whose container the state sync removes (:func:`create_undone`)."""
    left = sorted(_engine_ids_of(deps, row, engine))
    try:
        status_writes.mark_error(
            deps.db, row.uuid, reason[:2000], was=row.status,
            columns={"status_detail": None, "task_state": None, "task_deadline": None,
                     "container_id": None},
            expect=Expect(task_state=row.task_state, task_deadline=deadline))
    except exc.TaskInProgress as err:
        LOG.info("not failing the create: the row moved on (%s)", err.msg)
        return False
    except exc.ContainerNotFound:
        LOG.info("row is gone; nothing to mark")
        return False
    for container_id in left:
        LOG.info("removing Docker container %s left by the interrupted create", container_id)
        try:
            deps.runtime.delete(container_id, force=True)
        except rt.RuntimeNotFound:
            pass
        except rt.RuntimeDriverError as err:
            LOG.warning("could not remove Docker container %s (%s); the state sync removes "
                        "it once the engine answers", container_id[:12], err.msg)
    LOG.warning("interrupted create marked Error: %s", reason)
    release_allocation(deps, row.uuid)
    release_volumes(deps, None, row.uuid)
    if networking.requested(row):     # an address reserved beside the start
        network_step.unplug_quietly(deps, row, None)
    deps.tracker.publish_usage()
    return True


def _engine_ids_of(deps: AgentDeps, row: Container,
                   engine: Iterable[rt.RuntimeContainer]) -> set[str]:
    ids = {c.id for c in engine if c.uuid == row.uuid}
    if row.container_id:
        ids.add(row.container_id)
    named = named_container(deps, row.uuid)
    if named is not None:
        ids.add(named.id)
    return ids


# --- interrupted actions ---

#: task state → (flow, whether it takes a stop timeout) that reruns it as
#: ``flow(deps, ctx, uuid[, timeout=])``, the rerun passing the agent's default
#: timeout; None: nothing reruns it. A kill is never resent: its signal is not
#: recorded, and resending SIGKILL for an interrupted SIGHUP would be worse than asking
#: the user to kill again; the row is refreshed from Docker instead. The flows are
#: named directly, so a rename fails at import, not quietly at the next recovery.
_RETRIES: dict[str, tuple[Callable[..., None], bool] | None] = {
    TaskState.CONTAINER_STARTING: (lifecycle.start_container, False),
    TaskState.CONTAINER_STOPPING: (lifecycle.stop_container, True),
    TaskState.CONTAINER_REBOOTING: (actions.reboot_container, True),
    TaskState.CONTAINER_PAUSING: (actions.pause_container, False),
    TaskState.CONTAINER_UNPAUSING: (actions.unpause_container, False),
    TaskState.CONTAINER_KILLING: None,
}


def _changed_since(row: Container, started_at: dt.datetime | None) -> bool:
    when = row.updated_at or row.created_at
    return started_at is not None and when is not None and when >= started_at


def _retry(deps: AgentDeps, ctx: RequestContext, row: Container, task: str) -> str:
    if row.task_state is not None:
        containers.update_(deps.db, row.uuid, {"task_state": None, "task_deadline": None},
                           expect=Expect(task_state=row.task_state))
    retry = _RETRIES.get(task)
    if retry is None:
        LOG.warning("%s was interrupted; it cannot be rerun here, so the task is cleared "
                    "and the status read from Docker: check the container and retry", task)
        sync.refresh(deps, row.uuid)
        return "refreshed"
    flow, with_timeout = retry
    LOG.info("%s was interrupted; running %s again", task, flow.__name__)
    if with_timeout:
        flow(deps, ctx, row.uuid, timeout=deps.settings.stop_timeout_default)
    else:
        flow(deps, ctx, row.uuid)
    return "retried"


def _fail_task(deps: AgentDeps, row: Container, what: str) -> str:
    """A task the seed's table does not name (a rebuild, ...): nothing runs it any more,
    so waiting for its deadline would only keep the container busy for nothing."""
    reason = (f"{what} was interrupted: the compute agent of host {deps.host} stopped "
              f"during it; the container is in an unknown state — check it and retry")
    status_writes.mark_error(deps.db, row.uuid, reason, was=row.status,
                             columns={"task_state": None, "task_deadline": None},
                             expect=Expect(task_state=row.task_state))
    LOG.warning("%s was interrupted; marked Error, reading its state from Docker", what)
    sync.refresh(deps, row.uuid)
    return "failed_tasks"


def _resume(deps: AgentDeps, ctx: RequestContext, row: Container) -> str:
    """[compute]resume_container_state: a row recorded Running whose Docker container is
    stopped is started again. A container that is gone is left to the state sync."""
    if not row.container_id:
        return "untouched"
    try:
        seen = deps.runtime.inspect(row.container_id)
    except rt.RuntimeNotFound:
        LOG.info("recorded Running but Docker has no container %s; the state sync will "
                 "mark it", row.container_id)
        return "untouched"
    if seen.state is not None and (seen.state.running or seen.state.paused
                                   or seen.state.restarting):
        return "untouched"
    LOG.info("recorded Running but stopped in Docker; starting it again "
             "([compute]resume_container_state)")
    lifecycle.start_container(deps, ctx, row.uuid)
    return "resumed"


# --- Docker containers no row can reach ---

def remove_unreachable(deps: AgentDeps, engine: Iterable[rt.RuntimeContainer]) -> int:
    """Remove this host's Docker containers that no row can ever reach: the row is gone
    (a delete removed the row but not the container), or the row is a failed create
    (Error, no ``container_id``) placed here or nowhere: a create that was undone, or
    one whose Docker container the API had to forget (``api/operations/stale_tasks``),
    or the row was evacuated to another node while this one was down
    (``evacuated_copy``: a stale copy, never started again). Other containers whose
    row is placed on another host are the state sync's business. A container Zun made
    (adopted by its name, ``rt.is_adopted``) is removed only as an evacuated copy."""
    removed = 0
    for seen in engine:
        if not seen.uuid:
            continue
        with container_context(seen.uuid):
            try:
                row = containers.find_by_uuid(deps.db, seen.uuid)
                if row is not None and evacuated_copy(row, seen.id, deps.host):
                    why = (f"it is a stale copy: the container was moved to host {row.host} "
                           f"while this node was down (evacuation)")
                elif row is not None and not create_undone(row, deps.host):
                    continue
                elif rt.is_adopted(seen.labels, seen.name):
                    # Zun made it (named zun-<uuid>, no berth label): a row the takeover
                    # left behind, or another Zun's on this engine; never berth's to remove
                    LOG.info("leaving Docker container %s (%s) alone: Zun made it and berth "
                             "has no usable row for it", seen.id[:12], seen.name)
                    continue
                else:
                    why = ("its row is gone" if row is None
                           else "its row is a failed create that does not refer to it")
                LOG.warning("removing Docker container %s (%s): %s", seen.id[:12], seen.name,
                            why)
                deps.runtime.delete(seen.id, force=True)
                removed += 1
            except Exception:  # a loop boundary: log this one, go on with the next
                LOG.exception("could not check or remove Docker container %s", seen.id[:12])
    return removed


def release_failed_allocations(deps: AgentDeps) -> int:
    """Release the Placement allocation of every failed create on this host (Error and
    no Docker container): one the agent died before releasing, or one whose create the
    API failed while the agent was down. Idempotent; returns how many were held."""
    if deps.placement is None:
        return 0
    released = 0
    for row in containers.list_by_host(deps.db, deps.host):
        if row.status != Status.ERROR or row.container_id:
            continue
        with container_context(row.uuid):
            try:
                if deps.placement.remove_allocation(row.uuid):
                    LOG.info("released the Placement allocation of this failed create")
                    released += 1
            except PlacementError as err:
                LOG.error("could not release the Placement allocation of this failed "
                          "create (%s); the next start-up tries again", err.msg)
    return released


def evacuated_copy(row: Container, container_id: str, host: str) -> bool:
    """Docker container ``container_id``, labelled for ``host``, is a stale copy of
    ``row``: the row names another node and does not refer to it (the API's evacuation
    moved it while ``host`` was down; berth.api.evacuation, rule 3)."""
    return row.host is not None and row.host != host and row.container_id != container_id


def create_undone(row: Container, host: str) -> bool:
    """A create of ``host`` that failed and was undone: Error, no Docker container,
    placed here or given its host back. Such a row holds nothing."""
    return row.host in (None, host) and row.status == Status.ERROR and not row.container_id
