"""inventory_host: report what the node has (Docker info, /proc, the disk) in its
``compute_node`` row, and give the resource tracker its capacity."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

from berth.compute.claims import Capacity, ResourceTracker
from berth.db import nodes
from berth.db.engine import Database
from berth.runtime.base import Runtime

LOG = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class InventorySettings:
    host: str
    reserved_cpus: int = 0
    reserved_memory_mib: int = 512
    cpu_allocation_ratio: float = 16.0
    ram_allocation_ratio: float = 1.5
    reserve_disk_for_image: float = 0.2
    enable_cpu_pinning: bool = False


def read_meminfo(path: str = "/proc/meminfo") -> dict[str, int]:
    """/proc/meminfo in MiB: {"MemTotal": ..., "MemFree": ..., "MemAvailable": ...}."""
    out: dict[str, int] = {}
    try:
        with open(path) as fh:
            for line in fh:
                key, _, rest = line.partition(":")
                parts = rest.split()
                if parts and parts[0].isdigit():
                    out[key] = int(parts[0]) // 1024
    except OSError:
        pass
    return out


def disk_total_gib(path: str, reserve_fraction: float) -> int:
    try:
        st = os.statvfs(path)
    except OSError:
        return 0
    total = st.f_blocks * st.f_frsize / 2**30
    return int(total * (1 - reserve_fraction))


def inventory_host(db: Database, runtime: Runtime, tracker: ResourceTracker,
                   settings: InventorySettings) -> None:
    info = runtime.info()
    mem = read_meminfo()
    mem_total = mem.get("MemTotal") or info.mem_total_mib
    values = {
        "cpus": info.cpus,
        "mem_total": mem_total,
        "mem_free": mem.get("MemFree", 0),
        "mem_available": mem.get("MemAvailable", 0),
        "architecture": info.architecture,
        "os_type": info.os_type,
        "os": info.os,
        "kernel_version": info.kernel_version,
        "labels": info.labels,
        "runtimes": list(info.runtimes),
        "total_containers": info.total_containers,
        "paused_containers": info.paused_containers,
        "stopped_containers": info.stopped_containers,
        "disk_total": disk_total_gib(info.docker_root_dir, settings.reserve_disk_for_image),
        "enable_cpu_pinning": settings.enable_cpu_pinning,
        "disk_quota_supported": False,
    }
    nodes.upsert_compute_node(db, settings.host, values)
    tracker.set_capacity(Capacity.of(
        info.cpus, mem_total, settings.reserved_cpus, settings.reserved_memory_mib,
        settings.cpu_allocation_ratio, settings.ram_allocation_ratio))
    tracker.publish_usage()
