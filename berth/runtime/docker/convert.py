"""Pure conversions between Docker's JSON and berth's runtime dataclasses.

No I/O here: every function takes the dict the engine answered (``docker inspect``,
``docker ps``, ``docker info``, ``docker image inspect``) or a :class:`ContainerSpec`,
and returns plain values, so they are unit-tested with canned dicts.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping
from typing import Any

from berth.runtime.base import (
    LABEL_HOST,
    LABEL_UUID,
    ContainerSpec,
    ContainerState,
    HostInfo,
    ImageInfo,
    RunState,
    RuntimeContainer,
    uuid_of,
)

_NANO = 1_000_000_000
_MIB = 1024 * 1024
#: "Exited (137) 2 seconds ago" in ``docker ps``'s Status column.
_EXITED_RE = re.compile(r"^Exited \((-?\d+)\)")


# -- small parsers ------------------------------------------------------------------


def parse_time(value: str | None) -> dt.datetime | None:
    """Docker's RFC 3339 time (nanoseconds allowed) as an aware UTC datetime; None for
    an empty value or Docker's zero time ``0001-01-01T00:00:00Z`` (never happened)."""
    if not value:
        return None
    try:
        parsed = dt.datetime.fromisoformat(value)
    except ValueError:
        # Older Pythons and odd engines: cut the fraction to microseconds and retry.
        parsed = dt.datetime.fromisoformat(re.sub(r"(\.\d{6})\d+", r"\1", value))
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.UTC)
    if parsed.year <= 1:
        return None
    return parsed.astimezone(dt.UTC)


def from_nano(nanos: int) -> dt.datetime:
    """An engine ``timeNano`` as an aware UTC datetime (microsecond precision)."""
    seconds, rest = divmod(nanos, _NANO)
    base = dt.datetime.fromtimestamp(seconds, tz=dt.UTC)
    return base + dt.timedelta(microseconds=rest // 1000)


def str_tuple(value: Any) -> tuple[str, ...] | None:
    """``Cmd``/``Entrypoint`` as a tuple: None stays None, a bare string is one item."""
    if value is None:
        return None
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value)


def port_numbers(specs: Iterable[str]) -> tuple[int, ...]:
    """``{"80/tcp", "53/udp", "53/tcp"}`` -> ``(53, 80)``: sorted, unique port numbers."""
    ports = set()
    for spec in specs:
        number = str(spec).split("/", 1)[0]
        if number.isdigit():
            ports.add(int(number))
    return tuple(sorted(ports))


def port_tuple(spec: str) -> tuple[int, str]:
    """``"80/tcp"`` -> ``(80, "tcp")``; a bare ``"80"`` is tcp. ValueError if malformed."""
    number, _, proto = spec.partition("/")
    return int(number), (proto or "tcp").lower()


def run_state(value: str | None) -> RunState:
    """The engine's status word as a :class:`RunState` (UNKNOWN for anything new)."""
    try:
        return RunState((value or "").lower())
    except ValueError:
        return RunState.UNKNOWN


# -- containers ---------------------------------------------------------------------


def state_from_inspect(state: Mapping[str, Any] | None) -> ContainerState | None:
    """``docker inspect``'s ``State`` object, typed. ``exit_code`` is None while the
    container has never finished (Docker reports 0 for "never ran" too), unless the
    engine set a non-zero code anyway (a start that failed)."""
    if not state:
        return None
    finished = parse_time(state.get("FinishedAt"))
    status = run_state(state.get("Status"))
    exit_code = state.get("ExitCode")
    if finished is None and not exit_code:
        exit_code = None
    return ContainerState(
        status=status,
        running=bool(state.get("Running")),
        paused=bool(state.get("Paused")),
        restarting=bool(state.get("Restarting")),
        dead=bool(state.get("Dead")),
        oom_killed=bool(state.get("OOMKilled")),
        exit_code=int(exit_code) if exit_code is not None else None,
        error=state.get("Error") or "",
        pid=int(state.get("Pid") or 0),
        started_at=parse_time(state.get("StartedAt")),
        finished_at=parse_time(state.get("FinishedAt")),
    )


def container_from_inspect(data: Mapping[str, Any]) -> RuntimeContainer:
    """One ``docker inspect`` answer as a :class:`RuntimeContainer`."""
    config = data.get("Config") or {}
    host_config = data.get("HostConfig") or {}
    labels = dict(config.get("Labels") or {})
    return RuntimeContainer(
        id=data["Id"],
        name=str(data.get("Name") or "").lstrip("/"),
        uuid=uuid_of(labels, str(data.get("Name") or "")),
        image=config.get("Image") or data.get("Image") or "",
        state=state_from_inspect(data.get("State")),
        hostname=config.get("Hostname") or None,
        ports=port_numbers((config.get("ExposedPorts") or {}).keys()),
        runtime=host_config.get("Runtime") or None,
        command=str_tuple(config.get("Cmd")),
        entrypoint=str_tuple(config.get("Entrypoint")),
        labels=labels,
        memory_mib=int(host_config.get("Memory") or 0) // _MIB or None,
        cpu_shares=int(host_config.get("CpuShares") or 0) or None,
    )


def state_from_list(entry: Mapping[str, Any]) -> ContainerState:
    """The state ``docker ps`` tells: the status word and, for exited containers, the exit
    code parsed from the Status column. Times, pid, OOMKilled and Error are not in the
    list and stay at their defaults; inspect the container when they matter."""
    status = run_state(entry.get("State"))
    match = _EXITED_RE.match(entry.get("Status") or "")
    return ContainerState(
        status=status,
        running=status is RunState.RUNNING,
        paused=status is RunState.PAUSED,
        restarting=status is RunState.RESTARTING,
        dead=status is RunState.DEAD,
        exit_code=int(match.group(1)) if match else None,
    )


def container_from_list(entry: Mapping[str, Any]) -> RuntimeContainer:
    """One ``docker ps --all`` entry as a :class:`RuntimeContainer`: no hostname, runtime,
    command or entrypoint (the list does not carry them), a partial state
    (:func:`state_from_list`), ports from the entry's ``Ports``."""
    labels = dict(entry.get("Labels") or {})
    names = entry.get("Names") or []
    ports = [f"{p.get('PrivatePort')}/{p.get('Type', 'tcp')}" for p in entry.get("Ports") or []]
    return RuntimeContainer(
        id=entry["Id"],
        name=str(names[0]).lstrip("/") if names else "",
        uuid=uuid_of(labels, str(names[0]) if names else ""),
        image=entry.get("Image") or "",
        state=state_from_list(entry),
        ports=port_numbers(ports),
        labels=labels,
    )


# -- images and host ------------------------------------------------------------------


def image_from_inspect(data: Mapping[str, Any]) -> ImageInfo:
    """One ``docker image inspect`` answer as an :class:`ImageInfo`."""
    config = data.get("Config") or {}
    return ImageInfo(
        id=data["Id"],
        repo_tags=tuple(data.get("RepoTags") or ()),
        size=int(data.get("Size") or 0),
        cmd=str_tuple(config.get("Cmd")),
        entrypoint=str_tuple(config.get("Entrypoint")),
    )


def labels_from_info(labels: Iterable[str] | Mapping[str, str] | None) -> dict[str, str]:
    """The engine's labels (``["k=v", ...]``) as a dict; a label without ``=`` maps to ""."""
    if not labels:
        return {}
    if isinstance(labels, Mapping):
        return {str(k): str(v) for k, v in labels.items()}
    pairs = (str(item).partition("=") for item in labels)
    return {key: value for key, _, value in pairs}


def host_from_info(data: Mapping[str, Any]) -> HostInfo:
    """``docker info`` as :class:`HostInfo` (memory in MiB, rounded down)."""
    return HostInfo(
        cpus=int(data.get("NCPU") or 0),
        mem_total_mib=int(data.get("MemTotal") or 0) // _MIB,
        architecture=data.get("Architecture") or "",
        os_type=data.get("OSType") or "",
        os=data.get("OperatingSystem") or "",
        kernel_version=data.get("KernelVersion") or "",
        labels=labels_from_info(data.get("Labels")),
        runtimes=tuple(sorted((data.get("Runtimes") or {}).keys())) or ("runc",),
        total_containers=int(data.get("Containers") or 0),
        running_containers=int(data.get("ContainersRunning") or 0),
        paused_containers=int(data.get("ContainersPaused") or 0),
        stopped_containers=int(data.get("ContainersStopped") or 0),
        docker_root_dir=data.get("DockerRootDir") or "",
        storage_driver=data.get("Driver") or "",
        backing_filesystem=dict(tuple(pair) for pair in data.get("DriverStatus") or []
                                 if len(pair) == 2).get("Backing Filesystem", ""),
    )


# -- create -------------------------------------------------------------------------------


def host_config_kwargs(spec: ContainerSpec) -> dict[str, Any]:
    """Keyword arguments for ``APIClient.create_host_config`` (behaviours.md §2.1).
    Only what the spec sets is sent, so Docker's defaults apply to the rest; swap is
    never set at create (Docker's default, as Zun)."""
    kwargs: dict[str, Any] = {}
    if spec.memory_mib:
        kwargs["mem_limit"] = f"{spec.memory_mib}M"
    if spec.cpu_shares:
        kwargs["cpu_shares"] = int(spec.cpu_shares)
    if spec.restart_policy:
        policy = spec.restart_policy
        kwargs["restart_policy"] = {
            "Name": str(policy.get("Name") or ""),
            "MaximumRetryCount": int(str(policy.get("MaximumRetryCount") or 0)),
        }
    if spec.auto_remove:
        kwargs["auto_remove"] = True
    if spec.privileged:
        kwargs["privileged"] = True
    if spec.runtime:
        kwargs["runtime"] = spec.runtime
    if spec.disk_gib:
        kwargs["storage_opt"] = {"size": f"{spec.disk_gib}G"}
    if spec.cpuset_cpus:
        kwargs["cpuset_cpus"] = spec.cpuset_cpus
    if spec.cpuset_mems:
        kwargs["cpuset_mems"] = spec.cpuset_mems
    if spec.network_mode:
        kwargs["network_mode"] = spec.network_mode
    if spec.ipc_mode:
        kwargs["ipc_mode"] = spec.ipc_mode
    if spec.binds:
        kwargs["binds"] = list(spec.binds)
    if spec.published_ports:
        kwargs["port_bindings"] = {f"{p.container_port}/{p.protocol}": p.host_port
                                   for p in spec.published_ports}
    if spec.dns is not None:
        if spec.dns.servers:
            kwargs["dns"] = list(spec.dns.servers)
        if spec.dns.searches:
            kwargs["dns_search"] = list(spec.dns.searches)
        if spec.dns.options:
            kwargs["dns_opt"] = list(spec.dns.options)
    return kwargs


def create_kwargs(spec: ContainerSpec) -> dict[str, Any]:
    """Keyword arguments for ``APIClient.create_container`` except ``host_config``.
    berth's labels (uuid, host) are added to the user's and win over them."""
    labels = {**spec.labels, LABEL_UUID: spec.uuid, LABEL_HOST: spec.host}
    kwargs: dict[str, Any] = {
        "image": spec.image,
        "name": spec.name,
        "labels": labels,
        "tty": spec.tty,
        "stdin_open": spec.interactive,
        # The SDK would otherwise copy proxy settings from ~/.docker/config.json into Env.
        "use_config_proxy": False,
    }
    if spec.command is not None:
        kwargs["command"] = list(spec.command)
    if spec.entrypoint is not None:
        kwargs["entrypoint"] = list(spec.entrypoint)
    if spec.environment:
        kwargs["environment"] = dict(spec.environment)
    if spec.workdir:
        kwargs["working_dir"] = spec.workdir
    if spec.hostname:
        kwargs["hostname"] = spec.hostname
    if spec.exposed_ports:
        kwargs["ports"] = [port_tuple(p) for p in spec.exposed_ports]
    if spec.endpoint is not None and spec.endpoint.mac:
        kwargs["mac_address"] = spec.endpoint.mac
    if spec.healthcheck is not None:
        check = spec.healthcheck
        kwargs["healthcheck"] = {
            "Test": ["CMD-SHELL", check.test],
            "Interval": int(check.interval or 0) * _NANO,
            "Timeout": int(check.timeout or 0) * _NANO,
            "Retries": int(check.retries or 0),
        }
    return kwargs
