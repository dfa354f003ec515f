"""The scheduler's view of inventories an agent reported to OpenStack Placement
(``ReportedInventories``), and host states built with it."""

from __future__ import annotations

from typing import Any

from berth.db import nodes
from berth.db.engine import Database
from berth.placement.base import MEMORY_MB, VCPU, Inventory, PlacementError
from berth.placement.requests import NodeReservations
from berth.scheduler.host_state import load_host_states
from berth.scheduler.placement_inventories import ReportedInventories

REPORTED = {VCPU: Inventory(total=2, max_unit=2, allocation_ratio=4.0),
            MEMORY_MB: Inventory(total=4096, reserved=1024, max_unit=4096,
                                 allocation_ratio=1.0)}


class FakePlacement:
    def __init__(self) -> None:
        self.reads: list[str] = []
        self.down = False

    def get_inventory(self, provider_uuid: str) -> dict[str, Inventory]:
        self.reads.append(provider_uuid)
        if self.down:
            raise PlacementError(reason="connection refused")
        return dict(REPORTED)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_providers_inventory_is_read_once_per_ttl() -> None:
    placement, clock = FakePlacement(), Clock()
    inventories = ReportedInventories(placement, ttl=60, clock=clock)  # type: ignore[arg-type]
    assert inventories("rp1") == REPORTED
    clock.now += 59
    assert inventories("rp1") == REPORTED
    assert placement.reads == ["rp1"]
    clock.now += 2
    inventories("rp1")
    assert placement.reads == ["rp1", "rp1"]


def test_when_placement_fails_the_last_copy_or_nothing_is_used() -> None:
    placement, clock = FakePlacement(), Clock()
    inventories = ReportedInventories(placement, ttl=60, clock=clock)  # type: ignore[arg-type]
    inventories("rp1")
    placement.down = True
    clock.now += 120
    assert inventories("rp1") == REPORTED
    assert inventories("rp2") == {}


def test_host_states_take_the_inventory_a_node_reported_to_openstack_placement(
        db: Database) -> None:
    """The agent reported VCPU at ratio 4 and 1024 MiB reserved; the API's own options
    (ratio 16, 512 MiB) no longer stand in for them."""
    nodes.upsert_compute_node(db, "n1", {"cpus": 2, "mem_total": 4096})
    nodes.report_service_up(db, "n1", nodes.COMPUTE_BINARY, None)
    rp = nodes.get_compute_node(db, "n1").rp_uuid
    placement = FakePlacement()
    elsewhere: Any = ReportedInventories(placement)  # type: ignore[arg-type]
    [state] = load_host_states(db, NodeReservations(), 60, "nova", elsewhere)
    assert (state.cpus, state.memory_mib, state.memory_max_unit) == (8.0, 3072, 4096)
    assert placement.reads == [rp]
    [assumed] = load_host_states(db, NodeReservations(), 60, "nova")
    assert (assumed.cpus, assumed.memory_mib) == (32.0, int((4096 - 512) * 1.5))
