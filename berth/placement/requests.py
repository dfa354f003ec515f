"""What berth asks of Placement: a container's resource amounts and a node's
inventory and traits (rpc-compute.md §4.1 step 4 and §4.3). Pure functions."""

from __future__ import annotations

import math
from dataclasses import dataclass

from berth.common.units import memory_mib
from berth.placement.base import (
    DISK_GB,
    MEMORY_MB,
    TRAIT_COMPUTE_STATUS_DISABLED,
    VCPU,
    Inventory,
)


def vcpus_of(cpu: float | None) -> int:
    """The VCPUs a container of ``cpu`` cores holds in Placement: whole ones, at least
    one (rpc-compute.md §4.1, step 4)."""
    return max(1, math.ceil(cpu or 0))


def container_resources(cpu: float | None, memory: str | int | None,
                        disk: int | None) -> dict[str, int]:
    """The allocation of one container: ``VCPU = max(1, ceil(cpu))``, ``MEMORY_MB =
    memory`` when set, ``DISK_GB = disk`` when set and non-zero. (``memory`` is the
    row's string of MiB, as Zun stores it.)"""
    out = {VCPU: vcpus_of(cpu)}
    mem = memory_mib(memory)
    if mem > 0:
        out[MEMORY_MB] = mem
    if disk:
        out[DISK_GB] = int(disk)
    return out


@dataclass(frozen=True, slots=True)
class NodeReservations:
    """The ``[compute]`` figures that shape a node's inventory (ratios already
    resolved: configured value, else the initial one)."""

    reserved_cpus: int = 0
    reserved_memory_mb: int = 512
    reserved_disk_mb: int = 0
    cpu_allocation_ratio: float = 16.0
    ram_allocation_ratio: float = 1.5
    disk_allocation_ratio: float = 1.0


def unset_ratios(cpu: float | None, ram: float | None, disk: float | None) -> frozenset[str]:
    """The classes whose ``[compute]*_allocation_ratio`` is unset (None)."""
    return frozenset(rc for rc, ratio in ((VCPU, cpu), (MEMORY_MB, ram), (DISK_GB, disk))
                     if ratio is None)


def _inventory(total: int, reserved: int, ratio: float) -> Inventory:
    # Placement refuses reserved > total; a tiny test node can have less memory than
    # the default reservation, and then offers nothing rather than failing the report.
    return Inventory(total=total, reserved=min(max(reserved, 0), total), min_unit=1,
                     max_unit=total, step_size=1, allocation_ratio=ratio)


def node_inventories(cpus: int, mem_total_mb: int, disk_total_gb: int,
                     r: NodeReservations) -> dict[str, Inventory]:
    """The node's inventory (rpc-compute.md §4.3). A class whose total is 0 (the disk
    could not be measured, say) is left out: Placement accepts no empty inventory."""
    out: dict[str, Inventory] = {}
    if cpus > 0:
        out[VCPU] = _inventory(cpus, r.reserved_cpus, r.cpu_allocation_ratio)
    if mem_total_mb > 0:
        out[MEMORY_MB] = _inventory(mem_total_mb, r.reserved_memory_mb, r.ram_allocation_ratio)
    if disk_total_gb > 0:
        out[DISK_GB] = _inventory(disk_total_gb, math.ceil(r.reserved_disk_mb / 1024),
                                  r.disk_allocation_ratio)
    return out


def node_traits(service_disabled: bool) -> frozenset[str]:
    """Traits berth manages on a node's provider."""
    return frozenset({TRAIT_COMPUTE_STATUS_DISABLED}) if service_disabled else frozenset()
