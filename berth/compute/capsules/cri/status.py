"""What a CRI runtime says about a capsule's pod and members, for the status rules of
``capsules.status`` (one derivation for both drivers).

A member that exited and whose restart policy starts it again is restarted here
(``restarts``). No engine event stream feeds these rows (containerd 1.6 has no GetContainerEvents):
the agent relists every second (``relist``, as kubelet's generic PLEG does: one
ListPodSandbox and one ListContainers for the whole host, then ContainerStatus only for
a member whose listed state differs from its row) and each capsule's members' rows
are written from ContainerStatus with the code that writes a Docker container's
(``flows.common.apply_runtime_state``, a compare-and-swap on what was read), then the
capsule's status is derived again.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass

from berth.common import exceptions as exc
from berth.common.log import container_context
from berth.compute import status_writes
from berth.compute.capsules import status as capsule_status
from berth.compute.capsules.cri import restarts
from berth.compute.deps import AgentDeps
from berth.compute.flows import common
from berth.compute.states import Status
from berth.db import capsules, containers
from berth.db.containers import Expect
from berth.db.models import Container
from berth.runtime import base as rt
from berth.runtime.cri.base import PodRuntime

LOG = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One listing of the host's pods and members (two CRI calls for the whole host),
    which a relist reads every capsule from; a member is asked about on its own
    (ContainerStatus) only when the listing says something the row does not."""

    ready: dict[str, bool]
    states: dict[str, rt.RunState]


def snapshot(pods: PodRuntime, host: str) -> Snapshot:
    listed = {c.id: c.state.status for c in pods.host_members(host) if c.state is not None}
    return Snapshot(ready={p.id: p.ready for p in pods.pods(host)}, states=listed)


def observe(deps: AgentDeps, pods: PodRuntime, capsule: Container, members: list[Container],
            listing: Snapshot | None = None
            ) -> tuple[bool, list[Container], dict[str, int | None]]:
    """Whether the pod runs, the members' rows written from the runtime, and the exit
    codes of those that exited (from ``listing`` when given, else asked for)."""
    if listing is not None:
        running = listing.ready.get(capsule.container_id or "", False)
    else:
        try:
            running = pods.pod_ready(capsule.container_id or "")
        except rt.RuntimeNotFound:
            running = False
    fresh: list[Container] = []
    codes: dict[str, int | None] = {}
    for member in members:
        with container_context(member.uuid):
            fresh.append(_member_written(deps, pods, capsule, member, codes, listing))
    return running, fresh, codes


def _member_written(deps: AgentDeps, pods: PodRuntime, capsule: Container,
                    member: Container, codes: dict[str, int | None],
                    listing: Snapshot | None) -> Container:
    if not member.container_id or member.task_state \
            or member.status in (Status.CREATING, Status.DELETING, Status.DELETED):
        return member
    if listing is not None and member.status == Status.RUNNING \
            and listing.states.get(member.container_id) == rt.RunState.RUNNING:
        return member           # as the row says: no ContainerStatus needed
    try:
        seen = pods.member(member.container_id)
    except rt.RuntimeNotFound:
        return _vanished(deps, member)
    if seen.state is not None and seen.state.status == rt.RunState.EXITED \
            and restarts.wanted(member, seen):
        try:
            return restarts.handle(deps, pods, capsule, member, seen,
                                   restarts.Backoff(*deps.settings.cri_restart_backoff),
                                   dt.datetime.now(dt.UTC))
        except (exc.TaskInProgress, exc.ContainerNotFound):
            return member
        except (rt.RuntimeDriverError, exc.BerthError) as err:
            LOG.error("member %s: its restart failed (%s); the next relist tries again",
                      member.name, err.msg)
            return member
    if seen.state is not None and seen.state.status == rt.RunState.EXITED:
        codes[member.uuid] = seen.state.exit_code
    try:
        return common.apply_runtime_state(deps, member, seen,
                                          expect=Expect.as_read(member))
    except (exc.TaskInProgress, exc.ContainerNotFound):
        return member


def _vanished(deps: AgentDeps, member: Container) -> Container:
    reason = (f"No such container: {member.container_id} in containerd (removed behind "
              f"berth's back). Delete the capsule and create it again.")
    if member.status == Status.ERROR and member.status_reason == reason:
        return member
    LOG.warning("member %s: its CRI container %s is gone", member.name,
                (member.container_id or "")[:12])
    try:
        return status_writes.mark_error(deps.db, member.uuid, reason, was=member.status,
                                        expect=Expect.as_read(member))
    except (exc.TaskInProgress, exc.ContainerNotFound):
        return member


def relist(deps: AgentDeps, pods: PodRuntime) -> int:
    """Refresh every capsule of this host from the runtime, from one listing of it
    (``snapshot``); how many changed."""
    changed = 0
    rows = containers.list_by_host(deps.db, deps.host, capsules.CAPSULE)
    if not rows:
        return 0
    try:
        listing = snapshot(pods, deps.host)
    except rt.RuntimeUnavailable as err:
        LOG.warning("capsule relist: %s; the next one retries", err.msg)
        return 0
    for capsule in rows:
        with container_context(capsule.uuid):
            try:
                changed += capsule_status.refresh(deps, capsule, listing)
            except rt.RuntimeUnavailable as err:
                LOG.warning("capsule relist: %s; the next one retries", err.msg)
                return changed
            except Exception:  # a loop boundary: log this capsule, go on with the next
                LOG.exception("could not refresh this capsule from containerd")
    return changed
