"""Everything a flow needs, handed over explicitly (flows never read CONF)."""

from __future__ import annotations

import concurrent.futures as cf
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any, Protocol

from berth.common.threads import ElasticThreadPool
from berth.compute.claims import ResourceTracker
from berth.compute.last_inspected import LastInspected
from berth.compute.networking import ContainerNetworks
from berth.compute.node_provider import NodeProvider
from berth.compute.recent_images import RecentImages
from berth.compute.volumes import ContainerVolumes
from berth.compute.workers import ContainerWorkers
from berth.conf import default as conf_default
from berth.conf.cri import STANDARD_CNI_BIN_DIRS
from berth.db.engine import Database
from berth.db.models import Container
from berth.image.base import ImageStoreDriver
from berth.placement.base import Placement
from berth.quota import QuotaEnforcer
from berth.runtime.base import Runtime, RuntimeContainer


@dataclass(frozen=True, slots=True)
class AgentSettings:
    host: str
    default_pull_policy: str = "always"
    default_registry: str | None = None
    default_registry_username: str | None = None
    default_registry_password: str | None = None
    default_runtime: str = "runc"
    stop_timeout_default: int | None = None
    #: [docker]execute_timeout: how long a non-interactive exec may run (console).
    execute_timeout: float = 5.0
    #: Seconds a task_state may last (create-like tasks: ``create_task_timeout``);
    #: 0 or less: no deadline. See ``flows.common.task_timeout``.
    task_state_timeout: int = 600
    create_task_timeout: int = 1800
    #: [compute]database_patience: how long an action rides out a database outage
    #: (``flows.outage``).
    database_patience: float = 45.0
    #: Start-up recovery starts rows recorded Running but found stopped.
    resume_container_state: bool = False
    #: ``[DEFAULT]default_memory_swap`` (MiB, -1 unlimited): the swap limit ``docker
    #: update`` sets with a new memory limit.
    default_memory_swap: int = -1
    #: Fernet key for registry passwords (berth.db.registries.load_key): the agent
    #: decrypts a container's registry credentials at pull time.
    registry_key: bytes | None = None
    #: [DEFAULT]sandbox_image and sandbox_image_pull_policy: a capsule's sandbox.
    sandbox_image: str = conf_default.SANDBOX_IMAGE
    sandbox_pull_policy: str = conf_default.SANDBOX_IMAGE_PULL_POLICY
    #: [DEFAULT]init_container_timeout: how long a capsule's init container may run.
    init_container_timeout: int = 3600
    #: [compute]remount_container_volume: start-up mounts volumes again.
    remount_container_volume: bool = True
    #: [cri]restart_backoff_initial / restart_backoff_max: a CRI member's restart back-off.
    cri_restart_backoff: tuple[float, float] = (10.0, 300.0)
    #: Where the standard CNI plugins are looked for ([cri]cni_bin_dir, then Debian's
    #: and the upstream default): ``portmap`` publishes a docker capsule's host ports
    #: on local networks.
    cni_bin_dirs: tuple[str, ...] = STANDARD_CNI_BIN_DIRS


@dataclass(frozen=True, slots=True)
class PeriodicTask:
    """A timer an engine asks the agent for (``CapsuleEngine.periodic_tasks``)."""

    name: str
    run: Callable[[], object]
    spacing: float
    run_immediately: bool = True


class MemberConsole(Protocol):
    """Logs and consoles of a capsule member that the capsule engine runs outside
    ``AgentDeps.runtime`` (the flows' ``exec``, ``logs``, ``attach`` and ``resize`` hand
    such a member over to it). Errors: the API's (``UncreatedContainer``, ``Conflict``)."""

    def execute(self, deps: AgentDeps, member: Container, argv: Sequence[str], run: bool,
                interactive: bool) -> dict[str, Any]: ...

    def logs(self, deps: AgentDeps, member: Container, *, stdout: bool, stderr: bool,
             timestamps: bool, tail: int | None, since: float | None) -> str: ...

    def attach(self, deps: AgentDeps, member: Container) -> str: ...

    def resize(self, deps: AgentDeps, member: Container, height: int, width: int) -> None: ...


class CapsuleEngine(Protocol):
    """What runs this agent's capsules, chosen once at wiring (``[DEFAULT]capsule_driver``,
    ``berth.cmd.wiring.build_capsule_engine``): ``capsules.docker.DockerCapsules`` (a
    sandbox and members as Docker containers) or ``capsules.cri.engine.CriCapsules`` (a
    pod on containerd's CRI plugin). The capsule flows (``capsules.create``, ``delete``,
    ``status``, ``recovery``) and the container flows that meet a member (console, logs,
    sync, recovery) ask it, and never which engine it is, as kubelet's runtime
    interface hides which runtime runs a pod."""

    #: The engine's name in messages ("Docker", "containerd").
    name: str
    #: What its ``remove_left`` and ``sweep_orphans`` count, in messages.
    units: str

    def make(self, deps: AgentDeps, row: Container, inits: list[Container],
             members: list[Container], binds: Mapping[str, tuple[str, ...]], undo: ExitStack,
             clock: Callable[[], float]) -> RuntimeContainer:
        """Run the capsule ``row``: its init containers in order (each to exit 0), then
        its members; every engine object made is on ``undo``. Returns the capsule's
        engine object (sandbox or pod) as its row records it. Raises ``CapsuleFailed``,
        ``ImageNotFound`` or ``RuntimeDriverError``."""
        ...

    def remove_left(self, deps: AgentDeps, row: Container, parts: list[Container]) -> int:
        """Remove whatever a create of ``row`` (members ``parts``) may have made in the
        engine, found by name or labels, and its interfaces. Idempotent; how many
        ``units`` were removed."""
        ...

    def remove(self, deps: AgentDeps, row: Container, parts: list[Container],
               force: bool) -> bool:
        """A delete's engine half: the capsule's members, its sandbox or pod, their
        interfaces. False (the capsule's Error written) when the engine failed without
        ``force``; with ``force`` a failure is logged and it goes on."""
        ...

    def observe(self, deps: AgentDeps, capsule: Container, members: list[Container],
                listing: Any = None) -> tuple[bool, list[Container], Mapping[str, int | None]]:
        """Whether the capsule's sandbox (pod) runs, its members' rows as the engine
        leaves them, and the exit codes of those that are Stopped, by uuid.
        ``listing``: one listing of the host its relist read (``periodic_tasks``)."""
        ...

    def runs_member(self, row: Container) -> bool:
        """``row`` is a member this engine runs outside ``AgentDeps.runtime``: the
        container flows' sync and recovery leave it to the capsule's."""
        ...

    def member_console(self, row: Container) -> MemberConsole | None:
        """Where ``row``'s logs and consoles are reached when ``runs_member``; None:
        through ``AgentDeps.runtime``, as any container's."""
        ...

    def exec_resize(self, deps: AgentDeps, exec_id: str, height: int, width: int) -> bool:
        """Resize an exec this engine made; False when ``exec_id`` is not one of its."""
        ...

    def sweep_orphans(self, deps: AgentDeps) -> int:
        """Remove this host's engine objects that no capsule reaches (what
        ``AgentDeps.runtime`` lists is swept with the containers); how many. Raises
        ``RuntimeDriverError``."""
        ...

    def periodic_tasks(self, deps: AgentDeps, interval: float) -> list[PeriodicTask]:
        """The timers this engine needs (``interval``: [DEFAULT]periodic_interval_max)."""
        ...


@dataclass(frozen=True, slots=True)
class AgentDeps:
    db: Database
    runtime: Runtime
    tracker: ResourceTracker
    settings: AgentSettings
    #: What runs capsules on this agent (``CapsuleEngine``), chosen once at wiring.
    capsules: CapsuleEngine
    #: Where the node's inventory and the containers' allocations are recorded
    #: (berth.placement); None: no Placement at all (only the local claims).
    placement: Placement | None = None
    #: Images seen present in the engine in the last seconds (image validation, then
    #: the create's pull decision): see berth.compute.recent_images.
    recent_images: RecentImages = field(default_factory=RecentImages)
    #: When each row last received an inspect's answer (PLEG skips the events that
    #: answer already covers): see berth.compute.last_inspected.
    last_inspected: LastInspected = field(default_factory=LastInspected)
    #: The node's Placement provider, remembered between creates (a create asks
    #: whether the API's allocation is held there): see berth.compute.node_provider.
    provider: NodeProvider = field(default_factory=NodeProvider)
    #: Where a flow runs an engine or Placement call while it writes the database
    #: (``flows.common.overlapped``): a create's docker start overlaps the writes
    #: that record the Docker container. Threads start on demand and retire when idle.
    overlap: cf.Executor = field(
        default_factory=lambda: ElasticThreadPool(64, "flow-overlap", idle_timeout=10.0))
    #: The agent's per-container action workers: work the agent starts on its own (a
    #: heal) is queued there, in turn with the users' actions. None in unit tests
    #: that run flows directly: such work then runs at once.
    workers: ContainerWorkers | None = None
    #: The projects' quotas, checked again in the claim of a resize, atomically with
    #: it (berth.quota); None: not enforced on this agent (unit tests of flows).
    quota: QuotaEnforcer | None = None
    #: Plugs containers into berth's local networks ([network]driver local); None:
    #: containers stay on Docker's default bridge (driver docker, unit tests).
    networks: ContainerNetworks | None = None
    #: Attaches and releases containers' volumes (berth.compute.volumes); None: the
    #: agent has no volume drivers (unit tests of flows), and mounts are refused.
    volumes: ContainerVolumes | None = None
    #: The image stores of ``[DEFAULT]image_driver_list`` by name (glance:
    #: berth.image.glance); docker is the engine's own pull and is not here.
    image_stores: Mapping[str, ImageStoreDriver] = field(default_factory=dict)
    #: ``[DEFAULT]image_driver_list`` as the agent read it (for its messages).
    image_driver_list: tuple[str, ...] = ("glance", "docker")

    @property
    def host(self) -> str:
        return self.settings.host
