"""The pod runtime a CRI capsule runs on: the interface and the plain values that
cross it (``berth.runtime.cri.client`` is the gRPC implementation on containerd).

A pod is a capsule's sandbox: the namespaces its members share, made by the runtime
with its own sandbox image and its CNI network. Members are described with the
Docker driver's :class:`~berth.runtime.base.ContainerSpec` (command, entrypoint,
environment, workdir, tty/stdin, binds, cpu shares, memory, privileged) and read back
as :class:`~berth.runtime.base.RuntimeContainer`, so that a member's row is written
by the same code whichever driver runs it. Errors are ``berth.runtime.base``'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from berth.runtime import base as rt


@dataclass(frozen=True, slots=True)
class PodSpec:
    """One capsule's pod: its metadata uid is the capsule's uuid."""

    uuid: str
    name: str
    host: str
    labels: dict[str, str] = field(default_factory=dict)
    hostname: str | None = None
    #: A handler of the runtime's ([DEFAULT]container_runtime, or the capsule's own);
    #: None: the runtime's default.
    runtime_handler: str | None = None
    #: A privileged member needs a privileged pod.
    privileged: bool = False
    #: The pod's annotations (its berth networks: ``berth.cni.pod``).
    annotations: dict[str, str] = field(default_factory=dict)
    #: Ports published on the node (containerd hands them to the CNI configuration's
    #: ``portMappings`` capability: the ``portmap`` plugin).
    ports: tuple[rt.PublishedPort, ...] = ()
    #: The pod's resolver; None: the node's /etc/resolv.conf.
    dns: rt.DnsConfig | None = None


@dataclass(frozen=True, slots=True)
class Pod:
    """A pod as listed: its id, whose capsule (the uid) and host, and whether it runs."""

    id: str
    uuid: str
    host: str | None
    ready: bool


class PodRuntime(Protocol):
    """A CRI runtime on one node. Thread-safe; every failure is a
    :class:`~berth.runtime.base.RuntimeDriverError` subclass."""

    def version(self) -> str:
        """The runtime's name and version; :class:`RuntimeUnavailable` when it does not
        answer."""

    def image_present(self, ref: str) -> bool:
        """Whether the runtime holds the image ``ref`` (the runtime never pulls here)."""

    def pull_image(self, ref: str, auth: rt.RegistryAuth | None = None) -> str:
        """Pull ``ref`` into the runtime (with ``auth`` for its registry); the image's
        id. :class:`RuntimeImageNotFound` when the registry has no such image,
        :class:`RuntimeImagePullFailed` for any other failure (unreachable registry,
        refused credentials)."""

    def run_pod(self, spec: PodSpec) -> str:
        """Make and start the pod (its network included); return its id. A pod the
        runtime made but could not start is removed before the error is raised."""

    def stop_pod(self, pod_id: str) -> None:
        """Stop every process of the pod and tear its network down. Idempotent."""

    def remove_pod(self, pod_id: str, uuid: str) -> None:
        """Remove the pod with its members, then the logs and cgroups it leaves on the
        node. A missing pod is a no-op."""

    def pod_ready(self, pod_id: str) -> bool:
        """Whether the pod runs; :class:`RuntimeNotFound` when there is no such pod."""

    def pod_netns(self, pod_id: str) -> str | None:
        """The path of the pod's network namespace (None when the runtime does not
        say); :class:`RuntimeNotFound` when there is no such pod."""

    def pods(self, host: str) -> list[Pod]:
        """Every pod berth made for ``host``."""

    def create_member(self, pod_id: str, pod: PodSpec, spec: rt.ContainerSpec,
                      attempt: int = 0) -> str:
        """Create (not start) a member of the pod; return its id. ``attempt``: the
        how-manieth container of that member in the pod (a restart's is one more)."""

    def log_path(self, uuid: str, member_uuid: str) -> Path:
        """Where the runtime writes the member's output (CRI's log format)."""

    def exec_sync(self, member_id: str, argv: list[str], timeout: float) -> tuple[str, int]:
        """Run ``argv`` in the member to its end: (stdout then stderr, exit code);
        ``TimeoutError`` when it runs past ``timeout`` seconds."""

    def exec_url(self, member_id: str, argv: list[str], tty: bool) -> str:
        """The runtime's streaming URL of a new exec of ``argv`` in the member
        (stdin, stdout, and stderr unless ``tty``), valid once, for a short while."""

    def attach_url(self, member_id: str, tty: bool) -> str:
        """The runtime's streaming URL of an attach to the member's main process
        (stdin, stdout, and stderr unless ``tty``, which must be the member's own),
        valid once, for a short while."""

    def remove_member(self, member_id: str) -> None:
        """Remove an exited member (a missing one is a no-op)."""

    def start_member(self, member_id: str) -> None:
        """Start a created member."""

    def member(self, member_id: str) -> rt.RuntimeContainer:
        """A member's state; :class:`RuntimeNotFound` when there is no such member."""

    def host_members(self, host: str) -> list[rt.RuntimeContainer]:
        """Every member of every pod berth made for ``host``, in one listing (states
        without exit codes)."""

    def members(self, pod_id: str) -> list[rt.RuntimeContainer]:
        """The pod's members as listed (states without exit codes: ``member`` has them)."""
