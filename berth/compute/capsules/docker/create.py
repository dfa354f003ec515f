"""The docker driver's half of a capsule's create (``capsules.create`` does the claim,
the allocation, the volumes and the Error on failure)::

    sandbox image present ──► sandbox: docker create + start      (undo: rm -f)
    ──► with local networks: the sandbox plugged, its host ports published
                                              (undo: ports withdrawn, unplugged)
    ──► each init container, in order: pull, create, start, wait until it exits;
        exit 0 goes on, anything else (or [DEFAULT]init_container_timeout) fails
        the capsule naming it                                    (undo: rm -f)
    ──► the containers side by side: pull, create, start         (undo: rm -f)
    ──► the sandbox as inspected, for the capsule's row

Members join the sandbox's network and IPC namespaces (``container:<sandbox id>``);
their exposed ports are the sandbox's, since a member has no network of their own. With
local networks the sandbox is plugged once started, and its addresses are the
members' too (``capsules.network``).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from typing import Any

from berth.common import exceptions as exc
from berth.common.log import container_context
from berth.compute import image_puller
from berth.compute.capsules import network as capsule_network
from berth.compute.capsules import sandbox, sandbox_options
from berth.compute.capsules.failure import CapsuleFailed
from berth.compute.capsules.init_containers import wait_for_init
from berth.compute.deps import AgentDeps
from berth.compute.flows import common
from berth.compute.spec import build_spec
from berth.compute.states import TaskState
from berth.db import containers
from berth.db.containers import Expect
from berth.db.models import Container
from berth.runtime import base as rt

LOG = logging.getLogger(__name__)


def make_capsule(deps: AgentDeps, row: Container, inits: list[Container],
                 members: list[Container], binds: Mapping[str, tuple[str, ...]],
                 undo: ExitStack, clock: Callable[[], float]) -> rt.RuntimeContainer:
    """The sandbox, the init containers in order, then the containers; every Docker
    container made is on ``undo``. Returns the sandbox as inspected."""
    image = sandbox.ensure_image(deps, deps.settings.sandbox_image,
                                 deps.settings.sandbox_pull_policy)
    sandbox_id = deps.runtime.create(_sandbox_spec(deps, row, image, members))
    undo.callback(remove_quietly, deps, sandbox_id)
    deps.runtime.start(sandbox_id)
    plugged: dict[str, Any] = {}
    if capsule_network.enabled(deps, row):
        # LIFO: the sandbox goes first, then its interfaces are given back.
        undo.callback(capsule_network.release, deps, row)
        ports = sandbox_options.published_ports(members)
        try:
            seen = deps.runtime.inspect(sandbox_id)
            plugged = capsule_network.plug_sandbox(deps, row, seen)
            undo.callback(capsule_network.withdraw_ports, deps, row, ports)
            capsule_network.publish_ports(deps, row, ports, plugged,
                                          seen.state.pid if seen.state else 0)
        except (exc.NetworkNotFound, exc.NetworkPlugFailed) as err:
            raise CapsuleFailed(reason=f"The capsule could not join its networks: "
                                       f"{err.msg}") from err
    containers.update_(deps.db, row.uuid, {"container_id": sandbox_id, **plugged},
                       expect=Expect(task_state=TaskState.CONTAINER_CREATING))
    extra = {"addresses": plugged["addresses"]} if plugged else {}
    for member in inits:
        undo.callback(remove_quietly, deps,
                      _run_member(deps, member, sandbox_id, init=True,
                                  binds=binds.get(member.uuid, ()), extra=extra))
        wait_for_init(deps, row, member, clock, deps.runtime.inspect)
    _run_members(deps, members, sandbox_id, undo, binds, extra)
    return deps.runtime.inspect(sandbox_id)


def _sandbox_spec(deps: AgentDeps, row: Container, image: str,
                  members: list[Container]) -> rt.ContainerSpec:
    ports = sorted({port for m in members for port in (m.exposed_ports or {})})
    mode, endpoint = capsule_network.network_mode(deps, row)
    return rt.ContainerSpec(uuid=row.uuid, host=deps.host, image=image,
                            labels={str(k): str(v) for k, v in (row.labels or {}).items()},
                            hostname=(row.name or "")[:63] or None,
                            exposed_ports=tuple(ports), ipc_mode="shareable",
                            network_mode=mode, endpoint=endpoint,
                            # on local networks portmap publishes them (network none)
                            published_ports=() if capsule_network.enabled(deps, row)
                            else sandbox_options.published_ports(members),
                            dns=sandbox_options.dns_config(row))


def _run_member(deps: AgentDeps, member: Container, sandbox_id: str,
                init: bool = False, binds: tuple[str, ...] = (),
                extra: dict[str, Any] | None = None) -> str:
    """Pull, create and start one member in the sandbox's namespaces; record it on the
    member's row (with ``extra``: the sandbox's addresses); return its Docker
    container's id."""
    with container_context(member.uuid):
        what = "init container" if init else "container"
        try:
            image = image_puller.pull_image(deps, member)
        except exc.ImageNotFound as err:
            raise CapsuleFailed(reason=f"The {what} {member.name}: {err.msg}") from err
        spec = dataclasses.replace(
            build_spec(deps, member, image, binds),
            network_mode=f"container:{sandbox_id}", ipc_mode=f"container:{sandbox_id}",
            hostname=None, exposed_ports=(), runtime=None,
            restart_policy=None if init else _restart_policy(member))
        try:
            container_id = deps.runtime.create(spec)
        except rt.RuntimeDriverError as err:
            raise CapsuleFailed(reason=f"Docker could not create the {what} "
                                       f"{member.name}: {err.msg}") from err
        try:
            deps.runtime.start(container_id)
        except rt.RuntimeDriverError as err:
            remove_quietly(deps, container_id)
            raise CapsuleFailed(reason=f"Docker could not start the {what} "
                                       f"{member.name}: {err.msg}") from err
        seen = deps.runtime.inspect(container_id)
        common.apply_runtime_state(deps, member, seen, force=True,
                                   extra={"container_id": container_id, "host": deps.host,
                                          "image_driver": image_puller.served_by(deps, member),
                                          **(extra or {})})
        LOG.info("%s %s started (Docker container %s)", what, member.name, container_id[:12])
        return container_id


def _run_members(deps: AgentDeps, members: list[Container], sandbox_id: str,
                 undo: ExitStack, binds: Mapping[str, tuple[str, ...]],
                 extra: dict[str, Any] | None = None) -> None:
    """Run the containers side by side (nothing orders them, and a start is mostly the
    engine's time); every one that started is on ``undo``; the first failure raises
    once all have ended."""
    running = [common.overlapped(deps, _run_member, deps, m, sandbox_id, False,
                                 binds.get(m.uuid, ()), extra) for m in members]
    failure: BaseException | None = None
    for future in running:
        try:
            undo.callback(remove_quietly, deps, future.result())
        except BaseException as err:  # noqa: BLE001 - kept, raised once all have ended
            failure = failure or err
    if failure is not None:
        raise failure


def _restart_policy(member: Container) -> dict[str, object] | None:
    policy = member.restart_policy or {}
    if not policy.get("Name") or policy.get("Name") == "no":
        return None
    return {"Name": policy["Name"], "MaximumRetryCount": int(policy.get("MaximumRetryCount")
                                                            or 0)}


def remove_quietly(deps: AgentDeps, container_id: str) -> None:
    try:
        deps.runtime.delete(container_id, force=True)
    except rt.RuntimeDriverError as err:
        LOG.warning("could not remove Docker container %s after a failed capsule create: "
                    "%s", container_id[:12], err.msg)
