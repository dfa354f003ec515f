"""Building HostStates from the database: compute_node and the inventory the node
reported to the embedded Placement (capacity), zun_service
(liveness, zone) and the containers placed on each node (usage, counted live so
that containers being created already count)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from sqlalchemy import Connection, bindparam, select
from sqlalchemy.orm import Session

from berth.common.units import memory_mib
from berth.db import nodes
from berth.db.containers import NOT_HOLDING
from berth.db.engine import Database
from berth.db.models import ComputeNode, Container, ZunService
from berth.db.placement_models import ProviderInventory, ResourceProvider
from berth.placement.base import MEMORY_MB, VCPU, Inventory
from berth.placement.requests import NodeReservations, node_inventories, vcpus_of
from berth.scheduler.base import HostState

# Every create schedules: the three reads are built once, and read plain columns
# (building them and the ORM objects of every node and service cost more than the SQL).
_USAGE = (select(Container.host, Container.cpu, Container.memory)
          .where(Container.host.is_not(None), Container.status.not_in(NOT_HOLDING),
                 Container.container_type.in_((0, 1))))
_SERVICES = (select(ZunService.host, ZunService.availability_zone, ZunService.disabled,
                    ZunService.disabled_reason, ZunService.forced_down,
                    ZunService.last_seen_up, ZunService.updated_at, ZunService.created_at)
             .where(ZunService.binary == nodes.COMPUTE_BINARY).order_by(ZunService.id))
_NODES = (select(ComputeNode.uuid, ComputeNode.hostname, ComputeNode.cpus, ComputeNode.mem_total,
                 ComputeNode.runtimes, ComputeNode.rp_uuid).order_by(ComputeNode.uuid))
# What each node reported to the embedded Placement: its own reservations and ratios
# (an agent's [compute] options, which the API's need not repeat). Empty with
# [placement]driver = openstack: then the API's own options stand in for them.
_INVENTORIES = (
    select(ResourceProvider.uuid, ProviderInventory.resource_class, ProviderInventory.total,
           ProviderInventory.reserved, ProviderInventory.min_unit, ProviderInventory.max_unit,
           ProviderInventory.step_size, ProviderInventory.allocation_ratio)
    .join(ProviderInventory, ProviderInventory.resource_provider_id == ResourceProvider.id)
    .where(ProviderInventory.resource_class.in_((VCPU, MEMORY_MB))))


_USAGE_ON_HOST = _USAGE.where(Container.host == bindparam("host"))


def _usage_by_host(s: Session | Connection, only: str | None = None
                   ) -> dict[str, tuple[float, int, int]]:
    """{host: (cpu, memory MiB, whole VCPUs as Placement counts them)}, of every host
    or of the host ``only``."""
    usage: dict[str, tuple[float, int, int]] = {}
    rows = s.execute(_USAGE) if only is None else s.execute(_USAGE_ON_HOST, {"host": only})
    for host, cpu, memory in rows:
        if host is None:        # excluded by the query; for the type checker
            continue
        c, m, v = usage.get(host, (0.0, 0, 0))
        usage[host] = (c + (cpu or 0.0), m + memory_mib(memory), v + vcpus_of(cpu))
    return usage


def load_host_states(db: Database, api_options: NodeReservations, down_time: int,
                     default_zone: str) -> Sequence[HostState]:
    """``api_options``: the API's own ``[compute]`` reservations and ratios, which
    stand in for a node that reported no inventory (OpenStack Placement)."""
    # One read for the four.
    with db.reader() as s:
        services = {svc.host: svc for svc in s.execute(_SERVICES)}
        usage = _usage_by_host(s)
        compute_nodes = list(s.execute(_NODES))
        reported = {(r.uuid, r.resource_class): Inventory.of_row(r)
                    for r in s.execute(_INVENTORIES)}
    # For a node that reported nothing: the inventory it would report under the API's
    # options (the agent's own arithmetic, berth.placement.requests).
    out = []
    for node in compute_nodes:
        svc = services.get(node.hostname)
        cpu_used, mem_used, vcpus_used = usage.get(node.hostname, (0.0, 0, 0))
        assumed = node_inventories(node.cpus or 0, node.mem_total or 0, 0, api_options)
        vcpu = reported.get((node.rp_uuid, VCPU)) or assumed.get(VCPU)
        memory = reported.get((node.rp_uuid, MEMORY_MB)) or assumed.get(MEMORY_MB)
        out.append(HostState(
            hostname=node.hostname,
            cpus=vcpu.capacity if vcpu else 0.0,
            memory_mib=int(memory.capacity) if memory else 0,
            cpu_used=cpu_used, memory_used_mib=mem_used,
            runtimes=tuple(node.runtimes or ("runc",)),
            availability_zone=(svc.availability_zone if svc else None) or default_zone,
            service_up=svc is not None and nodes.service_is_up(svc, down_time),
            service_disabled=bool(svc and svc.disabled),
            disabled_reason=svc.disabled_reason if svc else None,
            cores=vcpu.largest_unit if vcpu else 0, vcpus_used=vcpus_used,
            node_uuid=node.uuid,
        ))
    return out


def usage_now(conn: Connection, host: HostState) -> HostState:
    """``host`` with its usage read again, on ``conn`` (inside the caller's
    transaction): the capacity as it was, the containers placed there as they are."""
    cpu, memory, vcpus = _usage_by_host(conn, host.hostname).get(host.hostname, (0.0, 0, 0))
    return replace(host, cpu_used=cpu, memory_used_mib=memory, vcpus_used=vcpus)
