"""A capsule's status, derived from its sandbox and its members (Zun never refreshes
a capsule after its creation).

The PLEG keeps each member's row true to Docker like any container's; whenever a
member's row or the sandbox changes, the capsule's status is derived again from what
the capsule engine sees (``CapsuleEngine.observe``; with the cri driver, which has no
PLEG, the members' rows are written from the runtime first: ``cri.status``). First
rule that matches (init containers, which ran to completion at create, do not count)::

    sandbox not running             -> Error   "the sandbox stopped: ..."
    a member Error, Dead or Unknown -> Error   "member <name> is <status>: <reason>"
    a member exited non-zero        -> Error   "member <name> exited (<code>) and its
       (Stopped, not restarting)               restart policy does not start it again"
    a member Restarting             -> Restarting
    a member Running                -> Running (members that exited 0 are done)
    every member exited 0           -> Stopped

A capsule that a flow owns (a task, Creating, Deleting) or whose create failed (Error
without a sandbox) is left alone.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from berth.common import exceptions as exc
from berth.compute import status_writes
from berth.compute.deps import AgentDeps
from berth.compute.states import Status
from berth.db import capsules
from berth.db.containers import Expect
from berth.db.models import Container

LOG = logging.getLogger(__name__)

_BROKEN = (Status.ERROR, Status.DEAD, Status.UNKNOWN)
_OWNED = (Status.CREATING, Status.DELETING, Status.DELETED)


@dataclass(frozen=True, slots=True)
class Derived:
    status: Status
    reason: str | None = None


def derive(sandbox_running: bool, members: Sequence[Container],
           exit_codes: Mapping[str, int | None]) -> Derived:
    """The capsule's status from its sandbox, its (non-init) members and the exit
    codes of those that are Stopped, by uuid (pure)."""
    if not sandbox_running:
        return Derived(Status.ERROR, "The sandbox stopped: the members lost the network "
                                     "and IPC namespaces they share. Delete the capsule "
                                     "and create it again.")
    for member in members:
        if member.status in _BROKEN:
            why = f": {member.status_reason}" if member.status_reason else ""
            return Derived(Status.ERROR, f"Member {member.name} is {member.status}{why}")
    for member in members:
        code = exit_codes.get(member.uuid)
        if member.status == Status.STOPPED and code not in (None, 0):
            return Derived(Status.ERROR, f"Member {member.name} exited ({code}) and its "
                                         f"restart policy does not start it again; its "
                                         f"logs say why.")
    statuses = {m.status for m in members}
    if Status.RESTARTING in statuses:
        return Derived(Status.RESTARTING)
    if Status.RUNNING in statuses:
        return Derived(Status.RUNNING)
    return Derived(Status.STOPPED)


def refresh(deps: AgentDeps, capsule: Container, listing: Any = None) -> bool:
    """Derive ``capsule``'s status again and write it if it changed (a compare-and-swap
    on the status and task read); whether it was written. ``listing``: the cri
    relist's one listing of the host (``cri.status.Snapshot``)."""
    if capsule.task_state or capsule.status in _OWNED or not capsule.container_id \
            or capsule.host != deps.host:
        return False
    _, members = capsules.members_of(deps.db, capsule.id)
    running, members, codes = deps.capsules.observe(deps, capsule, members, listing)
    derived = derive(running, members, codes)
    if derived.status == capsule.status and derived.reason == capsule.status_reason:
        return False
    try:
        status_writes.mark_derived(deps.db, capsule.uuid, derived.status, derived.reason,
                                   was=capsule.status, expect=Expect.as_read(capsule))
    except (exc.TaskInProgress, exc.ContainerNotFound):
        return False
    LOG.info("capsule %s: %s -> %s%s", capsule.uuid, capsule.status, derived.status.value,
             f" ({derived.reason})" if derived.reason else "")
    return True


def refresh_of_member(deps: AgentDeps, member: Container) -> None:
    """``refresh`` of the capsule ``member`` belongs to."""
    if member.capsule_id is None:
        return
    capsule = capsules.find_by_id(deps.db, member.capsule_id)
    if capsule is not None:
        refresh(deps, capsule)
