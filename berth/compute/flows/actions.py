"""reboot, pause, unpause, kill, resource update and security groups on the agent.

The engine actions share one shape (:func:`_engine_action`)::

    event compute__do_container_<x> ──► task container_<x>ing ──► docker <x>
        ──► inspect ──► row := what Docker says ──► task cleared, action finished

and one set of outcomes:

* Docker has no such container: the row becomes Deleted (auto_remove) or Error
  (``lifecycle.vanished``); the action finishes with Error.
* Docker refuses (``is not running``, ``is already paused``, ...): logged, the action
  finishes with Error, the status stays as it was (reboot, whose status the API set to
  Restarting, is re-read from Docker instead so that it does not stay Restarting).
* Success: the row says what Docker says after the action. For kill this is the fix
  of Zun's defect: Zun marked every killed container Stopped, even one that ignored
  or handled the signal; berth waits a moment for the process to react and maps the
  real state.

These run on the container's worker (one action at a time per container); they log
and swallow berth errors because the HTTP caller already has its 202.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from sqlalchemy import Connection

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.common.units import memory_mib
from berth.compute import networking
from berth.compute.deps import AgentDeps
from berth.compute.flows import common, outage
from berth.compute.flows.lifecycle import vanished
from berth.compute.flows.network_step import follow_network
from berth.compute.spec import cpu_shares_of
from berth.compute.states import Status, TaskState
from berth.compute.steps.allocation import allocate
from berth.db import containers, nodes
from berth.db.models import Container
from berth.metrics.catalog import timed_action
from berth.placement.base import AllocationFailed, PlacementError
from berth.placement.requests import container_resources
from berth.runtime import base as rt

LOG = logging.getLogger(__name__)

#: How long kill waits for the process to react before it reads the state: a fatal
#: signal ends the container within milliseconds; one that is ignored or handled
#: leaves it running, which is then what the row says.
KILL_SETTLE_SECONDS = 2.0
_SETTLE_POLL = 0.05


def _container_id(row: Container) -> str:
    if not row.container_id:
        raise exc.UncreatedContainer(uuid=row.uuid)
    return row.container_id


def _engine_action(deps: AgentDeps, ctx: RequestContext, uuid: str, verb: str,
                   event: str, task_state: TaskState, act: Callable[[str], None],
                   extra: dict[str, Any] | None = None, resync_on_failure: bool = False
                   ) -> None:
    """Run ``act(container_id)`` as the action ``verb`` (see the module docstring),
    again once the database answers when an outage cuts it short
    (``outage.ride_out``); the action then may find Docker already done with it
    (``is already paused``), and the row says what Docker says."""
    outage.ride_out(deps, uuid, verb, lambda retry: _engine_attempt(
        deps, ctx, uuid, verb, event, task_state, act, extra, resync_on_failure, retry),
        ctx=ctx)


def _engine_attempt(deps: AgentDeps, ctx: RequestContext, uuid: str, verb: str,
                    event: str, task_state: TaskState, act: Callable[[str], None],
                    extra: dict[str, Any] | None, resync_on_failure: bool, retry: bool
                    ) -> None:
    row = containers.find_by_uuid(deps.db, uuid)
    if row is None:
        LOG.info("not %s: the container was deleted", verb)
        return
    try:
        with common.recorded(deps, ctx, uuid, event):
            container_id = _container_id(row)
            with common.task(deps, uuid, task_state, retaking=retry) as row:
                try:
                    act(container_id)
                except rt.RuntimeNotFound as err:
                    vanished(deps, row)
                    raise exc.Conflict(f"Cannot {verb} container {uuid}: {err.msg}") from err
                except rt.RuntimeDriverError as err:
                    LOG.warning("Docker refused to %s the container: %s; status stays %s",
                                verb, err.msg, row.status)
                    if resync_on_failure or retry:
                        _resync(deps, row, container_id)
                    raise
                inspect_began = deps.last_inspected.now()
                try:
                    seen = deps.runtime.inspect(container_id)
                except rt.RuntimeNotFound as err:
                    # The action worked and ended the container, which Docker then
                    # removed itself (auto_remove): Deleted, and the action succeeded.
                    vanished(deps, row)
                    if not row.auto_remove:
                        raise exc.Conflict(f"Container {uuid} vanished from Docker after "
                                           f"{verb}: {err.msg}") from err
                    return
                step = follow_network(deps, row, seen)
                common.apply_runtime_state(deps, row, step.seen, force=True,
                                           extra={**(extra or {}), **step.values},
                                           inspected=inspect_began)
                if step.failed is not None:
                    raise step.failed
        LOG.info("%s done", verb)
    except exc.BerthError as err:
        LOG.warning("%s failed: %s", verb, err.msg)


def _resync(deps: AgentDeps, row: Container, container_id: str) -> None:
    """After a failed action whose status the API had set in advance: the row says
    what Docker says (Error with the reason when Docker cannot tell)."""
    try:
        seen = deps.runtime.inspect(container_id)
    except rt.RuntimeDriverError as err:
        common.fail(deps, row.uuid, f"Docker could not say how the container is after a "
                                    f"failed action: {err.msg}")
        return
    common.apply_runtime_state(deps, row, seen, force=True)


def reboot_container(deps: AgentDeps, ctx: RequestContext, uuid: str,
                     timeout: int | None) -> None:
    """docker restart; Running (started_at now, reason cleared)."""
    started = common.now_utc().replace(tzinfo=None)
    _engine_action(deps, ctx, uuid, "reboot", "compute__do_container_reboot",
                   TaskState.CONTAINER_REBOOTING,
                   lambda cid: deps.runtime.restart(cid, timeout),
                   extra={"started_at": started, "status_reason": None},
                   resync_on_failure=True)


def pause_container(deps: AgentDeps, ctx: RequestContext, uuid: str) -> None:
    _engine_action(deps, ctx, uuid, "pause", "compute__do_container_pause",
                   TaskState.CONTAINER_PAUSING, deps.runtime.pause)


def unpause_container(deps: AgentDeps, ctx: RequestContext, uuid: str) -> None:
    _engine_action(deps, ctx, uuid, "unpause", "compute__do_container_unpause",
                   TaskState.CONTAINER_UNPAUSING, deps.runtime.unpause)


def kill_container(deps: AgentDeps, ctx: RequestContext, uuid: str,
                   signal: str | None) -> None:
    """docker kill with ``signal`` (None or "None": Docker's SIGKILL), then the state
    Docker reports once the process had a moment to react."""
    sig = None if signal in (None, "None", "") else str(signal)

    def act(container_id: str) -> None:
        deps.runtime.kill(container_id, sig)
        LOG.info("sent %s to the container", sig or "Docker's default signal (SIGKILL)")
        _wait_not_running(deps, container_id, KILL_SETTLE_SECONDS)

    _engine_action(deps, ctx, uuid, "kill", "compute__do_container_kill",
                   TaskState.CONTAINER_KILLING, act)


def _wait_not_running(deps: AgentDeps, container_id: str, seconds: float) -> None:
    """Return as soon as Docker says the container no longer runs, or after
    ``seconds`` (a signal the process survives)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            state = deps.runtime.inspect(container_id).state
        except rt.RuntimeNotFound:
            return          # ended and removed by Docker (auto_remove)
        if state is None or not state.running:
            return
        time.sleep(_SETTLE_POLL)


# -- resources ----------------------------------------------------------------------

UPDATABLE = ("cpu", "memory", "name", "auto_heal")


def update_container(deps: AgentDeps, uuid: str, patch: dict[str, Any]) -> Container:
    """container_update: apply ``patch`` (cpu, memory, name, auto_heal; only the
    fields that differ). New cpu/memory are claimed on the node first (the row is the
    claim), then recorded in Placement, then given to Docker (memory with the
    configured swap limit, cpu as shares); when a later step fails, the earlier ones
    are given back. Returns the saved row. Raises ResourcesUnavailable when the node
    has no room (the claim or Placement), ServiceUnavailable when Placement cannot
    be reached, Conflict when Docker no longer has the container, RuntimeDriverError
    when Docker refuses.

    A database outage in the middle is ridden out (``outage.patiently``): the update
    runs again once the database answers, first finishing what the cut-short attempt
    left (``finish_interrupted_resize``: Placement and Docker given what the row holds),
    then applying what still differs. Past the patience what it left is settled the
    same way, the row's status_reason says the update was abandoned (its status stays
    what Docker shows: the container runs on, with the limits the row holds), and
    ServiceUnavailable tells the caller."""
    with timed_action("update"):
        patience = deps.settings.database_patience
        try:
            return outage.patiently(lambda retry: _update(deps, uuid, patch, retry),
                                    what="update", patience=patience)
        except outage.DATABASE_ERRORS as err:
            reason = outage.give_up(deps, uuid, "update", err, patience=patience,
                                    undo=lambda: _settle_resize(deps, uuid),
                                    keep_status=True)
            raise exc.ServiceUnavailable(reason=reason) from err


def _settle_resize(deps: AgentDeps, uuid: str) -> None:
    """Placement and Docker agree with the row again (or the row with Docker)."""
    row = containers.find_by_uuid(deps.db, uuid)
    if row is not None:
        finish_interrupted_resize(deps, row)
        deps.tracker.publish_usage()


def _update(deps: AgentDeps, uuid: str, patch: dict[str, Any], retry: bool) -> Container:
    if retry:
        _settle_resize(deps, uuid)
    row = containers.get_by_uuid(deps.db, uuid)
    changes = _changes(row, patch)
    if "cpu" in changes or "memory" in changes:
        _resize(deps, row, changes.get("cpu"), changes.get("memory"))
    others = {k: v for k, v in changes.items() if k not in ("cpu", "memory")}
    if others:
        row = containers.update_(deps.db, uuid, others)
    if changes:
        LOG.info("updated %s", ", ".join(f"{k}={v}" for k, v in sorted(changes.items())))
    return containers.get_by_uuid(deps.db, uuid)


def _changes(row: Container, patch: dict[str, Any]) -> dict[str, Any]:
    normalised: dict[str, Any] = {}
    for key, value in patch.items():
        if key not in UPDATABLE or value is None:
            continue
        if key == "cpu":
            value = float(value)
        elif key == "memory":
            value = str(value)
        elif key == "auto_heal":
            value = bool(value)
        if getattr(row, key) != value:
            normalised[key] = value
    return normalised


def _resize(deps: AgentDeps, row: Container, cpu: float | None, memory: str | None) -> None:
    """The claim, then Placement, then Docker; each step undone when a later one fails,
    so that the row, the allocation and Docker's limits keep agreeing."""
    container_id = _container_id(row)
    new_cpu = row.cpu if cpu is None else cpu
    new_memory = row.memory if memory is None else memory
    deps.tracker.claim_update(row.uuid, new_cpu, new_memory,
                              guard=_quota_guard(deps, row, new_cpu, new_memory))
    try:
        undo_allocation = _reallocate(deps, row, new_cpu, new_memory)
    except exc.BerthError:
        _restore_claim(deps, row)
        raise
    try:
        deps.runtime.update(
            container_id,
            memory_mib=int(memory) if memory is not None else None,
            memory_swap_mib=deps.settings.default_memory_swap if memory is not None else None,
            cpu_shares=cpu_shares_of(cpu) if cpu is not None else None)
    except rt.RuntimeDriverError as err:
        _restore_claim(deps, row)
        undo_allocation()
        if isinstance(err, rt.RuntimeNotFound):
            vanished(deps, row)
            raise exc.Conflict(f"Cannot update container {row.uuid}: {err.msg}") from err
        LOG.warning("Docker refused the new limits (cpu %s, memory %s): %s", cpu, memory,
                    err.msg)
        raise
    LOG.info("limits now cpu %s, memory %s MiB", new_cpu, new_memory)


def _quota_guard(deps: AgentDeps, row: Container, cpu: float | None, memory: str | None
                 ) -> Callable[[Connection], object] | None:
    """The project's quota check for growing ``row`` to ``cpu`` / ``memory``, to run
    in the claim's write (the API checked too, but not atomically: two resizes of
    one project's containers on two nodes could both pass it)."""
    quota = deps.quota
    if quota is None or not row.project_id:
        return None
    deltas = {"cpu": float(cpu or 0) - float(row.cpu or 0),
              "memory": memory_mib(memory) - memory_mib(row.memory)}
    project_id = row.project_id
    return lambda conn: quota.check(conn, project_id, deltas)


def finish_interrupted_resize(deps: AgentDeps, row: Container) -> bool:
    """Start-up recovery's part of a resize. A resize writes the row first (its claim),
    then Placement, then Docker, without a task state (Zun's update has none): an agent
    killed in between left Placement and Docker at the old limits while the row shows
    the new ones. The resize is finished (rolled forward): Placement and Docker get
    what the row holds. When Placement no longer has room, it is undone instead: the
    row goes back to Docker's limits. Returns whether Docker disagreed with the row."""
    if not row.container_id or row.status in (Status.ERROR, Status.DELETED):
        return False
    try:
        seen = deps.runtime.inspect(row.container_id)
    except rt.RuntimeNotFound:
        return False                    # vanished: the state sync's business
    if seen.memory_mib is None and seen.cpu_shares is None:
        return False      # the engine reports no limits (berth always sets both)
    want_memory = memory_mib(row.memory) or None
    want_shares = cpu_shares_of(row.cpu)
    if (seen.memory_mib, seen.cpu_shares) == (want_memory, want_shares):
        return False
    LOG.warning("a resize was interrupted: Docker has memory %s MiB and %s cpu shares, the "
                "row %s MiB and %s; finishing it", seen.memory_mib, seen.cpu_shares,
                want_memory, want_shares)
    if deps.placement is not None:
        try:
            allocate(deps, row)
        except (AllocationFailed, PlacementError) as err:
            cpu = row.cpu if seen.cpu_shares == want_shares else \
                round((seen.cpu_shares or 0) / 1024, 3) or row.cpu
            containers.update_(deps.db, row.uuid, {
                "memory": str(seen.memory_mib) if seen.memory_mib else row.memory,
                "cpu": cpu})
            LOG.warning("Placement cannot hold the new limits (%s); the row goes back to "
                        "what Docker has", err.msg)
            return True
    deps.runtime.update(row.container_id, memory_mib=want_memory,
                        memory_swap_mib=deps.settings.default_memory_swap
                        if want_memory else None,
                        cpu_shares=want_shares)
    return True


def _restore_claim(deps: AgentDeps, row: Container) -> None:
    containers.update_(deps.db, row.uuid, {"cpu": row.cpu, "memory": row.memory})
    deps.tracker.publish_usage()


def _reallocate(deps: AgentDeps, row: Container, cpu: float | None, memory: str | None
                ) -> Callable[[], None]:
    """Make the container's Placement allocation match its new cpu and memory (Zun
    left it at the create's values, so Placement's view of the node drifted with
    every resize). Returns the undo. ResourcesUnavailable when Placement refuses;
    ServiceUnavailable when it cannot be reached. No call when the resource classes'
    amounts do not change (cpu 0.5 -> 0.8 is still one VCPU)."""
    placement = deps.placement
    old = container_resources(row.cpu, row.memory, row.disk)
    new = container_resources(cpu, memory, row.disk)
    if placement is None or new == old:
        return lambda: None
    provider = nodes.provider_uuid_of(deps.db, deps.host)
    try:
        placement.allocate(row.uuid, provider, new, row.project_id, row.user_id)
    except AllocationFailed as err:
        asked = ", ".join(f"{amount} {rc}" for rc, amount in new.items())
        raise exc.ResourcesUnavailable(reason=f"Placement refused {asked}: {err.msg}") from err
    except PlacementError as err:      # (not an error class the RPC layer carries back)
        raise exc.ServiceUnavailable(
            reason=f"Placement could not record the new resources of container "
                   f"{row.uuid}: {err.msg}. Nothing was changed; try again when Placement "
                   f"answers.") from err

    def undo() -> None:
        try:
            placement.allocate(row.uuid, provider, old, row.project_id, row.user_id)
        except PlacementError as err:
            LOG.error("could not give back the Placement allocation %s after Docker "
                      "refused the resize (%s); it stays at %s until the container is "
                      "resized again or deleted", old, err.msg, new)
    return undo


def resize_container(deps: AgentDeps, ctx: RequestContext, uuid: str,
                     patch: dict[str, Any]) -> None:
    """The asynchronous update (resize_container cast): no action record, no task
    state (as Zun); a failure is only logged. It is done again after a database
    outage: it applies only what still differs from the row."""
    def attempt(_retry: bool) -> None:
        try:
            update_container(deps, uuid, patch)
        except exc.BerthError as err:
            LOG.warning("resize to %s failed: %s", patch, err.msg)

    outage.ride_out(deps, uuid, "resize", attempt)


# -- security groups ----------------------------------------------------------------

def add_security_group(deps: AgentDeps, ctx: RequestContext, uuid: str,
                       security_group: str) -> None:
    _security_group(deps, ctx, uuid, security_group, add=True)


def remove_security_group(deps: AgentDeps, ctx: RequestContext, uuid: str,
                          security_group: str) -> None:
    _security_group(deps, ctx, uuid, security_group, add=False)


def _security_group(deps: AgentDeps, ctx: RequestContext, uuid: str, group: str,
                    add: bool) -> None:
    """Change the container's groups: on berth's local networks the daemon's rules
    follow first (a failure leaves the row as it was, with the action's error), then
    the row records the list. With Docker's network driver nothing enforces groups:
    the list is only recorded."""
    verb = "add_security_group" if add else "remove_security_group"
    outage.ride_out(deps, uuid, verb, lambda retry: _security_group_attempt(
        deps, ctx, uuid, group, add, verb, retry), ctx=ctx)


def _security_group_attempt(deps: AgentDeps, ctx: RequestContext, uuid: str, group: str,
                            add: bool, verb: str, retry: bool) -> None:
    if containers.find_by_uuid(deps.db, uuid) is None:
        LOG.info("not running %s: the container was deleted", verb)
        return
    try:
        with common.recorded(deps, ctx, uuid, f"compute__{verb}"):
            state = TaskState.SG_ADDING if add else TaskState.SG_REMOVING
            with common.task(deps, uuid, state, retaking=retry) as row:
                groups = list(row.security_groups or [])
                if add and group not in groups:
                    groups.append(group)
                elif not add and group in groups:
                    groups.remove(group)
                else:
                    LOG.info("security group %s already %s", group,
                             "present" if add else "absent")
                    return
                row.security_groups = groups
                networking.apply_security_groups(deps.networks, row)
                containers.update_(deps.db, uuid, {"security_groups": groups})
        LOG.info("security group %s %s%s", group, "added" if add else "removed",
                 "" if deps.networks is not None else
                 " (recorded only: Docker's network driver enforces no groups)")
    except exc.BerthError as err:
        LOG.warning("%s %s failed: %s", verb, group, err.msg)
