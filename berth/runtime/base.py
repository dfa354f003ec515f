"""The container runtime interface and the plain values that cross it.

The compute agent talks to the container engine only through :class:`Runtime`.
Signatures take and return the dataclasses below, never docker-SDK objects, ORM
rows or wire dicts. ``berth.runtime.docker`` is the real implementation; the
``docker`` package is imported nowhere else.

Errors (all raised ``from`` the engine's own exception)::

    RuntimeDriverError              the engine failed or answered something unexpected
    ├── RuntimeNotFound             no such container (a 404 from the engine)
    ├── RuntimeImageNotFound        no such image locally, or the registry has no such image
    ├── RuntimeImagePullFailed      the pull failed for another reason (network, auth, ...)
    ├── RuntimeConflict             the engine refused: not running, already paused, ...
    ├── RuntimeInvalid              the engine rejected the parameters (a 400 from the engine)
    └── RuntimeUnavailable          the engine cannot be reached at all
"""

from __future__ import annotations

import datetime as dt
import enum
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from berth.common.exceptions import BerthError
from berth.runtime.inspection_types import Archive, ProcessTable, StatsSample

#: Label berth puts on every Docker container it creates; value = the container's uuid.
LABEL_UUID = "berth.container.uuid"
#: Label naming the berth host (agent) that owns the container.
LABEL_HOST = "berth.host"
#: Docker name prefix, kept from Zun so that operators' tooling still recognises them.
NAME_PREFIX = "zun-"

#: The name Zun gives a container (it labels none): how berth adopts the containers of
#: a Zun it takes over in place (docs/migrating-from-zun.md).
_ZUN_NAME = re.compile(r"^/?zun-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$")


def uuid_of(labels: Mapping[str, str], name: str | None) -> str | None:
    """A container's uuid: berth's label, else the uuid in Zun's name ``zun-<uuid>``
    (a container Zun made, adopted as it is), else None (not berth's or Zun's)."""
    found = labels.get(LABEL_UUID)
    if found:
        return found
    match = _ZUN_NAME.match(name or "")
    return match.group(1) if match else None


def is_adopted(labels: Mapping[str, str], name: str | None) -> bool:
    """A container Zun made (named ``zun-<uuid>``, without berth's labels)."""
    return LABEL_UUID not in labels and uuid_of(labels, name) is not None


class RuntimeDriverError(BerthError):
    message = "Container engine error: %(reason)s"


class RuntimeNotFound(RuntimeDriverError):
    message = "No such container: %(reason)s"


class RuntimeImageNotFound(RuntimeDriverError):
    message = "Image not found: %(reason)s"


class RuntimeImagePullFailed(RuntimeDriverError):
    message = "Error on pulling image: %(reason)s"


class RuntimeConflict(RuntimeDriverError):
    message = "Container engine refused: %(reason)s"


class RuntimeInvalid(RuntimeDriverError):
    message = "Container engine rejected the request: %(reason)s"


class RuntimeUnavailable(RuntimeDriverError):
    message = "Container engine unavailable: %(reason)s"


@dataclass(frozen=True, slots=True)
class ImageRef:
    """A parsed image reference: ``repo`` includes any registry domain; ``tag`` never empty."""

    repo: str
    tag: str = "latest"
    digest: str | None = None

    @property
    def ref(self) -> str:
        """What to hand the engine: ``repo@digest`` when pinned, else ``repo:tag``."""
        if self.digest:
            return f"{self.repo}@{self.digest}"
        return f"{self.repo}:{self.tag}"


@dataclass(frozen=True, slots=True)
class RegistryAuth:
    username: str
    password: str
    registry: str | None = None


@dataclass(frozen=True, slots=True)
class ImageInfo:
    id: str
    repo_tags: tuple[str, ...]
    size: int
    cmd: tuple[str, ...] | None
    entrypoint: tuple[str, ...] | None


@dataclass(frozen=True, slots=True)
class PullProgress:
    """One progress report of a pull, for logs: ``layers_done`` of ``layers_total``."""

    image: str
    status: str
    layers_done: int
    layers_total: int
    bytes_done: int
    bytes_total: int


@dataclass(frozen=True, slots=True)
class HealthcheckSpec:
    test: str
    interval: int = 0
    timeout: int = 0
    retries: int = 0


@dataclass(frozen=True, slots=True)
class PublishedPort:
    """A port of the container (or pod) published on the node: ``host_port`` on every
    host address to ``container_port``."""

    container_port: int
    host_port: int
    protocol: str = "tcp"           # "tcp" | "udp"


@dataclass(frozen=True, slots=True)
class DnsConfig:
    """The resolver a container (or pod) gets instead of the node's: name servers,
    search domains, ``options`` lines ("ndots:2", "edns0")."""

    servers: tuple[str, ...] = ()
    searches: tuple[str, ...] = ()
    options: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class NetworkEndpoint:
    """The container's address on the Docker network of ``network_mode`` (a remote
    driver's, such as kuryr-libnetwork's), and its MAC: the Neutron port's."""

    ipv4: str | None = None
    ipv6: str | None = None
    mac: str | None = None


@dataclass(frozen=True, slots=True)
class ContainerSpec:
    """Everything the engine needs to create one container (behaviours.md §2.1)."""

    uuid: str
    host: str
    image: str                       # the reference to run, e.g. "local/busybox:latest"
    command: tuple[str, ...] | None = None
    entrypoint: tuple[str, ...] | None = None
    environment: dict[str, str] = field(default_factory=dict)
    workdir: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    hostname: str | None = None
    memory_mib: int | None = None
    cpu_shares: int | None = None
    restart_policy: dict[str, object] | None = None   # {"Name": str, "MaximumRetryCount": int}
    tty: bool = False
    interactive: bool = False
    auto_remove: bool = False
    privileged: bool = False
    runtime: str | None = None
    exposed_ports: tuple[str, ...] = ()              # "80/tcp"
    healthcheck: HealthcheckSpec | None = None
    disk_gib: int | None = None
    cpuset_cpus: str | None = None                  # "1,3"
    cpuset_mems: str | None = None
    network_mode: str | None = None                 # None = the engine's default bridge
    endpoint: NetworkEndpoint | None = None         # on network_mode's Docker network
    ipc_mode: str | None = None                     # "container:<id>": a capsule member
    binds: tuple[str, ...] = ()                     # "host_path:container_path[:ro]"
    published_ports: tuple[PublishedPort, ...] = ()  # a capsule's sandbox (hostPort)
    dns: DnsConfig | None = None                    # a capsule's sandbox (dnsConfig)

    @property
    def name(self) -> str:
        return f"{NAME_PREFIX}{self.uuid}"


class RunState(enum.StrEnum):
    """The engine's own word for a container's state."""

    CREATED = "created"
    RUNNING = "running"
    PAUSED = "paused"
    RESTARTING = "restarting"
    REMOVING = "removing"
    EXITED = "exited"
    DEAD = "dead"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class ContainerState:
    """The engine's ``State`` object, typed. Times are aware UTC datetimes, or None
    for the engine's zero time (never started / never finished)."""

    status: RunState
    running: bool = False
    paused: bool = False
    restarting: bool = False
    dead: bool = False
    oom_killed: bool = False
    exit_code: int | None = None
    error: str = ""
    pid: int = 0
    started_at: dt.datetime | None = None
    finished_at: dt.datetime | None = None


@dataclass(frozen=True, slots=True)
class RuntimeContainer:
    """What inspect tells about one container."""

    id: str
    name: str
    uuid: str | None                  # from LABEL_UUID, None for containers berth did not make
    image: str
    state: ContainerState | None      # None when the engine gave no state at all
    hostname: str | None = None
    ports: tuple[int, ...] = ()       # exposed ports (Config.ExposedPorts), as ints
    runtime: str | None = None
    command: tuple[str, ...] | None = None
    entrypoint: tuple[str, ...] | None = None
    labels: dict[str, str] = field(default_factory=dict)
    #: Limits the engine applies (inspect only; None from a listing, or when unset).
    memory_mib: int | None = None
    cpu_shares: int | None = None


class EventKind(enum.StrEnum):
    STARTED = "started"
    DIED = "died"            # exited, killed, OOM: the process is gone
    PAUSED = "paused"
    UNPAUSED = "unpaused"
    REMOVED = "removed"
    CHANGED = "changed"      # anything else worth a re-inspect (rename, update, health, ...)


@dataclass(frozen=True, slots=True)
class RuntimeEvent:
    """One container event from the engine's event stream."""

    container_id: str
    uuid: str | None
    kind: EventKind
    action: str                # the engine's own action word ("die", "oom", ...)
    at: dt.datetime            # when the engine says it happened (aware UTC)
    at_nano: int               # the same, as the engine's timeNano (for resuming with since=)
    #: A "die": the process's exit code, as the engine's event gives it (None for
    #: other actions, or when the event carries none).
    exit_code: int | None = None


class RuntimeEventStream(Iterator[RuntimeEvent], Protocol):
    """An open event stream: iterate it in one thread; ``close()`` may be called from
    any other thread (safe twice) and makes a blocked iteration end."""

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class HostInfo:
    """What the engine reports about the node (for the compute_node record)."""

    cpus: int
    mem_total_mib: int
    architecture: str
    os_type: str
    os: str
    kernel_version: str
    labels: dict[str, str]
    runtimes: tuple[str, ...]
    total_containers: int
    running_containers: int
    paused_containers: int
    stopped_containers: int
    docker_root_dir: str
    storage_driver: str
    #: The filesystem under the storage driver (Docker's "Backing Filesystem").
    backing_filesystem: str = ""

    @property
    def supports_rootfs_size(self) -> bool:
        """Whether the engine can limit a container's root filesystem (``StorageOpt
        size``): devicemapper, btrfs and zfs can, overlay2 only over xfs (mounted with
        project quotas, which the engine does not report: a create then fails)."""
        driver = self.storage_driver
        return driver in ("devicemapper", "btrfs", "zfs") or (
            driver == "overlay2" and self.backing_filesystem == "xfs")


@dataclass(frozen=True, slots=True)
class ExecResult:
    output: str
    exit_code: int | None


@dataclass(frozen=True, slots=True)
class ImageSearchResult:
    """One hit of a registry index search (``docker search``)."""

    name: str
    description: str = ""
    is_official: bool = False
    is_automated: bool = False
    star_count: int = 0


class Runtime(Protocol):
    """A container engine on one node.

    Every method is thread-safe and may be called from several worker threads at once.
    Idempotence is stated per method. Every engine failure is raised as a
    :class:`RuntimeDriverError` subclass.
    """

    def ping(self) -> None:
        """Return when the engine answers; :class:`RuntimeUnavailable` otherwise."""

    def info(self) -> HostInfo:
        """The node's resources and engine facts."""

    def inspect_image(self, ref: str) -> ImageInfo:
        """The local image ``ref`` (``repo:tag`` or id); :class:`RuntimeImageNotFound` if absent."""

    def pull_image(
        self,
        image: ImageRef,
        auth: RegistryAuth | None = None,
        progress: Callable[[PullProgress], None] | None = None,
    ) -> ImageInfo:
        """Pull ``image`` and return the local image. ``progress`` is called now and then
        (not for every chunk). :class:`RuntimeImageNotFound` when the registry has no such
        repository or tag; :class:`RuntimeImagePullFailed` for anything else. Idempotent."""

    def image_exists_in_registry(self, image: ImageRef, auth: RegistryAuth | None = None) -> bool | None:
        """Ask the image's registry whether it has ``image`` without pulling it: True, False,
        or None when the registry cannot be asked (unreachable, auth failure)."""

    def import_image(self, ref: str, rootfs_tar: bytes, command: tuple[str, ...],
                     labels: dict[str, str]) -> None:
        """Make the local image ``ref`` of the files in ``rootfs_tar`` (no registry),
        with ``command`` as its default command and ``labels``. Idempotent."""

    def create(self, spec: ContainerSpec) -> str:
        """Create (do not start) the container; return the engine's id. The image must be
        present. Not idempotent: a second call with the same uuid raises RuntimeConflict."""

    def start(self, container_id: str) -> None:
        """Start it. Starting a running container is a no-op."""

    def stop(self, container_id: str, timeout: int | None = None) -> None:
        """Stop it (SIGTERM, then SIGKILL after ``timeout`` s, engine default when None).
        Stopping a stopped container is a no-op."""

    def delete(self, container_id: str, force: bool = False) -> None:
        """Remove it (``force`` kills it first). A missing container is a no-op."""

    def inspect(self, container_id: str) -> RuntimeContainer:
        """Inspect by id or name; :class:`RuntimeNotFound` when it does not exist."""

    def list(self, host: str | None = None) -> list[RuntimeContainer]:
        """All containers (running or not) berth created, optionally only ``host``'s."""

    def events(self, since_nano: int | None = None) -> RuntimeEventStream:
        """Follow the engine's event stream for berth's containers, from ``since_nano``
        (inclusive: that event comes again) or from now. Opening raises
        :class:`RuntimeUnavailable` when the engine cannot be reached. The iterator ends
        (without raising) when the stream breaks or ``close()`` is called from another
        thread; the caller relists and reconnects with ``since_nano`` = the last
        event's ``at_nano``."""

    # --- actions: restart, pause, unpause, kill, update, rename (issue 3) ---

    def restart(self, container_id: str, timeout: int | None = None) -> None:
        """Stop it (SIGKILL after ``timeout`` s, engine default when None) and start it
        again; a stopped or created container is simply started. Returns once it runs."""

    def pause(self, container_id: str) -> None:
        """Freeze its processes. :class:`RuntimeConflict` when it is not running or is
        already paused. Not idempotent."""

    def unpause(self, container_id: str) -> None:
        """Thaw its processes. :class:`RuntimeConflict` when it is not paused."""

    def kill(self, container_id: str, signal: str | None = None) -> None:
        """Send ``signal`` (a name such as ``SIGTERM`` or a number as text; None: the
        engine's default, SIGKILL) to its main process. Returns once the signal is sent,
        not when the process has reacted: inspect to learn the outcome.
        :class:`RuntimeConflict` when it is not running; :class:`RuntimeInvalid` for a
        signal the engine does not know."""

    def update(self, container_id: str, *, memory_mib: int | None = None,
               memory_swap_mib: int | None = None, cpu_shares: int | None = None) -> None:
        """Change its resource limits in place (running or not); None leaves a limit as
        it is. ``memory_swap_mib`` -1 means unlimited swap. Idempotent."""

    # --- inspection: logs, top, stats, archives, commit (issue 3) ---

    def logs(self, container_id: str, *, stdout: bool = True, stderr: bool = True,
             timestamps: bool = False, tail: int | None = None,
             since: float | None = None) -> str:
        """The container's output so far (not following): ``tail`` last lines (None = all),
        only lines written at or after ``since`` (epoch seconds) when given, each prefixed
        with the engine's RFC 3339 time when ``timestamps``. stdout and stderr are
        interleaved as written; bytes that are not UTF-8 become U+FFFD. Read-only."""

    def top(self, container_id: str, ps_args: str | None = None) -> ProcessTable:
        """``ps`` (with ``ps_args``) over the container's processes. It must be running
        (:class:`RuntimeConflict`); ``ps_args`` that ``ps`` refuses raise
        :class:`RuntimeDriverError` with ``ps``'s message. Read-only."""

    def stats(self, container_id: str) -> StatsSample:
        """One resource reading with the previous CPU reading (the engine takes about a
        second to get both). Read-only."""

    def get_archive(self, container_id: str, path: str) -> Archive:
        """A tar of ``path`` (file or directory) in the container and its stat; the whole
        archive is read into memory. A missing ``path`` raises :class:`RuntimeNotFound`
        as a missing container does: inspect the container to tell them apart."""

    def put_archive(self, container_id: str, path: str, data: bytes) -> None:
        """Extract the tar ``data`` into the existing directory ``path``. A missing
        ``path`` raises :class:`RuntimeNotFound`; a path that is not a directory or data
        that is not a tar raise :class:`RuntimeDriverError` with the engine's words.
        Idempotent for the same data."""

    def commit(self, container_id: str, repository: str, tag: str, pause: bool) -> ImageInfo:
        """Make an image ``repository:tag`` of the container's filesystem and config and
        return it. ``pause`` freezes a running container for the commit's duration (the
        engine unpauses it afterwards, also on failure). Re-committing a tag moves it."""

    # --- console: exec, attach, resize (issue 5) ---

    def exec_create(self, container_id: str, command: Sequence[str], *,
                    interactive: bool = False) -> str:
        """Create (not start) an exec of ``command`` in the running container and return
        its id (64 lowercase hex). stdout and stderr are attached; stdin and a TTY only
        when ``interactive``. :class:`RuntimeConflict` when the container is not running.
        Not idempotent: every call makes a new exec."""

    def exec_run(self, exec_id: str, *, timeout: float) -> ExecResult:
        """Start the created exec ``exec_id`` attached, collect its output (stdout and
        stderr merged, in order, decoded as UTF-8 with replacement) and its exit code.
        Raises the builtin :class:`TimeoutError` when the command has not ended after
        ``timeout`` seconds (the process then goes on in the container, detached)."""

    def exec_resize(self, exec_id: str, height: int, width: int) -> None:
        """Resize the TTY of exec ``exec_id``. :class:`RuntimeNotFound` when the engine
        has no such exec."""

    def resize(self, container_id: str, height: int, width: int) -> None:
        """Resize the TTY of the container's main process."""

    # --- images: remove, search (issue 3) ---

    def remove_image(self, ref: str) -> None:
        """Remove the local image reference ``ref`` (``repo:tag``, or an image id): a
        tag is untagged and the image goes with its last tag, so other tags of the same
        image stay. A missing image is a no-op; :class:`RuntimeConflict` when a
        container still uses it."""

    def load_image(self, tar_path: str) -> tuple[str, ...]:
        """``docker load`` the image tarball at ``tar_path`` (a ``docker save``);
        return the references it loaded (``repo:tag``, or the image id when the
        tarball names none). :class:`RuntimeInvalid` when the file is not an image
        tarball. Idempotent: loading it again changes nothing."""

    def save_image(self, ref: str) -> Iterator[bytes]:
        """``docker save ref``: the image tarball, as chunks read from the engine while
        the caller consumes them. :class:`RuntimeImageNotFound` when absent."""

    def search_images(self, term: str, limit: int = 25) -> tuple[ImageSearchResult, ...]:
        """Search the engine's index (Docker Hub) for ``term``. The engine answers at
        once when the index cannot be reached: :class:`RuntimeDriverError` with its
        text (not :class:`RuntimeUnavailable`, which means the engine itself)."""
