"""What a change seen in the engine means for one row: re-inspect, write, or handle a
vanished container. Used by the agent's per-container sync workers (for the events
the PLEG reports), by the periodic ``sync_container_state`` and by container_show
(``refresh``).

Rules shared by both paths:

- only rows whose ``host`` is this agent's host are written;
- rows with a task_state are left alone (the task's flow owns the status until it
  ends), and so are rows in Creating, Deleting or Deleted, rows the API made
  Restarting or Rebuilding and cast a request for (a deadline and no task), and rows
  that never got a Docker container. The agent holds back an event that arrives while a flow of the
  container runs and syncs it when the flow ends (``ContainerWorkers.
  defer_while_owned``), unless the flow's own inspect already saw it
  (``berth.compute.last_inspected``);
- every write is a compare-and-swap on the task_state and status read, so a task
  that began meanwhile wins (TaskInProgress: skipped, the task writes the outcome);
- a container the engine is removing ("removing": ``docker rm -f`` kills it first,
  so a "die" comes before the "destroy") is left for its destroy event: writing
  Stopped there would make a healed container come back stopped;
- every write is also conditional on the Docker container the judgement was made
  of: a status can come back to what it was read as (Created, then Rebuilding, then
  Created again), but a rebuild always gives the row another Docker container;
- a "die" the event stream reported (:class:`Death`) writes Stopped before the inspect
  (Docker answers an inspect only once its post-exit clean-up is done, 50-90 ms after
  the event), for a Running row whose Docker container it names, unless Docker may
  start it again (a restart policy), a heal must see it Running (``auto_heal``: a
  ``docker rm -f`` kills first) or a capsule derives it, and not after an "oom" (the
  PLEG's watcher gives that die no exit code: Stopped then comes with its OOMKilled
  reason); the inspect follows as always and writes what only it knows (OOMKilled,
  an error text);
- a vanished container (:func:`handle_vanished`): ``auto_remove`` → Deleted;
  ``auto_heal`` and a rebuildable status → rebuilt (and started again when it was
  Running) by ``flows.rebuild``, under a ``rebuild`` action, queued on the
  container's own worker like any action; otherwise Error "No such container: <id>
  in docker ...".
"""

from __future__ import annotations

import datetime as dt
import enum
import logging
from dataclasses import dataclass

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.compute import networking, status_writes
from berth.compute.capsules import status as capsule_status
from berth.compute.deps import AgentDeps
from berth.compute.flows import common, rebuild
from berth.compute.flows.network_step import process_alive
from berth.compute.last_inspected import Mark
from berth.compute.states import VALID_STATES, Status
from berth.compute.status_mapping import map_death
from berth.db import actions, containers
from berth.db.capsules import CAPSULE
from berth.db.containers import Expect
from berth.db.models import Container
from berth.runtime import base as rt

LOG = logging.getLogger(__name__)

#: Statuses whose rows no sync touches: a flow is creating or deleting them.
SKIPPED_STATUSES = frozenset({Status.CREATING, Status.DELETING, Status.DELETED})
#: Statuses the API writes, with a deadline, before it casts (``api/operations/
#: cast_deadlines.py``): the flow the cast starts owns the status, as a task's does.
AWAITED_STATUSES = frozenset({Status.RESTARTING, Status.REBUILDING, Status.DELETING})

NO_SUCH_CONTAINER = "No such container"


class Outcome(enum.StrEnum):
    SKIPPED = "skipped"        # not ours, busy, or nothing to look at
    UNCHANGED = "unchanged"
    UPDATED = "updated"
    REMOVING = "removing"      # the engine is removing it; its destroy event follows
    DELETED = "deleted"        # vanished, auto_remove
    HEALED = "healed"          # vanished, auto_heal: rebuilt
    ERROR = "error"            # vanished: marked Error


@dataclass(frozen=True, slots=True)
class Death:
    """A "die" of Docker container ``container_id`` from the engine's event stream:
    its exit code and the engine's time for it (ns since the epoch)."""

    container_id: str
    exit_code: int
    at_ns: int

    @property
    def at(self) -> dt.datetime:
        return dt.datetime.fromtimestamp(self.at_ns / 1e9, dt.UTC)


def death_applies(row: Container, death: Death) -> bool:
    """Whether ``death`` may set ``row`` Stopped before the inspect (pure): see the
    module docstring."""
    policy = row.restart_policy
    restart = policy.get("Name") if isinstance(policy, dict) else policy
    return (row.status == Status.RUNNING and row.container_id == death.container_id
            and not row.auto_heal and row.capsule_id is None
            and row.container_type != CAPSULE and restart in (None, "", "no"))


def skip_reason(row: Container, host: str, capsule_engine_runs_it: bool = False
                ) -> str | None:
    """Why a sync must not touch ``row``; None when it may. ``capsule_engine_runs_it``:
    ``row`` is a member the capsule engine runs outside Docker, which syncs it
    (``CapsuleEngine.runs_member``; the cri driver's ``capsules.cri.status``)."""
    if row.host != host:
        return f"it belongs to host {row.host}"
    if capsule_engine_runs_it:
        return "it is a member of a capsule on the CRI runtime"
    if row.task_state:
        return f"task {row.task_state} is in progress"
    if row.task_deadline is not None and row.status in AWAITED_STATUSES:
        return f"the request it is {row.status} for is on its way to this agent"
    if row.status in SKIPPED_STATUSES:
        return f"it is {row.status}"
    if not row.container_id:
        return "it has no Docker container"
    return None


def sync_container(deps: AgentDeps, uuid: str, death: Death | None = None) -> Outcome:
    """Bring the row of ``uuid`` in line with the engine (one inspect, at most one
    write; with ``death``, the "die" the event stream reported, a write of Stopped
    before it). Engine and database errors other than "not found" propagate: the caller
    retries later (the relist re-emits the container). A capsule's status is derived
    from its sandbox and members (``capsules.status``), again after each change of a
    member."""
    row = containers.find_by_uuid(deps.db, uuid)
    if row is None:
        return Outcome.SKIPPED          # another berth's container, or already deleted
    if row.container_type == CAPSULE:
        return Outcome.UPDATED if capsule_status.refresh(deps, row) else Outcome.UNCHANGED
    outcome = _sync_row(deps, row, death)
    if row.capsule_id is not None and outcome not in (Outcome.SKIPPED, Outcome.UNCHANGED):
        capsule_status.refresh_of_member(deps, row)
    return outcome


def _sync_row(deps: AgentDeps, row: Container, death: Death | None = None) -> Outcome:
    why = skip_reason(row, deps.host, deps.capsules.runs_member(row))
    if why is not None:
        LOG.debug("not syncing: %s", why)
        return Outcome.SKIPPED
    cid = row.container_id
    assert cid is not None
    stopped = _stopped_by(deps, row, death) if death and death_applies(row, death) else None
    row = stopped or row     # the same Docker container: the write expected it
    inspect_began = deps.last_inspected.now()
    try:
        seen = deps.runtime.inspect(cid)
    except rt.RuntimeNotFound:
        return handle_vanished(deps, row)
    outcome = apply_seen(deps, row, seen, inspected=inspect_began)
    return Outcome.UPDATED if stopped and outcome is Outcome.UNCHANGED else outcome


def _stopped_by(deps: AgentDeps, row: Container, death: Death) -> Container | None:
    """``row`` written Stopped from ``death`` (compare-and-swap on what was read);
    None when it was not (unchanged, or the row moved on meanwhile)."""
    mapped = map_death(death.exit_code, death.at, common.now_utc())
    changed = {k: v for k, v in mapped.changes().items() if getattr(row, k) != v}
    if not changed:
        return None
    status_writes.engine_state(row, changed)
    try:
        new = containers.update_(deps.db, row.uuid, changed, expect=Expect.as_read(row))
    except (exc.TaskInProgress, exc.ContainerNotFound) as err:
        LOG.debug("not writing the die: the row changed meanwhile (%s)", err.msg)
        return None
    LOG.info("Docker says its process died (exit %d); status %s -> %s before the inspect",
             death.exit_code, row.status, new.status)
    return new


def apply_seen(deps: AgentDeps, row: Container, seen: rt.RuntimeContainer, *,
               inspected: Mark | None = None) -> Outcome:
    """Write what inspect said (begun at ``inspected``), unless the row moved on
    since it was read."""
    if seen.state is not None and seen.state.status == rt.RunState.REMOVING:
        LOG.debug("Docker is removing it; waiting for its destroy event")
        return Outcome.REMOVING
    try:
        # A start Docker made (a restart policy) has a new process, so a new network
        # namespace: plug it; a process that ended frees its addresses. A failed plug
        # is tried again at the next sync (the pid still differs from the plugged one).
        plugged = networking.follow(deps.networks, row, seen)
    except networking.NetworkPlugFailed as err:
        pid = seen.state.pid if seen.state is not None else 0
        if pid and not process_alive(pid):
            # Docker restarted it and the new process has already ended (a command
            # that exits at once): not a network failure; its "die" event follows.
            LOG.info("its process %d ended before its network was plugged (%s)", pid,
                     err.msg)
        else:
            LOG.error("%s; trying again at the next sync", err.msg)
        plugged = {}
    try:
        new = common.apply_runtime_state(deps, row, seen, extra=plugged,
                                         expect=Expect.as_read(row), inspected=inspected)
    except (exc.TaskInProgress, exc.ContainerNotFound) as err:
        LOG.debug("not syncing: the row changed meanwhile (%s)", err.msg)
        return Outcome.SKIPPED
    if new is row:
        return Outcome.UNCHANGED
    if new.status != row.status:
        LOG.info("Docker says %s; status %s -> %s", describe(seen.state), row.status,
                 new.status)
    return Outcome.UPDATED


def describe(state: rt.ContainerState | None) -> str:
    """The engine's state in a few words, for logs: "exited (exit 137, OOMKilled)"."""
    if state is None:
        return "no state"
    notes = [f"exit {state.exit_code}"] if state.status == rt.RunState.EXITED else []
    if state.oom_killed:
        notes.append("OOMKilled")
    if state.error:
        notes.append(state.error)
    return f"{state.status.value} ({', '.join(notes)})" if notes else state.status.value


def handle_vanished(deps: AgentDeps, row: Container) -> Outcome:
    """The engine has no container ``row.container_id``: see the module docstring.
    Every write is conditional on the Docker container judged, as well as on the task
    and status read: a rebuild that ran since ``row`` was read gave the row another
    Docker container (its status may well be back to what it was), and then the row
    is not touched."""
    cid = row.container_id or ""
    judged = Expect.as_read(row)
    try:
        if row.auto_remove:
            LOG.info("Docker container %s is gone and auto_remove is set; marking Deleted",
                     cid[:12])
            status_writes.mark_deleted(deps.db, row.uuid, was=row.status, expect=judged)
            return Outcome.DELETED
        if row.auto_heal and row.status in VALID_STATES["rebuild"]:
            return queue_heal(deps, row)
        if row.status == Status.ERROR and (row.status_reason or "").startswith(
                NO_SUCH_CONTAINER):
            return Outcome.UNCHANGED
        reason = (f"{NO_SUCH_CONTAINER}: {cid} in docker. It was removed outside berth; "
                  f"rebuild the container or delete it.")
        status_writes.mark_error(deps.db, row.uuid, reason, was=row.status,
                                 columns={"status_detail": None}, expect=judged)
        LOG.warning("Docker container %s vanished; marked Error", cid[:12])
        return Outcome.ERROR
    except (exc.TaskInProgress, exc.ContainerNotFound) as err:
        LOG.debug("vanished container left alone: the row changed meanwhile (%s)", err.msg)
        return Outcome.SKIPPED


def queue_heal(deps: AgentDeps, row: Container) -> Outcome:
    """Queue the heal of ``row`` on the container's own worker, behind any action
    already queued for it (a delete among them), like any action; without workers (a
    unit test's deps), heal at once."""
    vanished_id = row.container_id or ""
    if deps.workers is None:
        return heal(deps, row.uuid, vanished_id)
    deps.workers.submit_flow(row.uuid, heal, deps, row.uuid, vanished_id)
    return Outcome.HEALED


def heal(deps: AgentDeps, uuid: str, vanished_id: str) -> Outcome:
    """Rebuild a vanished ``auto_heal`` container under a ``rebuild`` action (admin
    context in the container's project), started again when it was Running. Runs in
    the container's turn, so it judges the row again first: nothing is done when the
    row moved on (deleted, Deleting, another task, another Docker container: a heal
    or a rebuild ran already) or when the engine has the container after all. The
    rebuild takes its task only from a status a rebuild may start from, and only
    while the row still names ``vanished_id``."""
    row = containers.find_by_uuid(deps.db, uuid)
    why = _heal_refused(row, vanished_id)
    if why is None:
        try:
            deps.runtime.inspect(vanished_id)
            why = "Docker has the container after all"
        except rt.RuntimeNotFound:
            pass
    if why is not None or row is None:
        LOG.info("not healing Docker container %s: %s", vanished_id[:12], why)
        return Outcome.SKIPPED
    run = row.status == Status.RUNNING
    LOG.warning("Docker container %s vanished and auto_heal is set; rebuilding it "
                "(run=%s)", vanished_id[:12], run)
    ctx = RequestContext.admin()
    ctx.project_id = row.project_id
    ctx.user_id = row.user_id
    actions.action_start(deps.db, ctx, row.uuid, "rebuild")
    done = rebuild.rebuild_container(deps, ctx, row.uuid, run, judged=Expect(
        status=row.status, container_id=vanished_id))
    return Outcome.HEALED if done else Outcome.SKIPPED


def _heal_refused(row: Container | None, vanished_id: str) -> str | None:
    """Why a heal judged on an earlier read must not go on now (pure)."""
    if row is None:
        return "the container was deleted"
    if row.container_id != vanished_id:
        return "the container was rebuilt meanwhile"
    if row.task_state:
        return f"task {row.task_state} is in progress"
    if not row.auto_heal or row.status not in VALID_STATES["rebuild"]:
        return f"it is {row.status} (auto_heal {bool(row.auto_heal)})"
    return None


def refresh(deps: AgentDeps, uuid: str) -> Container:
    """container_show: re-read the engine and save what changed (not while a task
    runs). A vanished container is handled as the state sync does (Deleted, healed
    when auto_heal, else Error) instead of raising."""
    row = containers.get_by_uuid(deps.db, uuid)
    if not row.container_id:
        return row
    try:
        seen = deps.runtime.inspect(row.container_id)
    except rt.RuntimeNotFound:
        if row.task_state is None and row.status not in (Status.DELETED, Status.ERROR):
            handle_vanished(deps, row)
        return containers.get_by_uuid(deps.db, uuid)
    try:
        # Conditional on the row as read before the inspect: a flow that began
        # meanwhile (or a rebuild that replaced the Docker container) writes its own.
        return common.apply_runtime_state(deps, row, seen, expect=Expect(
            task_state=row.task_state, status=row.status, container_id=row.container_id))
    except exc.TaskInProgress:
        LOG.debug("not refreshing: the row changed during the inspect")
        return containers.get_by_uuid(deps.db, uuid)
