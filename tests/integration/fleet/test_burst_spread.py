"""A burst from several API processes spreads over the nodes, on PostgreSQL and
MariaDB: three Database objects (three processes' engines), each with its own
scheduler, place 60 containers at once on three empty nodes through the API's
placement path (``berth.api.operations.placing``), with the default weighers.

Every request reads the same empty nodes and chooses the same one; without the
"still the best?" check under the node's lock, 27 of 30 landed on one node. Now each
node gets a third, give or take the requests in flight; the assertion leaves room for
those (no node gets more than 40%) and checks that none is left out or overcommitted.
Each API writes the container's allocation in the embedded Placement with its row
(``placing.NodeAllocation``): every row's allocation is on its own node's provider."""

from __future__ import annotations

import random
import threading
import uuid as uuidlib
from collections import Counter
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from berth.api.operations import placing
from berth.db import containers, migrate, nodes
from berth.db.engine import Database
from berth.placement.base import MEMORY_MB, VCPU, Allocation, Inventory
from berth.placement.embedded import EmbeddedPlacement
from berth.placement.requests import NodeReservations, container_resources
from berth.scheduler import filters, weighers
from berth.scheduler.base import RequestSpec
from berth.scheduler.filter_scheduler import FilterScheduler
from berth.scheduler.host_cache import HostStateCache
from berth.scheduler.host_state import load_host_states

pytestmark = pytest.mark.integration

NODES = ("n1", "n2", "n3")
BURST = 60
SPEC = RequestSpec(cpu=0.1, memory_mib=128)
ROOM = NodeReservations(reserved_memory_mb=0, ram_allocation_ratio=1.0)


@pytest.fixture(params=("postgresql", "mariadb"))
def dbs(request: pytest.FixtureRequest, rabbit_services: None,
        database_maker: Callable[[str], Any]) -> Iterator[list[Database]]:
    with database_maker(request.param) as url:
        migrate.upgrade(url)
        made = [Database(url, pool_size=25) for _ in range(3)]
        try:
            yield made
        finally:
            for db in made:
                db.dispose()


@pytest.mark.parametrize("as_berth_api", (False, True),
                         ids=("reading-every-time", "cached-view-random-ties"))
def test_a_concurrent_burst_from_three_api_processes_spreads_over_the_nodes(
        dbs: list[Database], as_berth_api: bool) -> None:
    """``as_berth_api``: each scheduler as berth-api builds it (``build_api_state``):
    a view read once a second that counts the placements in flight, ties broken at
    random."""
    ledger = EmbeddedPlacement(dbs[0])
    for name in NODES:
        node = nodes.upsert_compute_node(dbs[0], name, {"cpus": 64, "mem_total": 16384})
        nodes.report_service_up(dbs[0], name, nodes.COMPUTE_BINARY, None)
        ledger.ensure_provider(node.uuid, name)
        ledger.set_inventory(node.uuid, {VCPU: Inventory(total=64),
                                         MEMORY_MB: Inventory(total=16384)})
    wants = container_resources(SPEC.cpu, "128", None)

    def hosts_of(db: Database) -> Any:
        read = lambda: load_host_states(db, ROOM, 60, "nova")
        return HostStateCache(read, 1.0) if as_berth_api else read

    apis = [SimpleNamespace(db=db, placement=EmbeddedPlacement(db), scheduler=FilterScheduler(
        hosts_of(db), filters.by_name(["ComputeFilter", "ResourceFilter"]),
        weighers.by_name(["RAMWeigher", "CPUWeigher"], {}),
        rng=random.Random(i) if as_berth_api else None)) for i, db in enumerate(dbs)]
    barrier = threading.Barrier(BURST)
    chosen: list[str] = []
    lock = threading.Lock()

    def create(i: int) -> None:
        api = apis[i % len(apis)]
        uuid = str(uuidlib.uuid4())

        def insert(host: str, guard: placing.Guard) -> Any:
            return containers.create(api.db, {"uuid": uuid, "host": host,
                                              "status": "Creating", "cpu": SPEC.cpu,
                                              "memory": "128"}, guard=guard)

        barrier.wait()
        selection, _ = placing.insert_placed(api, SPEC, api.scheduler.select_destination(SPEC),
                                             lambda conn: None, insert,
                                             allocation=Allocation(uuid, "", wants, "p", "u"))
        with lock:
            chosen.append(selection.host)

    threads = [threading.Thread(target=create, args=(i,)) for i in range(BURST)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    placed = Counter(chosen)
    assert sum(placed.values()) == BURST
    assert set(placed) == set(NODES), placed
    assert max(placed.values()) <= 0.4 * BURST, placed
    rows = [c for name in NODES for c in containers.list_by_host(dbs[0], name)]
    assert Counter(c.host for c in rows) == placed
    for c in rows:
        assert c.host is not None
        assert ledger.get_allocation(c.uuid) == {nodes.provider_uuid_of(dbs[0], c.host): wants}
