"""inventory_host: report what the node has (Docker info, /proc, the disk) in its
``compute_node`` row, give the resource tracker its capacity, and report the node's
inventory and traits to Placement (when the agent has one).

With an :class:`InventoryMemo` (the agent's timer), a run touches the database only
on change: the row is written when what it reports changed (free memory, which moves
all the time, only at the full runs), the usage published when the capacity changed (the claims
publish it as containers come and go), Placement told when the inventory or the
service's disabled flag changed (the flag as the heartbeat last read it); and all of
it every ``full_every`` seconds whatever changed (something else may have changed the
row or Placement). An idle node's run then costs no statement."""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from berth.compute.claims import Capacity, ResourceTracker
from berth.db import nodes
from berth.db.engine import Database
from berth.placement.base import Placement, PlacementError
from berth.placement.report import find_shared_provider, report_node
from berth.placement.requests import NodeReservations, node_inventories
from berth.runtime.base import Runtime

LOG = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class InventorySettings:
    host: str
    #: The node's reservations and allocation ratios: its capacity for claims, and
    #: its inventory in Placement (rpc-compute.md §4.3).
    reservations: NodeReservations = field(default_factory=NodeReservations)
    reserve_disk_for_image: float = 0.2
    enable_cpu_pinning: bool = False
    #: ``[compute]host_shared_with_nova``: the names Nova's provider of this node may
    #: have (``report.shared_provider_names``); the node reports on that provider and
    #: never creates one. Empty: the node's own provider (``compute_node.rp_uuid``).
    shared_provider_names: tuple[str, ...] = ()
    #: Resource classes whose ``[compute]*_allocation_ratio`` is unset: on a provider
    #: shared with Nova they keep the ratio the provider has (Zun's rule), so that
    #: the two agents do not rewrite each other's; elsewhere the initial_* ratio.
    ratios_unset: frozenset[str] = frozenset()


#: Free memory moves all the time: alone, it is written at the full runs only
#: (host-show reads it; the scheduler does not).
_MEMORY_KEYS = ("mem_free", "mem_available")


@dataclass(slots=True)
class InventoryMemo:
    """What the last runs wrote (see the module docstring)."""

    full_every: float
    clock: Callable[[], float] = time.monotonic
    values: dict[str, Any] | None = None
    rp_uuid: str | None = None
    capacity: Capacity | None = None
    reported: tuple[Any, ...] | None = None
    full_at: float | None = None
    #: The service's disabled flag as the heartbeat read it (None: not known).
    disabled: bool | None = None

    def full_due(self) -> bool:
        return self.full_at is None or self.clock() - self.full_at >= self.full_every

    def same_row(self, values: dict[str, Any]) -> bool:
        """Whether ``values`` say what the row already says (free memory aside)."""
        old = self.values
        if old is None or old.keys() != values.keys():
            return False
        return all(old[k] == values[k] for k in values if k not in _MEMORY_KEYS)


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
                   settings: InventorySettings, placement: Placement | None = None,
                   memo: InventoryMemo | None = None) -> None:
    """One run; with ``memo``, writes only what changed (the module docstring)."""
    full = memo is None or memo.full_due()
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
        # Container counts are berth's own (publish_usage, below), not Docker's
        # totals, which include every container of the engine.
        "disk_total": disk_total_gib(info.docker_root_dir, settings.reserve_disk_for_image),
        "enable_cpu_pinning": settings.enable_cpu_pinning,
        "disk_quota_supported": info.supports_rootfs_size,
    }
    if memo is None or full or not memo.same_row(values):
        rp_uuid = nodes.upsert_compute_node(db, settings.host, values).rp_uuid
        if memo is not None:
            memo.values, memo.rp_uuid = values, rp_uuid
    else:
        rp_uuid = memo.rp_uuid
    r = settings.reservations
    capacity = Capacity.of(info.cpus, mem_total, r.reserved_cpus, r.reserved_memory_mb,
                           r.cpu_allocation_ratio, r.ram_allocation_ratio)
    tracker.set_capacity(capacity)
    if memo is None or full or memo.capacity != capacity:
        tracker.publish_usage()
        if memo is not None:
            memo.capacity = capacity
    if placement is not None:
        if settings.shared_provider_names:
            if full:
                report_to_shared_provider(db, placement, rp_uuid, settings, values)
        elif rp_uuid:
            disabled = memo.disabled if memo is not None else None
            if disabled is None:     # the heartbeat could not say (MariaDB): read it
                disabled = nodes.service_disabled(db, settings.host, nodes.COMPUTE_BINARY)
            key = (rp_uuid, _reported_values(values), disabled)
            if memo is None or full or memo.reported != key:
                ok = report_to_placement(db, placement, rp_uuid, settings, values,
                                         disabled=disabled)
                if memo is not None:
                    memo.reported = key if ok else None
    if memo is not None and full:
        memo.full_at = memo.clock()


def _reported_values(values: dict[str, Any]) -> tuple[int, int, int]:
    """What Placement's inventory is made of."""
    return (int(values["cpus"] or 0), int(values["mem_total"] or 0),
            int(values["disk_total"] or 0))


def report_to_shared_provider(db: Database, placement: Placement, rp_uuid: str | None,
                              settings: InventorySettings, values: dict[str, Any]) -> None:
    """``[compute]host_shared_with_nova``: report on Nova's provider of this node, found
    by name, and make it the node's ``rp_uuid`` (where containers are allocated). When
    Placement has none, say which names were looked for and what to change; create
    nothing (a provider of berth's own under Nova's name would take it from Nova)."""
    names = settings.shared_provider_names
    try:
        found = find_shared_provider(placement, names)
    except PlacementError as err:
        LOG.error("could not look up Nova's resource provider of node %s in Placement: %s",
                  settings.host, err.msg)
        return
    if found is None:
        LOG.error("[compute]host_shared_with_nova is true but Placement has no resource "
                  "provider named %s (Nova's compute node provider, named after its "
                  "hypervisor_hostname): node %s reports no inventory. Start nova-compute "
                  "on this node, set [DEFAULT]host to Nova's hypervisor_hostname, or set "
                  "[compute]host_shared_with_nova = false.",
                  " or ".join(repr(n) for n in names), settings.host)
        return
    if found.uuid != rp_uuid:
        nodes.set_provider(db, settings.host, found.uuid)
        LOG.info("node %s reports to Nova's resource provider %s (%s)%s", settings.host,
                 found.uuid, found.name,
                 f", not {rp_uuid}: containers placed before keep their allocations there"
                 if rp_uuid else "")
    report_to_placement(db, placement, found.uuid, settings, values, create=False,
                        keep_ratios=settings.ratios_unset)


def report_to_placement(db: Database, placement: Placement, rp_uuid: str,
                        settings: InventorySettings, values: dict[str, Any],
                        create: bool = True, keep_ratios: frozenset[str] = frozenset(),
                        disabled: bool | None = None) -> bool:
    """Push the node's inventory and traits (CUSTOM_ZUN_COMPUTE_STATUS_DISABLED while
    its zun-compute service is disabled; ``disabled``: as already read, else read
    here) to Placement; writes only what changed. The classes of ``keep_ratios``
    keep the allocation ratio the provider has. A Placement failure is logged, not
    raised (False): the compute_node row is already right and the next run tries
    again."""
    if disabled is None:
        disabled = nodes.service_disabled(db, settings.host, nodes.COMPUTE_BINARY)
    inventories = node_inventories(
        int(values["cpus"] or 0), int(values["mem_total"] or 0), int(values["disk_total"] or 0),
        settings.reservations)
    try:
        if keep_ratios:
            current = placement.get_inventory(rp_uuid)
            inventories = {rc: (replace(inv, allocation_ratio=current[rc].allocation_ratio)
                                if rc in keep_ratios and rc in current else inv)
                           for rc, inv in inventories.items()}
        report_node(placement, rp_uuid, settings.host, inventories, disabled, create=create)
    except PlacementError as err:
        LOG.error("could not report node %s to Placement (provider %s): %s", settings.host,
                  rp_uuid, err.msg)
        return False
    return True
