"""The placing transaction's lock of the chosen node (``placing.NodeAllocation``), on
the servers berth runs on: with the embedded Placement the node's provider row is it
(the allocation updates that row anyway), so no compute_node row is locked; a node
that has not reported to Placement yet is locked by its compute_node row as before
(once its provider is found missing);
and either lock holds a second placing on the node until the first one ends."""

from __future__ import annotations

import threading
import uuid as uuidlib
from types import SimpleNamespace
from typing import Any

import pytest
from support.statements import Statements

from berth.api.operations import placing
from berth.db import containers, nodes
from berth.db.engine import Database
from berth.placement.base import MEMORY_MB, VCPU, Allocation, Inventory
from berth.placement.embedded import EmbeddedPlacement
from berth.placement.requests import NodeReservations, container_resources
from berth.scheduler import filters, weighers
from berth.scheduler.base import RequestSpec, Selection
from berth.scheduler.filter_scheduler import FilterScheduler
from berth.scheduler.host_state import load_host_states

pytestmark = pytest.mark.integration

SPEC = RequestSpec(cpu=0.5, memory_mib=256)
WANTS = container_resources(0.5, "256", None)


@pytest.fixture
def state(db: Database) -> Any:
    """``reported`` (in the embedded Placement) and ``unreported`` (not yet)."""
    ledger = EmbeddedPlacement(db)
    for name in ("reported", "unreported"):
        node = nodes.upsert_compute_node(db, name, {"cpus": 4, "mem_total": 4096})
        nodes.report_service_up(db, name, nodes.COMPUTE_BINARY, None)
        if name == "reported":
            ledger.ensure_provider(node.uuid, name)
            ledger.set_inventory(node.uuid, {VCPU: Inventory(total=4),
                                             MEMORY_MB: Inventory(total=4096)})
    snapshot = load_host_states(db, NodeReservations(reserved_memory_mb=0,
                                                     ram_allocation_ratio=1.0), 60, "nova")
    sched = FilterScheduler(lambda: snapshot, filters.by_name(["ResourceFilter"]),
                            weighers.by_name(["RAMWeigher"], {}))
    return SimpleNamespace(scheduler=sched, placement=ledger, db=db,
                           nodes={h.hostname: h for h in snapshot})


def place_on(state: Any, host: str) -> str:
    consumer = str(uuidlib.uuid4())

    def insert(chosen: str, guard: placing.Guard) -> Any:
        return containers.create(state.db, {"uuid": consumer, "host": chosen,
                                            "status": "Creating", "cpu": 0.5,
                                            "memory": "256"}, guard=guard)

    selection = Selection(host=host, state=state.nodes[host])
    placing.insert_placed(state, SPEC, selection, lambda conn: None, insert,
                          allocation=Allocation(consumer, "", WANTS, "p", "u"))
    return consumer


def locks_of(seen: Statements) -> list[str]:
    """The tables whose rows ``seen``'s statements locked or updated."""
    out = []
    for statement, _ in seen.compiled:
        words = statement.split()
        if "FOR UPDATE" in statement:
            out.append("compute_node" if "compute_node" in statement else "other FOR UPDATE")
        elif words[0] == "UPDATE":
            out.append(words[1])
    return out


def test_a_reported_node_is_locked_by_its_provider_row_alone(state: Any) -> None:
    seen = Statements(state.db)
    consumer = place_on(state, "reported")
    expected = (["resource_provider"] if state.db.engine.dialect.update_returning
                else ["other FOR UPDATE", "resource_provider"])   # MariaDB: then the bump
    assert locks_of(seen) == expected
    assert state.placement.get_allocation(consumer)


def test_a_node_not_reported_yet_is_locked_by_its_compute_node_row(state: Any) -> None:
    seen = Statements(state.db)
    consumer = place_on(state, "unreported")
    provider = ("resource_provider" if state.db.engine.dialect.update_returning
                else "other FOR UPDATE")         # tried first: it has none yet
    assert locks_of(seen) == [provider, "compute_node"]
    assert containers.get_by_uuid(state.db, consumer).host == "unreported"
    assert not state.placement.get_allocation(consumer)


@pytest.mark.parametrize("host", ["reported", "unreported"])
def test_a_placing_waits_for_one_holding_the_nodes_lock(state: Any, host: str) -> None:
    holding = placing.NodeAllocation(state, Selection(host=host, state=state.nodes[host]),
                                     Allocation("holder", "", WANTS, "p", "u"))
    done = threading.Event()
    with state.db.write_connection() as conn:
        if not holding.lock(conn):
            nodes.lock_compute_node(conn, state.nodes[host].node_uuid)
        second = threading.Thread(target=lambda: (place_on(state, host), done.set()))
        second.start()
        assert not done.wait(1.0), "the second placing did not wait for the node's lock"
    second.join(10)
    assert done.is_set()
