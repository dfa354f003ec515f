"""``CriCapsules``: the cri driver's ``CapsuleEngine`` (``berth.compute.deps``). A
capsule is a pod of the CRI runtime; its members are CRI containers that Docker (and
so PLEG, the container sync and the container consoles) never sees: this engine reads
them on its own timer (``status.relist``), sweeps the pods no capsule reaches, and
serves the members' logs and consoles (``members``, ``consoles``)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from typing import Any

from berth.compute.capsules.cri import consoles, members, pods, status
from berth.compute.capsules.cri import create as cri_create
from berth.compute.capsules.cri import network as cri_network
from berth.compute.deps import AgentDeps, MemberConsole, PeriodicTask
from berth.compute.flows import common
from berth.db.models import Container
from berth.runtime import base as rt
from berth.runtime.cri.base import PodRuntime

LOG = logging.getLogger(__name__)

#: Seconds between two relists of the capsules (members' states within about a
#: second, as Docker's event stream gives them).
RELIST_SPACING = 1.0


class CriCapsules:
    name = "containerd"
    units = "pods"

    def __init__(self, runtime: PodRuntime) -> None:
        self.pods = runtime
        self._console = CriMemberConsole(runtime)

    def make(self, deps: AgentDeps, row: Container, inits: list[Container],
             members: list[Container], binds: Mapping[str, tuple[str, ...]], undo: ExitStack,
             clock: Callable[[], float]) -> rt.RuntimeContainer:
        return cri_create.make_pod(deps, self.pods, row, inits, members, binds, undo, clock)

    def remove_left(self, deps: AgentDeps, row: Container, parts: list[Container]) -> int:
        """Its pods by their labels (members with them), then their interfaces, if the
        pod's CNI DEL missed them."""
        pod_ids = [p.id for p in self.pods.pods(deps.host) if p.uuid == row.uuid]
        removed = pods.remove_pods_of(self.pods, deps.host, row.uuid)
        for pod_id in pod_ids:
            cri_network.release(deps, row, pod_id)
        return removed

    def remove(self, deps: AgentDeps, row: Container, parts: list[Container],
               force: bool) -> bool:
        """The capsule's pod stopped and removed with its members (by its labels when the
        row names none: a create that died before recording it)."""
        try:
            found = [row.container_id] if row.container_id else \
                [p.id for p in self.pods.pods(deps.host) if p.uuid == row.uuid]
            for pod_id in found:
                pods.remove_pod(self.pods, pod_id, row.uuid)
                cri_network.release(deps, row, pod_id)
        except rt.RuntimeDriverError as err:
            if not force:
                common.fail(deps, row.uuid, f"containerd could not remove the capsule's pod: "
                                            f"{err.msg}. Delete it again, or with --force.")
                return False
            LOG.warning("containerd could not remove the capsule's pod (%s); forced delete "
                        "goes on", err.msg)
        return True

    def observe(self, deps: AgentDeps, capsule: Container, members: list[Container],
                listing: Any = None
                ) -> tuple[bool, list[Container], Mapping[str, int | None]]:
        return status.observe(deps, self.pods, capsule, members, listing)

    def runs_member(self, row: Container) -> bool:
        return row.capsule_id is not None

    def member_console(self, row: Container) -> MemberConsole | None:
        return self._console if self.runs_member(row) else None

    def exec_resize(self, deps: AgentDeps, exec_id: str, height: int, width: int) -> bool:
        return consoles.exec_resize(deps, exec_id, height, width)

    def sweep_orphans(self, deps: AgentDeps) -> int:
        return pods.sweep_orphans(deps, self.pods)

    def periodic_tasks(self, deps: AgentDeps, interval: float) -> list[PeriodicTask]:
        # No event stream from the CRI runtime: its capsules are relisted instead.
        return [PeriodicTask("relist_cri_capsules", lambda: status.relist(deps, self.pods),
                             RELIST_SPACING),
                PeriodicTask("sweep_cri_pods", lambda: self.sweep_orphans(deps), interval,
                             run_immediately=False)]


class CriMemberConsole:
    """A CRI member's logs (the files containerd writes) and consoles (containerd's
    streaming server)."""

    def __init__(self, runtime: PodRuntime) -> None:
        self.pods = runtime

    def execute(self, deps: AgentDeps, member: Container, argv: Sequence[str], run: bool,
                interactive: bool) -> dict[str, Any]:
        return members.execute(deps, self.pods, member, argv, run, interactive)

    def logs(self, deps: AgentDeps, member: Container, *, stdout: bool, stderr: bool,
             timestamps: bool, tail: int | None, since: float | None) -> str:
        return members.logs(deps, self.pods, member, stdout=stdout, stderr=stderr,
                            timestamps=timestamps, tail=tail, since=since)

    def attach(self, deps: AgentDeps, member: Container) -> str:
        return consoles.attach(deps, self.pods, member)

    def resize(self, deps: AgentDeps, member: Container, height: int, width: int) -> None:
        consoles.resize(deps, member, height, width)
