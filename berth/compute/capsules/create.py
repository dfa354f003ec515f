"""container_create for a capsule (behaviours.md §8): the docker capsule driver, and
the frame the cri driver shares (claim, allocation, volumes, the Error written on
failure; its engine half is ``capsules.cri.create``).

Steps, each with its undo on one ExitStack, so that every failure path removes every
Docker container the capsule made and releases its claim and its allocation::

    task container_creating ──► claim the capsule's sums ──► allocate in Placement
      + the create event                                      (undo: release)
    ──► the members' volumes waited for and attached, a volume that several
        members mount attached once          (undo: made ones removed, the rest detached)
    ──► sandbox image present ──► sandbox: docker create + start  (undo: rm -f)
    ──► each init container, in order: pull, create, start, wait until it exits;
        exit 0 goes on, anything else (or [DEFAULT]init_container_timeout) fails
        the capsule naming it                                    (undo: rm -f)
    ──► the containers side by side: pull, create, start         (undo: rm -f)
    ──► the sandbox's state written on the capsule, task cleared

Members join the sandbox's network and IPC namespaces (``container:<sandbox id>``);
their exposed ports are the sandbox's, since a member has no network of its own. With
local networks the sandbox is plugged once started, and its addresses are the
members' too (``capsules.network``).
Init containers run once, without a restart policy: the first one that fails puts
the capsule in Error (Zun ran them under ``on-failure:10`` and then gave up on the
``Restarting`` it saw).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.common.log import container_context
from berth.compute import image_puller
from berth.compute.capsules import network as capsule_network
from berth.compute.capsules import sandbox, sandbox_options
from berth.compute.capsules.cri import create as cri_create
from berth.compute.capsules.cri import network as cri_network
from berth.compute.capsules.cri import pods as cri_pods
from berth.compute.capsules.failure import CapsuleFailed
from berth.compute.capsules.init_containers import wait_for_init
from berth.compute.deps import AgentDeps
from berth.compute.flows import allocation as allocation_flow
from berth.compute.flows import common, outage
from berth.compute.flows import create as container_flow
from berth.compute.flows.volume_step import VOLUME_ERRORS
from berth.compute.spec import build_spec
from berth.compute.states import Status, TaskState
from berth.db import capsules, containers
from berth.db.models import Container
from berth.placement.base import AllocationFailed, PlacementError
from berth.runtime import base as rt

LOG = logging.getLogger(__name__)


def create_capsule(deps: AgentDeps, ctx: RequestContext, uuid: str,
                   limits: dict[str, Any] | None = None,
                   clock: Callable[[], float] = time.monotonic) -> None:
    """Create the capsule ``uuid``. A database outage in the middle is ridden out
    (``outage.ride_out``): the create begins again once the database answers, from
    nothing (what the cut-short attempt made is removed first); past the patience, or
    when the flow fails in a way it did not plan for, the capsule and its members end
    in Error saying so, with nothing left in the engine, Placement or the volumes."""
    outage.ride_out(deps, uuid, "capsule create",
                    lambda retry: _attempt(deps, ctx, uuid, clock, retry), ctx=ctx,
                    undo=lambda: abandon(deps, uuid, "create"), container_id=None,
                    addresses={})


#: The tasks a capsule create sets: a retry after an outage takes it back from itself.
_OWN_TASKS = (None, TaskState.CONTAINER_CREATING.value)


def _attempt(deps: AgentDeps, ctx: RequestContext, uuid: str, clock: Callable[[], float],
             retry: bool) -> None:
    try:
        row, event_id = common.begin_task(deps, ctx, uuid, TaskState.CONTAINER_CREATING,
                                          "compute__do_container_create",
                                          expected_status=Status.CREATING.value,
                                          expected_task_state=_OWN_TASKS if retry else None)
    except exc.ContainerNotFound:
        LOG.info("capsule was deleted before its creation began; nothing to do")
        return
    except exc.TaskInProgress as err:
        LOG.warning("not creating the capsule: busy or no longer Creating (%s)", err.msg)
        return
    if retry:     # still ours and Creating: start again from nothing
        remove_left_by_create(deps, row)
    LOG.info("creating capsule %s", row.name)
    try:
        with common.recorded(deps, ctx, uuid, "compute__do_container_create",
                             started=event_id):
            _create(deps, ctx, row, clock)
    except exc.BerthError:
        return          # recorded on the action; the row says why


def _create(deps: AgentDeps, ctx: RequestContext, row: Container,
            clock: Callable[[], float]) -> None:
    inits, members = capsules.members_of(deps.db, row.id)
    binds: dict[str, tuple[str, ...]] = {}
    # The undo runs before errors_written: the Error written is the capsule's last
    # state, with nothing of it left in the engine or in Placement.
    with (common.owned_task(deps, row.uuid, TaskState.CONTAINER_CREATING, held=row) as hold,
          errors_written(deps, row, engine_name(deps)), ExitStack() as undo):
        check_host_ports(deps, row, inits + members)
        claim(deps, row)
        if deps.placement is not None:
            allocate(deps, row)
            undo.callback(allocation_flow.release_allocation, deps, row.uuid)
        if deps.volumes is not None:
            undo.callback(_release_volumes, deps, ctx, inits + members)
            binds = deps.volumes.binds_of(ctx, [m.uuid for m in inits + members])
        if deps.pods is None:
            seen = _make_on_docker(deps, row, inits, members, binds, undo, clock)
        else:
            seen = cri_create.make_pod(deps, deps.pods, row, inits, members, binds,
                                       undo, clock)
        hold.apply_and_end(deps, seen, {"status_reason": None})
        undo.pop_all()
    LOG.info("capsule %s is up: %d init containers, %d containers", row.name, len(inits),
             len(members))


def remove_left_by_create(deps: AgentDeps, row: Container) -> int:
    """What a capsule create that did not finish (cut short by the database, or by the
    agent's death) may have left, removed or released: every engine container of it
    (the sandbox and each member, by the names zun-<uuid>: the rows may not name them
    yet; with the cri driver, its pods by their labels) and their interfaces, its
    Placement allocation, its members' volumes. Idempotent. Returns how many engine
    containers (or pods) were removed."""
    inits, members = capsules.members_of(deps.db, row.id)
    removed = 0
    engine_uuids = [m.uuid for m in (*members, *inits)] + [row.uuid]
    if deps.pods is not None:           # the pod, members with it, by its labels
        pod_ids = [p.id for p in deps.pods.pods(deps.host) if p.uuid == row.uuid]
        removed, engine_uuids = cri_pods.remove_pods_of(deps.pods, deps.host, row.uuid), []
        for pod_id in pod_ids:            # its interfaces, if the pod's DEL missed them
            cri_network.release(deps, row, pod_id)
    for uuid in engine_uuids:
        found = container_flow.named_container(deps, uuid)
        if found is not None:
            try:
                deps.runtime.delete(found.id, force=True)
                removed += 1
            except rt.RuntimeNotFound:
                pass
    if deps.pods is None:               # the sandbox's interfaces, if it was plugged
        capsule_network.release(deps, row)
    allocation_flow.release_allocation(deps, row.uuid)
    if deps.volumes is not None:
        deps.volumes.release_failed(None, [m.uuid for m in (*members, *inits)])
    return removed


def abandon(deps: AgentDeps, uuid: str, what: str) -> None:
    """The undo of a capsule's create or delete given up (``outage.give_up``,
    ``unexpected.settle``, which then write the capsule's Error, without a Docker
    container): every engine container of it removed and what it held released
    (``remove_left_by_create``: a delete had begun to remove them anyway), its members
    in Error first (whoever sees the capsule in Error sees its members in Error too).
    A capsule in Error holds nothing; deleting it again removes the rows."""
    row = containers.find_by_uuid(deps.db, uuid)
    if row is None:
        return
    remove_left_by_create(deps, row)
    capsules.update_members(deps.db, row.id, {
        "status": Status.ERROR.value, "container_id": None, "addresses": {},
        "task_state": None,
        "status_reason": f"Capsule failed: its {what} was abandoned; the capsule's "
                         f"status_reason says why."})
    deps.tracker.publish_usage()


def engine_name(deps: AgentDeps) -> str:
    """Which engine runs this agent's capsules, for messages."""
    return "Docker" if deps.pods is None else "containerd"


@contextmanager
def errors_written(deps: AgentDeps, row: Container, engine: str) -> Iterator[None]:
    """A failed create's Error written on the capsule and its members, saying why."""
    try:
        yield
    except exc.ResourcesUnavailable as err:
        fail(deps, row, f"ResourcesUnavailable: {err.msg}. Ask for less, or free "
                        f"resources on host {deps.host}.", placed=False)
        raise
    except (CapsuleFailed, exc.ImageNotFound) as err:
        fail(deps, row, err.msg)
        raise
    except VOLUME_ERRORS as err:
        fail(deps, row, err.msg, placed=False)
        raise
    except rt.RuntimeDriverError as err:
        fail(deps, row, f"{engine} could not make the capsule: {err.msg}")
        raise


def _make_on_docker(deps: AgentDeps, row: Container, inits: list[Container],
                    members: list[Container], binds: dict[str, tuple[str, ...]],
                    undo: ExitStack, clock: Callable[[], float]) -> rt.RuntimeContainer:
    """The sandbox, the init containers in order, then the containers; every Docker
    container made is on ``undo``. Returns the sandbox as inspected."""
    image = sandbox.ensure_image(deps, deps.settings.sandbox_image,
                                 deps.settings.sandbox_pull_policy)
    sandbox_id = deps.runtime.create(_sandbox_spec(deps, row, image, members))
    undo.callback(_remove_quietly, deps, sandbox_id)
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
                       expected_task_state=TaskState.CONTAINER_CREATING)
    extra = {"addresses": plugged["addresses"]} if plugged else {}
    for member in inits:
        undo.callback(_remove_quietly, deps,
                      _run_member(deps, member, sandbox_id, init=True,
                                  binds=binds.get(member.uuid, ()), extra=extra))
        wait_for_init(deps, row, member, clock, deps.runtime.inspect)
    _run_members(deps, members, sandbox_id, undo, binds, extra)
    return deps.runtime.inspect(sandbox_id)


def check_host_ports(deps: AgentDeps, row: Container, members: list[Container]) -> None:
    """The members' host ports are free of this node's other capsules."""
    taken = sandbox_options.taken_host_ports(deps.db, deps.host, row,
                                             sandbox_options.published_ports(members))
    if taken:
        raise CapsuleFailed(reason="Host port " + ", ".join(
            f"{p.host_port}/{p.protocol} (published by capsule {name})"
            for p, name in sorted(taken.items(), key=lambda i: i[0].host_port))
            + f" on host {deps.host}: choose another hostPort, or delete that capsule.")


def claim(deps: AgentDeps, row: Container) -> None:
    deps.tracker.claim(row.uuid, row.cpu, row.memory, placed=row.host == deps.host)


def allocate(deps: AgentDeps, row: Container) -> None:
    try:
        allocation_flow.allocate(deps, row)
    except AllocationFailed as err:
        raise exc.ResourcesUnavailable(reason=err.msg) from err
    except PlacementError as err:
        raise CapsuleFailed(reason=f"Placement could not record the capsule's resources "
                                   f"on host {deps.host}: {err.msg}") from err


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
            _remove_quietly(deps, container_id)
            raise CapsuleFailed(reason=f"Docker could not start the {what} "
                                       f"{member.name}: {err.msg}") from err
        seen = deps.runtime.inspect(container_id)
        common.apply_runtime_state(deps, member, seen, force=True,
                                   extra={"container_id": container_id, "host": deps.host,
                                          "image_driver": "docker", **(extra or {})})
        LOG.info("%s %s started (Docker container %s)", what, member.name, container_id[:12])
        return container_id


def _run_members(deps: AgentDeps, members: list[Container], sandbox_id: str,
                 undo: ExitStack, binds: dict[str, tuple[str, ...]],
                 extra: dict[str, Any] | None = None) -> None:
    """Run the containers side by side (nothing orders them, and a start is mostly the
    engine's time); every one that started is on ``undo``; the first failure raises
    once all have ended."""
    running = [common.overlapped(deps, _run_member, deps, m, sandbox_id, False,
                                 binds.get(m.uuid, ()), extra) for m in members]
    failure: BaseException | None = None
    for future in running:
        try:
            undo.callback(_remove_quietly, deps, future.result())
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


def fail(deps: AgentDeps, row: Container, reason: str, placed: bool = True) -> None:
    """The capsule and its members in Error, saying why (``placed``: False when the
    node refused it, which clears its host as for a container); the node's usage
    published without it (a row in Error holds nothing)."""
    # Its sandbox is gone: a row still naming it would read as removed behind berth's back.
    # The members first: whoever sees the capsule in Error sees its members in Error too.
    capsules.update_members(deps.db, row.id, {"status": Status.ERROR.value,
                                              "status_reason": f"Capsule failed: {reason}"[:2000],
                                              "container_id": None, "addresses": {}})
    common.fail(deps, row.uuid, reason, container_id=None, addresses={},
                **({} if placed else {"host": None}))
    deps.tracker.publish_usage()


def _release_volumes(deps: AgentDeps, ctx: RequestContext | None,
                     members: list[Container]) -> None:
    """Undo of the volume step: what the capsule made removed, the rest detached."""
    if deps.volumes is not None:
        deps.volumes.release_failed(ctx, [m.uuid for m in members])


def _remove_quietly(deps: AgentDeps, container_id: str) -> None:
    try:
        deps.runtime.delete(container_id, force=True)
    except rt.RuntimeDriverError as err:
        LOG.warning("could not remove Docker container %s after a failed capsule create: "
                    "%s", container_id[:12], err.msg)
