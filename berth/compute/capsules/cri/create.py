"""The engine half of a capsule's create on a CRI runtime (``capsules.create`` does
the claim, the allocation, the volumes and the Error on failure)::

    every member's image present in the runtime per its pull policy (CRI
      PullImage: ``images``; an image that cannot be had fails the capsule naming
      the member and the image)
    ──► RunPodSandbox: metadata uid = the capsule's uuid, berth's labels, the log
        directory, the cgroup parent; a pod whose start failed is removed at once
                                                       (undo: Stop + RemovePodSandbox)
    ──► each init container in order: CreateContainer, StartContainer, waited for;
        exit 0 goes on, anything else (or [DEFAULT]init_container_timeout) fails the
        capsule naming it
    ──► the containers side by side: CreateContainer, StartContainer
    ──► the pod's state, for the capsule's row

The one undo is the pod's removal: RemovePodSandbox takes its members with it (and
StopPodSandbox its networks: ``network``, whose addresses the capsule and its
members show).
Members share the pod's network and IPC namespaces (localhost between them) and
each has its own PID namespace, as with the docker driver.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from typing import Any

from berth.common import exceptions as exc
from berth.common.log import container_context
from berth.compute.capsules import sandbox_options
from berth.compute.capsules.cri import images as cri_images
from berth.compute.capsules.cri import network as cri_network
from berth.compute.capsules.cri import pods as cri_pods
from berth.compute.capsules.failure import CapsuleFailed
from berth.compute.capsules.init_containers import wait_for_init
from berth.compute.deps import AgentDeps
from berth.compute.flows import common
from berth.compute.spec import build_spec
from berth.compute.states import TaskState
from berth.db import containers
from berth.db.containers import Expect
from berth.db.models import Container
from berth.image.reference import parse_image
from berth.runtime import base as rt
from berth.runtime.cri.base import PodRuntime, PodSpec

LOG = logging.getLogger(__name__)


def make_pod(deps: AgentDeps, pods: PodRuntime, row: Container, inits: list[Container],
             members: list[Container], binds: Mapping[str, tuple[str, ...]], undo: ExitStack,
             clock: Callable[[], float]) -> rt.RuntimeContainer:
    """Run the capsule ``row`` as a pod (see the module docstring); the pod's removal is
    on ``undo``. Returns the pod as the capsule's row records it."""
    images = {m.uuid: cri_images.ensure_image(deps, pods, m, init=m in inits)
              for m in inits + members}
    with _network_failures(row):
        spec = pod_spec(deps, row, inits + members,
                        annotations=cri_network.pod_annotations(deps, row))
    pod_id = pods.run_pod(spec)
    # LIFO: the pod goes first (containerd's DEL unplugs it), then the daemon's check.
    undo.callback(cri_network.release, deps, row, pod_id)
    undo.callback(cri_pods.remove_pod_quietly, pods, pod_id, row.uuid)
    LOG.info("capsule %s: pod %s running", row.uuid, pod_id[:12])
    with _network_failures(row):
        plugged = cri_network.addresses(deps, pods, row, pod_id)
    containers.update_(deps.db, row.uuid, {"container_id": pod_id, **plugged},
                       expect=Expect(task_state=TaskState.CONTAINER_CREATING))
    extra = {"addresses": plugged["addresses"]} if plugged else {}
    for member in inits:
        _run_member(deps, pods, pod_id, spec, member, images[member.uuid],
                    binds.get(member.uuid, ()), True, extra)
        wait_for_init(deps, row, member, clock, pods.member)
    running = [common.overlapped(deps, _run_member, deps, pods, pod_id, spec, m,
                                 images[m.uuid], binds.get(m.uuid, ()), False, extra)
               for m in members]
    failure: BaseException | None = None
    for future in running:
        try:
            future.result()
        except BaseException as err:  # noqa: BLE001 - kept, raised once all have ended
            failure = failure or err
    if failure is not None:
        raise failure
    return pod_as_container(pods, pod_id, row)


def pod_spec(deps: AgentDeps, row: Container, members: list[Container],
             annotations: dict[str, str] | None = None) -> PodSpec:
    return PodSpec(uuid=row.uuid, name=row.name or row.uuid, host=deps.host,
                   labels={str(k): str(v) for k, v in (row.labels or {}).items()},
                   hostname=(row.name or "")[:63] or None,
                   runtime_handler=row.runtime or deps.settings.default_runtime or None,
                   privileged=any(m.privileged for m in members),
                   ports=sandbox_options.published_ports(members),
                   dns=sandbox_options.dns_config(row),
                   # The template's metadata.annotations, then berth's own (its networks),
                   # which a template cannot override.
                   annotations={**{str(k): str(v) for k, v in (row.annotations or {}).items()
                                   if not str(k).startswith("berth.")},
                                **(annotations or {})})


@contextmanager
def _network_failures(row: Container) -> Iterator[None]:
    """A network the capsule cannot have fails it, saying which and why."""
    try:
        yield
    except (exc.NetworkNotFound, exc.NetworkPlugFailed) as err:
        raise CapsuleFailed(reason=f"The capsule's pod could not join its networks: "
                                   f"{err.msg}") from err


def pod_as_container(pods: PodRuntime, pod_id: str, row: Container) -> rt.RuntimeContainer:
    """The pod as the capsule's row records it: running while it is ready."""
    ready = pods.pod_ready(pod_id)
    state = rt.ContainerState(status=rt.RunState.RUNNING if ready else rt.RunState.EXITED,
                              running=ready)
    return rt.RuntimeContainer(id=pod_id, name=row.name or row.uuid, uuid=row.uuid, image="",
                               state=state)


def _run_member(deps: AgentDeps, pods: PodRuntime, pod_id: str, pod: PodSpec,
                member: Container, image: str, binds: tuple[str, ...], init: bool,
                extra: dict[str, Any]) -> str:
    """Create and start one member in the pod; record it on the member's row (its
    container_id: the runtime's id); return that id."""
    with container_context(member.uuid):
        what = "init container" if init else "container"
        spec = member_spec(deps, member, image, binds)
        try:
            member_id = pods.create_member(pod_id, pod, spec)
        except rt.RuntimeDriverError as err:
            raise CapsuleFailed(reason=f"containerd could not create the {what} "
                                       f"{member.name}: {err.msg}") from err
        try:
            pods.start_member(member_id)
        except rt.RuntimeDriverError as err:
            raise CapsuleFailed(reason=f"containerd could not start the {what} "
                                       f"{member.name}: {err.msg}") from err
        common.apply_runtime_state(deps, member, pods.member(member_id), force=True,
                                   extra={"container_id": member_id, "host": deps.host,
                                          "image_driver": "docker", **extra})
        LOG.info("%s %s of capsule pod %s started (CRI container %s)", what, member.name,
                 pod_id[:12], member_id[:12])
        return member_id


def member_spec(deps: AgentDeps, member: Container, image: str,
                binds: tuple[str, ...]) -> rt.ContainerSpec:
    """The member's container as the runtime makes it (restarts are berth's:
    ``restarts``)."""
    info = rt.ImageInfo(id="", repo_tags=(image,), size=0, cmd=None, entrypoint=None)
    return dataclasses.replace(
        build_spec(deps, member, (parse_image(image), info), binds),
        image=image, hostname=None, network_mode=None, restart_policy=None)


def restart_member(deps: AgentDeps, pods: PodRuntime, capsule: Container, member: Container,
                   attempt: int, labels: dict[str, str]) -> str:
    """A new container of ``member`` in its capsule's pod, started: its id. The
    runtime's error (or CapsuleFailed: its image is gone) is raised with nothing made."""
    image = cri_images.ensure_image(deps, pods, member, init=False)
    binds = deps.volumes.binds_of(None, [member.uuid]).get(member.uuid, ()) \
        if deps.volumes is not None else ()
    pod = pod_spec(deps, capsule, [member], annotations=cri_network.pod_annotations(deps,
                                                                                   capsule))
    spec = member_spec(deps, member, image, binds)
    spec = dataclasses.replace(spec, labels={**spec.labels, **labels})
    member_id = pods.create_member(capsule.container_id or "", pod, spec, attempt=attempt)
    try:
        pods.start_member(member_id)
    except rt.RuntimeDriverError:
        pods.remove_member(member_id)
        raise
    return member_id
