"""What a change seen in the engine means for one row: re-inspect, write, or handle a
vanished container. Used by the agent's per-container sync workers (for PLEG events)
and by the periodic ``sync_container_state``.

Rules shared by both paths:

- only rows whose ``host`` is this agent's host are written;
- rows with a task_state are left alone (the task's flow owns the status until it
  ends), and so are rows in Creating, Deleting or Deleted, and rows that never got a
  Docker container. The agent holds back an event that arrives while a flow of the
  container runs and syncs it when the flow ends (``ContainerWorkers.
  defer_while_owned``), unless the flow's own inspect already saw it
  (``berth.compute.last_inspected``);
- every write is a compare-and-swap on the task_state and status read, so a task
  that began meanwhile wins (TaskInProgress: skipped, the task writes the outcome);
- a container the engine is removing ("removing": ``docker rm -f`` kills it first,
  so a "die" comes before the "destroy") is left for its destroy event: writing
  Stopped there would make a healed container come back stopped;
- a vanished container (:func:`handle_vanished`): ``auto_remove`` → Deleted;
  ``auto_heal`` and a rebuildable status → rebuilt (and started again when it was
  Running) by ``flows.rebuild``, under a ``rebuild`` action; otherwise Error
  "No such container: <id> in docker ...".
"""

from __future__ import annotations

import enum
import logging
import threading

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.compute.deps import AgentDeps
from berth.compute.flows import common, rebuild
from berth.compute.last_inspected import Mark
from berth.compute.states import VALID_STATES, Status
from berth.db import actions, containers
from berth.db.models import Container
from berth.runtime import base as rt

LOG = logging.getLogger(__name__)

#: Statuses whose rows no sync touches: a flow is creating or deleting them.
SKIPPED_STATUSES = frozenset({Status.CREATING, Status.DELETING, Status.DELETED})

NO_SUCH_CONTAINER = "No such container"


class Outcome(enum.StrEnum):
    SKIPPED = "skipped"        # not ours, busy, or nothing to look at
    UNCHANGED = "unchanged"
    UPDATED = "updated"
    REMOVING = "removing"      # the engine is removing it; its destroy event follows
    DELETED = "deleted"        # vanished, auto_remove
    HEALED = "healed"          # vanished, auto_heal: rebuilt
    ERROR = "error"            # vanished: marked Error


def skip_reason(row: Container, host: str) -> str | None:
    """Why a sync must not touch ``row``; None when it may."""
    if row.host != host:
        return f"it belongs to host {row.host}"
    if row.task_state:
        return f"task {row.task_state} is in progress"
    if row.status in SKIPPED_STATUSES:
        return f"it is {row.status}"
    if not row.container_id:
        return "it has no Docker container"
    return None


def sync_container(deps: AgentDeps, uuid: str) -> Outcome:
    """Bring the row of ``uuid`` in line with the engine (one inspect, at most one
    write). Engine and database errors other than "not found" propagate: the caller
    retries later (the relist re-emits the container)."""
    row = containers.find_by_uuid(deps.db, uuid)
    if row is None:
        return Outcome.SKIPPED          # another berth's container, or already deleted
    why = skip_reason(row, deps.host)
    if why is not None:
        LOG.debug("not syncing: %s", why)
        return Outcome.SKIPPED
    assert row.container_id is not None
    inspect_began = deps.last_inspected.now()
    try:
        seen = deps.runtime.inspect(row.container_id)
    except rt.RuntimeNotFound:
        return handle_vanished(deps, row)
    return apply_seen(deps, row, seen, inspected=inspect_began)


def apply_seen(deps: AgentDeps, row: Container, seen: rt.RuntimeContainer, *,
               inspected: Mark | None = None) -> Outcome:
    """Write what inspect said (begun at ``inspected``), unless the row moved on
    since it was read."""
    if seen.state is not None and seen.state.status == rt.RunState.REMOVING:
        LOG.debug("Docker is removing it; waiting for its destroy event")
        return Outcome.REMOVING
    try:
        new = common.apply_runtime_state(deps, row, seen, expected_task_state=None,
                                         expected_status=row.status, inspected=inspected)
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


_healing: set[str] = set()
_healing_lock = threading.Lock()


def handle_vanished(deps: AgentDeps, row: Container) -> Outcome:
    """The engine has no container ``row.container_id``: see the module docstring."""
    cid = row.container_id or ""
    try:
        if row.auto_remove:
            LOG.info("Docker container %s is gone and auto_remove is set; marking Deleted",
                     cid[:12])
            containers.update_(deps.db, row.uuid, {"status": Status.DELETED.value,
                                                   "status_detail": None},
                               expected_task_state=None, expected_status=row.status)
            return Outcome.DELETED
        if row.auto_heal and row.status in VALID_STATES["rebuild"]:
            return heal(deps, row)
        if row.status == Status.ERROR and (row.status_reason or "").startswith(
                NO_SUCH_CONTAINER):
            return Outcome.UNCHANGED
        reason = (f"{NO_SUCH_CONTAINER}: {cid} in docker. It was removed outside berth; "
                  f"rebuild the container or delete it.")
        LOG.warning("Docker container %s vanished; marking Error", cid[:12])
        containers.update_(deps.db, row.uuid, {"status": Status.ERROR.value,
                                               "status_reason": reason,
                                               "status_detail": None},
                           expected_task_state=None, expected_status=row.status)
        return Outcome.ERROR
    except (exc.TaskInProgress, exc.ContainerNotFound) as err:
        LOG.debug("vanished container left alone: the row changed meanwhile (%s)", err.msg)
        return Outcome.SKIPPED


def heal(deps: AgentDeps, row: Container) -> Outcome:
    """Rebuild a vanished ``auto_heal`` container under a ``rebuild`` action (admin
    context in the container's project), started again when it was Running. At most
    one heal per container at a time in this process (the event path and the
    periodic sync may both find it)."""
    with _healing_lock:
        if row.uuid in _healing:
            return Outcome.SKIPPED
        _healing.add(row.uuid)
    try:
        run = row.status == Status.RUNNING
        LOG.warning("Docker container %s vanished and auto_heal is set; rebuilding it "
                    "(run=%s)", (row.container_id or "")[:12], run)
        ctx = RequestContext.admin()
        ctx.project_id = row.project_id
        ctx.user_id = row.user_id
        actions.action_start(deps.db, ctx, row.uuid, "rebuild")
        rebuild.rebuild_container(deps, ctx, row.uuid, run)
    finally:
        with _healing_lock:
            _healing.discard(row.uuid)
    return Outcome.HEALED
