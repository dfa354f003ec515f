"""With the embedded Placement the API writes a container's allocation in the
transaction that places its row (``placing.NodeAllocation``), on a real (SQLite) database:
the allocation is there with the row, a node Placement refuses is passed over (the
scheduler, counting container rows, would have chosen it), and the agent's create
finds the allocation made instead of making it again (``EmbeddedPlacement.holds``)."""

from __future__ import annotations

import uuid as uuidlib
from types import SimpleNamespace
from typing import Any

import pytest

from berth.api.operations import placing
from berth.db import containers, nodes
from berth.db.engine import Database
from berth.placement.base import MEMORY_MB, VCPU, Allocation, Inventory
from berth.placement.embedded import EmbeddedPlacement
from berth.placement.requests import NodeReservations, container_resources
from berth.scheduler import filters, weighers
from berth.scheduler.base import RequestSpec
from berth.scheduler.filter_scheduler import FilterScheduler
from berth.scheduler.host_state import load_host_states

NO_RESERVATION = NodeReservations(reserved_memory_mb=0, ram_allocation_ratio=1.0)
SPEC = RequestSpec(cpu=0.5, memory_mib=1024)
WANTS = container_resources(0.5, "1024", None)


def no_quota(conn: Any) -> None:
    return None


@pytest.fixture
def placement(db: Database) -> EmbeddedPlacement:
    """n1 (4096 MiB) and n2 (2048 MiB), each reported to the embedded Placement."""
    ledger = EmbeddedPlacement(db)
    for name, memory in (("n1", 4096), ("n2", 2048)):
        node = nodes.upsert_compute_node(db, name, {"cpus": 4, "mem_total": memory})
        nodes.report_service_up(db, name, nodes.COMPUTE_BINARY, None)
        ledger.ensure_provider(node.uuid, name)
        ledger.set_inventory(node.uuid, {VCPU: Inventory(total=4), MEMORY_MB:
                                         Inventory(total=memory, max_unit=memory)})
    return ledger


def state_with(db: Database, ledger: EmbeddedPlacement | None) -> Any:
    snapshot = load_host_states(db, NO_RESERVATION, 60, "nova")
    sched = FilterScheduler(lambda: snapshot, filters.by_name(["ResourceFilter"]),
                            weighers.by_name(["RAMWeigher"], {}))
    return SimpleNamespace(scheduler=sched, placement=ledger)


def place(db: Database, state: Any) -> tuple[str, str]:
    consumer = str(uuidlib.uuid4())

    def insert(host: str, guard: placing.Guard) -> Any:
        return containers.create(db, {"uuid": consumer, "host": host, "status": "Creating",
                                      "cpu": 0.5, "memory": "1024"}, guard=guard)

    selection, row = placing.insert_placed(
        state, SPEC, state.scheduler.select_destination(SPEC), no_quota, insert,
        allocation=Allocation(consumer, "", WANTS, "p", "u"))
    assert row.host == selection.host
    return consumer, selection.host


def provider_of(db: Database, host: str) -> str:
    return nodes.provider_uuid_of(db, host)


def test_the_allocation_is_written_with_the_row(db: Database,
                                                placement: EmbeddedPlacement) -> None:
    consumer, host = place(db, state_with(db, placement))
    assert host == "n1"
    assert placement.get_allocation(consumer) == {provider_of(db, "n1"): WANTS}
    # What the agent's create asks before it allocates: nothing left to do.
    assert placement.holds(consumer, provider_of(db, "n1"), WANTS)


def test_a_node_placement_refuses_is_passed_over(db: Database,
                                                 placement: EmbeddedPlacement) -> None:
    # Something the container rows do not show holds most of n1 in Placement: the
    # scheduler still ranks n1 first, Placement has room only on n2.
    placement.allocate(str(uuidlib.uuid4()), provider_of(db, "n1"), {MEMORY_MB: 3584},
                       "other", "other")
    state = state_with(db, placement)
    assert state.scheduler.select_destination(SPEC).host == "n1"
    consumer, host = place(db, state)
    assert host == "n2"
    assert placement.get_allocation(consumer) == {provider_of(db, "n2"): WANTS}
    assert [r.uuid for r in containers.list_by_host(db, "n1")] == []


def test_without_the_embedded_placement_the_api_allocates_nothing(
        db: Database, placement: EmbeddedPlacement) -> None:
    consumer, host = place(db, state_with(db, None))
    assert host == "n1"
    assert placement.get_allocation(consumer) == {}
    assert not placement.holds(consumer, provider_of(db, "n1"), WANTS)


def test_holds_is_exactly_this_allocation_on_this_provider(
        db: Database, placement: EmbeddedPlacement) -> None:
    consumer = str(uuidlib.uuid4())
    n1, n2 = provider_of(db, "n1"), provider_of(db, "n2")
    placement.allocate(consumer, n1, WANTS, "p", "u")
    assert placement.holds(consumer, n1, WANTS)
    assert not placement.holds(consumer, n2, WANTS)                 # another node
    assert not placement.holds(consumer, n1, {**WANTS, MEMORY_MB: 2048})   # resized
    assert not placement.holds(consumer, n1, {VCPU: 1})             # a class fewer
