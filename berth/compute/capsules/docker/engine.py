"""``DockerCapsules``: the docker driver's ``CapsuleEngine`` (``berth.compute.deps``).
A capsule is a sandbox Docker container and members joining its namespaces, all
named ``zun-<uuid>`` and labelled with this host, so the container flows (PLEG, sync,
logs, consoles, the sweep of Docker containers no row reaches) see the members as any
container: this engine adds no timer, no console and no sweep of its own."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from typing import Any

from berth.compute.capsules import network as capsule_network
from berth.compute.capsules import sandbox_options
from berth.compute.capsules.docker.create import make_capsule
from berth.compute.deps import AgentDeps, MemberConsole, PeriodicTask
from berth.compute.flows import common
from berth.compute.states import Status
from berth.compute.steps.engine_container import named_container
from berth.db.models import Container
from berth.runtime import base as rt

LOG = logging.getLogger(__name__)


class DockerCapsules:
    name = "Docker"
    units = "Docker containers"

    def make(self, deps: AgentDeps, row: Container, inits: list[Container],
             members: list[Container], binds: Mapping[str, tuple[str, ...]], undo: ExitStack,
             clock: Callable[[], float]) -> rt.RuntimeContainer:
        return make_capsule(deps, row, inits, members, binds, undo, clock)

    def remove_left(self, deps: AgentDeps, row: Container, parts: list[Container]) -> int:
        """Every Docker container of it by its name (the sandbox and each member: the
        rows may not name them yet), then the sandbox's interfaces."""
        removed = 0
        for uuid in [m.uuid for m in parts] + [row.uuid]:
            found = named_container(deps, uuid)
            if found is not None:
                try:
                    deps.runtime.delete(found.id, force=True)
                    removed += 1
                except rt.RuntimeNotFound:
                    pass
        capsule_network.release(deps, row)
        return removed

    def remove(self, deps: AgentDeps, row: Container, parts: list[Container],
               force: bool) -> bool:
        # Members first: the sandbox holds the namespaces they are in; then its interfaces.
        for docker_id in [m.container_id for m in parts] + [row.container_id]:
            if docker_id and not _removed(deps, row.uuid, docker_id, force):
                return False
        capsule_network.withdraw_ports(deps, row, sandbox_options.published_ports(parts))
        capsule_network.release(deps, row)
        return True

    def observe(self, deps: AgentDeps, capsule: Container, members: list[Container],
                listing: Any = None
                ) -> tuple[bool, list[Container], Mapping[str, int | None]]:
        """The sandbox inspected; the members' rows as PLEG keeps them."""
        try:
            seen = deps.runtime.inspect(capsule.container_id or "")
            running = seen.state is not None and seen.state.running
        except rt.RuntimeNotFound:
            running = False
        return running, members, _exit_codes(deps, members)

    def runs_member(self, row: Container) -> bool:
        return False

    def member_console(self, row: Container) -> MemberConsole | None:
        return None

    def exec_resize(self, deps: AgentDeps, exec_id: str, height: int, width: int) -> bool:
        return False

    def sweep_orphans(self, deps: AgentDeps) -> int:
        return 0

    def periodic_tasks(self, deps: AgentDeps, interval: float) -> list[PeriodicTask]:
        return []


def _exit_codes(deps: AgentDeps, members: list[Container]) -> dict[str, int | None]:
    """The exit codes of the Stopped members, from the engine (a row keeps none)."""
    codes: dict[str, int | None] = {}
    for member in members:
        if member.status != Status.STOPPED or not member.container_id:
            continue
        try:
            state = deps.runtime.inspect(member.container_id).state
        except rt.RuntimeNotFound:
            continue
        codes[member.uuid] = state.exit_code if state is not None else None
    return codes


def _removed(deps: AgentDeps, uuid: str, docker_id: str, force: bool) -> bool:
    try:
        deps.runtime.delete(docker_id, force=True)
    except rt.RuntimeNotFound:
        pass
    except rt.RuntimeDriverError as err:
        if not force:
            common.fail(deps, uuid, f"Docker could not remove the capsule's container "
                                    f"{docker_id[:12]}: {err.msg}. Delete it again, or with "
                                    f"--force.")
            return False
        LOG.warning("Docker could not remove %s (%s); forced delete goes on",
                    docker_id[:12], err.msg)
    return True
