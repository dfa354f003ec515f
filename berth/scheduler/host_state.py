"""Building HostStates from the database: compute_node and the inventory the node
reported to the embedded Placement (capacity), zun_service
(liveness, zone) and the containers placed on each node (usage, counted live so
that containers being created already count)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from sqlalchemy import Connection, bindparam, func, select

from berth.common.units import memory_mib
from berth.db import nodes
from berth.db.base import utcnow
from berth.db.containers import NOT_HOLDING
from berth.db.engine import Database
from berth.db.models import ComputeNode, Container, ZunService
from berth.db.placement_models import ProviderInventory, ResourceProvider
from berth.placement.base import DISK_GB, MEMORY_MB, VCPU, Inventory
from berth.placement.requests import NodeReservations, node_inventories, vcpus_of
from berth.scheduler.base import HostState

# Every create schedules: the three reads are built once, and read plain columns
# (building them and the ORM objects of every node and service cost more than the SQL).
# Grouped by size in the database: one row per host and container size rather than
# one per container, so the read stays the size of the fleet, not of what it holds
# (bench P15: a fleet filling to 20,000 containers made every create read them all).
_USAGE = (select(Container.host, Container.cpu, Container.memory, Container.disk,
                 func.count().label("n"))
          .where(Container.host.is_not(None), Container.status.not_in(NOT_HOLDING),
                 Container.container_type.in_((0, 1)))
          .group_by(Container.host, Container.cpu, Container.memory, Container.disk))
_SERVICES = (select(ZunService.host, ZunService.availability_zone, ZunService.disabled,
                    ZunService.disabled_reason, ZunService.forced_down,
                    ZunService.last_seen_up, ZunService.updated_at, ZunService.created_at)
             .where(ZunService.binary == nodes.COMPUTE_BINARY).order_by(ZunService.id))
_NODES = (select(ComputeNode.uuid, ComputeNode.hostname, ComputeNode.cpus, ComputeNode.mem_total,
                 ComputeNode.disk_total, ComputeNode.runtimes, ComputeNode.labels,
                 ComputeNode.rp_uuid, ComputeNode.disk_quota_supported)
          .order_by(ComputeNode.uuid))
# What each node reported to the embedded Placement: its own reservations and ratios
# (an agent's [compute] options, which the API's need not repeat). Empty with
# [placement]driver = openstack: then the API's own options stand in for them.
_INVENTORIES = (
    select(ResourceProvider.uuid, ProviderInventory.resource_class, ProviderInventory.total,
           ProviderInventory.reserved, ProviderInventory.min_unit, ProviderInventory.max_unit,
           ProviderInventory.step_size, ProviderInventory.allocation_ratio)
    .join(ProviderInventory, ProviderInventory.resource_provider_id == ResourceProvider.id)
    .where(ProviderInventory.resource_class.in_((VCPU, MEMORY_MB, DISK_GB))))




class _Usage(NamedTuple):
    cpu: float = 0.0
    memory_mib: int = 0
    vcpus: int = 0          # whole VCPUs, as Placement counts them
    disk_gb: int = 0


def _usage_by_host(rows: Iterable[Any]) -> dict[str, _Usage]:
    """What the containers placed on each host hold, from rows of ``_USAGE`` (``n``
    containers of each size)."""
    usage: dict[str, _Usage] = {}
    for host, cpu, memory, disk, n in rows:
        if host is None:        # excluded by the query; for the type checker
            continue
        u = usage.get(host, _Usage())
        usage[host] = _Usage(u.cpu + (cpu or 0.0) * n, u.memory_mib + memory_mib(memory) * n,
                             u.vcpus + vcpus_of(cpu) * n, u.disk_gb + int(disk or 0) * n)
    return usage


def _reported(rows: Iterable[Any]) -> dict[tuple[str, str], Inventory]:
    """(provider uuid, resource class) -> its inventory, from rows of ``_INVENTORIES``;
    one Inventory (frozen) for each distinct set of figures, which a fleet's nodes
    mostly share: at 1,000 nodes, building one per row was a third of a read's CPU."""
    made: dict[tuple[Any, ...], Inventory] = {}
    out: dict[tuple[str, str], Inventory] = {}
    for row in rows:
        figures = tuple(row[2:])
        inventory = made.get(figures)
        if inventory is None:
            inventory = made[figures] = Inventory.of_row(row)
        out[(row[0], row[1])] = inventory
    return out


def load_host_states(db: Database, api_options: NodeReservations, down_time: int,
                     default_zone: str,
                     reported_elsewhere: Callable[[str], Mapping[str, Inventory]] | None
                     = None) -> Sequence[HostState]:
    """``api_options``: the API's own ``[compute]`` reservations and ratios, which
    stand in for a node that reported no inventory. ``reported_elsewhere(rp_uuid)``:
    the inventory a node reported to OpenStack Placement (``placement_inventories``),
    asked for a node whose inventory is not in the database."""
    # One read for the four.
    with db.reader() as s:
        services = {svc.host: svc for svc in s.execute(_SERVICES)}
        usage = _usage_by_host(s.execute(_USAGE))
        compute_nodes = list(s.execute(_NODES))
        reported = _reported(s.execute(_INVENTORIES))
    # For a node that reported nothing: the inventory it would report under the API's
    # options (the agent's own arithmetic, berth.placement.requests).
    out = []
    now, nothing = utcnow(), _Usage()
    for node in compute_nodes:
        svc = services.get(node.hostname)
        used = usage.get(node.hostname, nothing)
        rp = node.rp_uuid
        if reported_elsewhere is not None and rp and (rp, VCPU) not in reported \
                and (rp, MEMORY_MB) not in reported:
            for rc, inv in reported_elsewhere(rp).items():
                reported[(rp, rc)] = inv
        vcpu, memory, disk = (reported.get((rp, VCPU)), reported.get((rp, MEMORY_MB)),
                              reported.get((rp, DISK_GB)))
        if vcpu is None or memory is None or disk is None:
            assumed = node_inventories(node.cpus or 0, node.mem_total or 0,
                                       node.disk_total or 0, api_options)
            vcpu, memory, disk = (found or assumed.get(rc) for found, rc in (
                (vcpu, VCPU), (memory, MEMORY_MB), (disk, DISK_GB)))
        out.append(HostState(
            hostname=node.hostname,
            cpus=vcpu.capacity if vcpu else 0.0,
            memory_mib=int(memory.capacity) if memory else 0,
            cpu_used=used.cpu, memory_used_mib=used.memory_mib,
            runtimes=tuple(node.runtimes or ("runc",)),
            availability_zone=(svc.availability_zone if svc else None) or default_zone,
            service_up=svc is not None and nodes.service_is_up(svc, down_time, now),
            service_disabled=bool(svc and svc.disabled),
            disabled_reason=svc.disabled_reason if svc else None,
            cores=vcpu.largest_unit if vcpu else 0, vcpus_used=used.vcpus,
            node_uuid=node.uuid, provider_uuid=rp or node.uuid,
            memory_max_unit=memory.largest_unit if memory else 0,
            disk_gb=disk.capacity if disk else 0.0, disk_used_gb=used.disk_gb,
            disk_max_unit=disk.largest_unit if disk else 0,
            disk_quota_supported=bool(node.disk_quota_supported),
            labels={str(k): str(v) for k, v in (node.labels or {}).items()},
        ))
    return out


_USAGE_ON_HOSTS = _USAGE.where(Container.host.in_(bindparam("hosts", expanding=True)))


def usages_now(conn: Connection, hosts: Sequence[HostState]) -> list[HostState]:
    """``hosts`` with their usage read again, on ``conn`` (inside the caller's
    transaction), in one query: the capacity as it was, the containers placed there as
    they are."""
    used = _usage_by_host(conn.execute(_USAGE_ON_HOSTS,
                                       {"hosts": [h.hostname for h in hosts]}))
    out = []
    for h in hosts:
        u = used.get(h.hostname, _Usage())
        out.append(replace(h, cpu_used=u.cpu, memory_used_mib=u.memory_mib,
                           vcpus_used=u.vcpus, disk_used_gb=u.disk_gb))
    return out


def usage_now(conn: Connection, host: HostState) -> HostState:
    """``usages_now`` of one host."""
    return usages_now(conn, [host])[0]
