"""What berth asks the engine to create for a container row: ``build_spec`` (the
``ContainerSpec`` of a container, of a Docker capsule's member, of a CRI member) and
``cpu_shares_of`` (create and resize give Docker the same shares)."""

from __future__ import annotations

from berth.common.units import memory_mib
from berth.compute.deps import AgentDeps
from berth.db.models import Container
from berth.runtime import base as rt


def cpu_shares_of(cpu: float | None) -> int | None:
    """The CPU shares berth gives Docker for ``cpu`` cores (create and resize alike)."""
    return max(2, int(1024 * cpu)) if cpu else None


def build_spec(deps: AgentDeps, row: Container, image: tuple[rt.ImageRef, rt.ImageInfo],
               binds: tuple[str, ...] = ()) -> rt.ContainerSpec:
    ref, _info = image
    command = row.command if row.command is not None else None
    entrypoint = row.entrypoint if row.entrypoint is not None else None
    restart = None
    if row.restart_policy:
        restart = {"Name": row.restart_policy.get("Name", "no"),
                   "MaximumRetryCount": int(row.restart_policy.get("MaximumRetryCount") or 0)}
    health = None
    if row.healthcheck and row.healthcheck.get("test"):
        hc = row.healthcheck
        health = rt.HealthcheckSpec(test=str(hc["test"]), interval=int(hc.get("interval") or 0),
                                    timeout=int(hc.get("timeout") or 0),
                                    retries=int(hc.get("retries") or 0))
    memory = memory_mib(row.memory) or None
    network_mode, endpoint = (deps.networks.engine_networking(row) if deps.networks
                              else (None, None))
    return rt.ContainerSpec(
        uuid=row.uuid, host=deps.host, image=ref.ref,
        command=tuple(command) if command is not None else None,
        entrypoint=tuple(entrypoint) if entrypoint is not None else None,
        environment=dict(row.environment or {}), workdir=row.workdir,
        labels={str(k): str(v) for k, v in (row.labels or {}).items()},
        hostname=row.hostname, memory_mib=memory,
        cpu_shares=cpu_shares_of(row.cpu),
        restart_policy=restart, tty=bool(row.tty), interactive=bool(row.interactive),
        auto_remove=bool(row.auto_remove), privileged=bool(row.privileged),
        runtime=row.runtime or None, exposed_ports=tuple(sorted(row.exposed_ports or {})),
        healthcheck=health, disk_gib=row.disk,
        network_mode=network_mode, endpoint=endpoint,
        binds=binds,
    )
