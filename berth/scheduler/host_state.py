"""Building HostStates from the database: compute_node and the inventory the node
reported to the embedded Placement (capacity), zun_service
(liveness, zone) and the containers placed on each node (usage, counted live so
that containers being created already count)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from sqlalchemy import Connection, bindparam, func, select

from berth.common.units import memory_mib
from berth.db import nodes
from berth.db.base import utcnow
from berth.db.containers import NOT_HOLDING
from berth.db.engine import Database
from berth.db.inline_lists import inline_in, inline_not_in
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
          .where(Container.host.is_not(None), inline_not_in(Container.status, NOT_HOLDING),
                 inline_in(Container.container_type, (0, 1)))
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
    .where(inline_in(ProviderInventory.resource_class, (VCPU, MEMORY_MB, DISK_GB))))



#: What a node's HostState is built from that a read of the nodes fixes: its row's
#: values and the inventories of its VCPU, MEMORY_MB and DISK_GB (None: not reported).
_Fixed = tuple[tuple[Any, ...], Inventory | None, Inventory | None, Inventory | None]


class _Usage(NamedTuple):
    cpu: float = 0.0
    memory_mib: int = 0
    vcpus: int = 0          # whole VCPUs, as Placement counts them
    disk_gb: int = 0


def _usage_by_host(rows: Iterable[Any]) -> dict[str, _Usage]:
    """What the containers placed on each host hold, from rows of ``_USAGE`` (``n``
    containers of each size); each distinct size worked out once (a fleet's containers
    come in a few sizes, and many hosts hold as many of one: each such row too)."""
    usage: dict[str, _Usage] = {}
    held: dict[tuple[Any, Any, Any, int], _Usage] = {}
    for host, cpu, memory, disk, n in rows:
        if host is None:        # excluded by the query; for the type checker
            continue
        part = held.get((cpu, memory, disk, n))
        if part is None:
            one = _Usage(cpu or 0.0, memory_mib(memory), vcpus_of(cpu), int(disk or 0))
            part = held[(cpu, memory, disk, n)] = _Usage(
                one.cpu * n, one.memory_mib * n, one.vcpus * n, one.disk_gb * n)
        u = usage.get(host)
        usage[host] = part if u is None else _Usage(
            u.cpu + part.cpu, u.memory_mib + part.memory_mib, u.vcpus + part.vcpus,
            u.disk_gb + part.disk_gb)
    return usage


def _reported(rows: Iterable[Any], made: dict[tuple[Any, ...], Inventory] | None = None
              ) -> dict[tuple[str, str], Inventory]:
    """(provider uuid, resource class) -> its inventory, from rows of ``_INVENTORIES``;
    one Inventory (frozen) for each distinct set of figures, which a fleet's nodes
    mostly share: at 1,000 nodes, building one per row was a third of a read's CPU.
    ``made``: figures -> Inventory, taken from and added to (a reader's across reads:
    the same figures are then the same object, compared at once)."""
    made = {} if made is None else made
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
    """Every node as the scheduler sees it, read now (``HostStateReads`` once)."""
    return HostStateReads(db, api_options, down_time, default_zone, reported_elsewhere)()


#: Seconds a read of the nodes' rows and of their inventories serves the reads that
#: follow (``HostStateReads``): what a node is (its size, runtimes, labels, what it
#: reported to Placement) changes rarely, while its services' liveness and the
#: containers on it change all the time and are read every time.
STATIC_MAX_AGE = 10.0


class HostStateReads:
    """Reads every node's HostState, each call anew (``HostStateCache``'s loader),
    keeping from one read to the next the HostState of each node whose rows, usage
    and liveness read the same: most of a large fleet's nodes between two reads a
    second apart (bench P15: building 1,000 HostStates was half of a read's CPU).

    The services and the usage are read every time. The nodes' rows and their
    inventories are read again only after ``static_max_age`` seconds, or at once when
    the nodes no longer match the services (a node registered, or deleted) or a node
    has not reported its inventory yet (a node that just started): so a new node is
    scheduled on as soon as it reported, and a change to a known node's size, labels
    or inventory is seen up to ``static_max_age`` seconds later (the embedded
    Placement's allocation, in the placing transaction, checks the inventory as it
    is; the room check under the node's lock reads its usage again, not its size).
    With Placement elsewhere (``reported_elsewhere``) they are read every time. At
    1,000 nodes they are 4,000 of a read's 6,000 rows (bench P15). Not thread-safe:
    the cache calls it from one thread at a time."""

    def __init__(self, db: Database, api_options: NodeReservations, down_time: int,
                 default_zone: str,
                 reported_elsewhere: Callable[[str], Mapping[str, Inventory]] | None
                 = None, static_max_age: float = STATIC_MAX_AGE,
                 services_seen: Callable[[frozenset[str], float], None] | None = None
                 ) -> None:
        """``api_options``: the API's own ``[compute]`` reservations and ratios, which
        stand in for a node that reported no inventory. ``reported_elsewhere(rp_uuid)``:
        the inventory a node reported to OpenStack Placement (``placement_inventories``),
        asked for a node whose inventory is not in the database. ``services_seen(up,
        began)``: told the hosts whose compute service each read found up, and when
        (monotonic) that read began (``UpHosts.learn``)."""
        self._db = db
        self._services_seen = services_seen
        self._api_options = api_options
        self._down_time = down_time
        self._default_zone = default_zone
        self._reported_elsewhere = reported_elsewhere
        #: hostname -> (what its HostState was built from, the HostState)
        self._last: dict[str, tuple[tuple[Any, ...], HostState]] = {}
        #: The last read's Inventories by their figures (``_reported``)
        self._inventories: dict[tuple[Any, ...], Inventory] = {}
        self._static_max_age = static_max_age
        #: Each node as last read: its hostname, its row, and what of it a HostState is
        #: built from (the row's values, its three inventories), worked out once a read
        #: of the nodes, not once a second; and when that read was (monotonic)
        self._static: list[tuple[str, Any, _Fixed]] | None = None
        self._static_at = 0.0
        #: Their hostnames, and whether every one of them had reported its inventory
        self._static_hosts: set[str] = set()
        self._static_whole = False

    def __call__(self) -> list[HostState]:
        # Core rows (no ORM result processing), each result fetched whole (iterating a
        # Core result fetches its rows one call at a time).
        began = time.monotonic()
        with self._db.connection() as conn:
            services = {svc.host: svc for svc in conn.execute(_SERVICES).all()}
            usage = _usage_by_host(conn.execute(_USAGE).all())
            static = self._static_still(services)
            if static is None:
                static = self._read_static(conn)
        now, nothing, down_time = utcnow(), _Usage(), self._down_time
        up_hosts = {host: nodes.service_is_up(svc, down_time, now)
                    for host, svc in services.items()}
        if self._services_seen is not None:
            self._services_seen(frozenset(h for h, up in up_hosts.items() if up), began)
        out = []
        last, kept = self._last, {}
        for hostname, node, fixed in static:
            svc = services.get(hostname)
            # Of the service, what a HostState holds: not its heartbeat's time, which
            # changes at every heartbeat and would build the node again for nothing.
            up = up_hosts.get(hostname, False)
            live = svc and (svc.availability_zone, svc.disabled, svc.disabled_reason, up)
            # Plain tuples: a Row compares itself in Python, a tuple in C; ``fixed`` is
            # the same object from one read of the nodes to the next, compared at once.
            source = (fixed, live, usage.get(hostname, nothing))
            before = last.get(hostname)
            state = before[1] if before is not None and before[0] == source \
                else self._built(node, svc, up, source[2], *fixed[1:])
            kept[hostname] = (source, state)
            out.append(state)
        self._last = kept
        return out

    def _static_still(self, services: Mapping[str, Any]) -> list[tuple[str, Any, _Fixed]] | None:
        """The nodes as last read, if they may serve this read."""
        if self._static is None or not self._static_whole \
                or time.monotonic() - self._static_at >= self._static_max_age \
                or services.keys() != self._static_hosts:
            return None
        return self._static

    def _read_static(self, conn: Connection) -> list[tuple[str, Any, _Fixed]]:
        self._static_at = time.monotonic()
        compute_nodes = conn.execute(_NODES).all()
        inventories = dict(self._inventories)
        reported = _reported(conn.execute(_INVENTORIES).all(), inventories)
        # What this read did not meet is forgotten (figures changed leave none behind).
        met = {id(i) for i in reported.values()}
        self._inventories = {f: i for f, i in inventories.items() if id(i) in met}
        self._static_hosts = {node.hostname for node in compute_nodes}
        # Reused only when every node has reported, to this database's Placement.
        self._static_whole = self._reported_elsewhere is None \
            and len(self._static_hosts) == len(compute_nodes) \
            and all((node.rp_uuid, VCPU) in reported and (node.rp_uuid, MEMORY_MB) in reported
                    for node in compute_nodes)
        static = []
        for node in compute_nodes:
            rp = node.rp_uuid
            if self._reported_elsewhere is not None and rp and (rp, VCPU) not in reported \
                    and (rp, MEMORY_MB) not in reported:
                for rc, inv in self._reported_elsewhere(rp).items():
                    reported[(rp, rc)] = inv
            static.append((node.hostname, node, (tuple(node), reported.get((rp, VCPU)),
                                                 reported.get((rp, MEMORY_MB)),
                                                 reported.get((rp, DISK_GB)))))
        self._static = static
        return static

    def _built(self, node: Any, svc: Any, up: bool, used: _Usage, vcpu: Inventory | None,
               memory: Inventory | None, disk: Inventory | None) -> HostState:
        if vcpu is None or memory is None or disk is None:
            # For a node that reported nothing: the inventory it would report under the
            # API's options (the agent's own arithmetic, berth.placement.requests).
            assumed = node_inventories(node.cpus or 0, node.mem_total or 0,
                                       node.disk_total or 0, self._api_options)
            vcpu, memory, disk = (found or assumed.get(rc) for found, rc in (
                (vcpu, VCPU), (memory, MEMORY_MB), (disk, DISK_GB)))
        return HostState(
            hostname=node.hostname,
            cpus=vcpu.capacity if vcpu else 0.0,
            memory_mib=int(memory.capacity) if memory else 0,
            cpu_used=used.cpu, memory_used_mib=used.memory_mib,
            runtimes=tuple(node.runtimes or ("runc",)),
            availability_zone=(svc.availability_zone if svc else None) or self._default_zone,
            service_up=up,
            service_disabled=bool(svc and svc.disabled),
            disabled_reason=svc.disabled_reason if svc else None,
            cores=vcpu.largest_unit if vcpu else 0, vcpus_used=used.vcpus,
            node_uuid=node.uuid, provider_uuid=node.rp_uuid or node.uuid,
            memory_max_unit=memory.largest_unit if memory else 0,
            disk_gb=disk.capacity if disk else 0.0, disk_used_gb=used.disk_gb,
            disk_max_unit=disk.largest_unit if disk else 0,
            disk_quota_supported=bool(node.disk_quota_supported),
            labels={str(k): str(v) for k, v in (node.labels or {}).items()},
        )


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
