"""``HostStateReads``: each read is the database as it is now, and keeps the
HostState of a node whose rows, usage and liveness read the same as last time."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

import pytest

from berth.db import containers, nodes
from berth.db.engine import Database
from berth.placement.base import MEMORY_MB, VCPU, Inventory
from berth.placement.requests import NodeReservations
from berth.scheduler import host_state
from berth.scheduler.host_state import HostStateReads, load_host_states


def fleet(db: Database, names: tuple[str, ...] = ("n1", "n2", "n3")) -> None:
    for name in names:
        nodes.upsert_compute_node(db, name, {"cpus": 4, "mem_total": 4096})
        nodes.report_service_up(db, name, nodes.COMPUTE_BINARY, "z1")
        containers.create(db, {"host": name, "status": "Running", "cpu": 1.0,
                               "memory": "512"})


def by_name(states: object) -> dict[str, host_state.HostState]:
    return {h.hostname: h for h in states}  # type: ignore[attr-defined]


def reads_of(db: Database) -> HostStateReads:
    return HostStateReads(db, NodeReservations(), 60, "nova")


def test_a_read_with_nothing_changed_keeps_every_hoststate(db: Database) -> None:
    fleet(db)
    reads = reads_of(db)
    first, second = by_name(reads()), by_name(reads())
    assert first.keys() == second.keys() == {"n1", "n2", "n3"}
    assert all(second[n] is first[n] for n in first)
    assert second == by_name(load_host_states(db, NodeReservations(), 60, "nova"))


def test_a_node_whose_usage_changed_is_built_again_and_only_it(db: Database) -> None:
    fleet(db)
    reads = reads_of(db)
    first = by_name(reads())
    containers.create(db, {"host": "n2", "status": "Creating", "cpu": 0.5, "memory": "256"})
    second = by_name(reads())
    assert (second["n2"].cpu_used, second["n2"].memory_used_mib, second["n2"].vcpus_used) \
        == (1.5, 768, 2)
    assert second["n1"] is first["n1"] and second["n3"] is first["n3"]
    assert second == by_name(load_host_states(db, NodeReservations(), 60, "nova"))


def test_a_heartbeat_alone_builds_no_node_again(db: Database,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A HostState holds whether the service is up, not when it last reported: a
    heartbeat (every node's, every half minute) changes nothing it holds."""
    fleet(db, ("n1", "n2"))
    reads = reads_of(db)
    first = by_name(reads())
    later = host_state.utcnow() + dt.timedelta(seconds=5)
    monkeypatch.setattr(nodes, "utcnow", lambda: later)
    nodes.report_service_up(db, "n1", nodes.COMPUTE_BINARY, "z1")
    second = by_name(reads())
    assert second["n1"] is first["n1"] and second["n2"] is first["n2"]
    nodes.update_service(db, "n1", nodes.COMPUTE_BINARY, {"disabled": True})
    third = by_name(reads())
    assert third["n1"].service_disabled and third["n2"] is first["n2"]


def test_hosts_holding_the_same_containers_and_one_holding_several_sizes(
        db: Database) -> None:
    fleet(db, ("n1", "n2", "n3"))
    for _ in range(2):
        containers.create(db, {"host": "n3", "status": "Running", "cpu": 0.25,
                               "memory": "128", "disk": 2})
    states = by_name(reads_of(db)())
    assert (states["n1"].cpu_used, states["n1"].memory_used_mib, states["n1"].vcpus_used) \
        == (states["n2"].cpu_used, states["n2"].memory_used_mib, states["n2"].vcpus_used) \
        == (1.0, 512, 1)
    n3 = states["n3"]
    assert (n3.cpu_used, n3.memory_used_mib, n3.vcpus_used, n3.disk_used_gb) == \
        (1.5, 768, 3, 4)
    assert states == by_name(load_host_states(db, NodeReservations(), 60, "nova"))


def test_a_service_whose_heartbeat_aged_past_the_down_time_reads_down(
        db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing in the rows changed, only the clock: the node must not stay up."""
    fleet(db, ("n1",))
    reads = reads_of(db)
    assert by_name(reads())["n1"].service_up
    later = host_state.utcnow() + dt.timedelta(seconds=120)
    monkeypatch.setattr(host_state, "utcnow", lambda: later)
    assert not by_name(reads())["n1"].service_up


def test_a_disabled_service_and_a_new_inventory_are_read(db: Database,
                                                         report_inventory: Callable[[str, dict[str, Inventory]], None]) -> None:
    fleet(db, ("n1", "n2"))
    reads = reads_of(db)
    first = by_name(reads())
    nodes.update_service(db, "n1", nodes.COMPUTE_BINARY,
                         {"disabled": True, "disabled_reason": "maintenance"})
    report_inventory("n2", {
        VCPU: Inventory(total=4, reserved=0, max_unit=4, allocation_ratio=8.0),
        MEMORY_MB: Inventory(total=4096, reserved=0, max_unit=4096, allocation_ratio=1.0)})
    second = by_name(reads())
    assert second["n1"].service_disabled and second["n1"].disabled_reason == "maintenance"
    assert not first["n1"].service_disabled
    assert second["n2"].cpus == 32.0 and first["n2"].cpus != 32.0
    assert second == by_name(load_host_states(db, NodeReservations(), 60, "nova"))


def test_a_node_gone_from_the_database_is_gone_from_the_read(db: Database) -> None:
    fleet(db, ("n1", "n2"))
    reads = reads_of(db)
    reads()
    nodes.delete_service(db, "n2", nodes.COMPUTE_BINARY)
    with db.write_connection() as conn:
        conn.exec_driver_sql("DELETE FROM compute_node WHERE hostname = 'n2'")
    assert list(by_name(reads())) == ["n1"]


INVENTORY = {VCPU: Inventory(total=4, reserved=0, max_unit=4, allocation_ratio=8.0),
             MEMORY_MB: Inventory(total=4096, reserved=0, max_unit=4096, allocation_ratio=1.0)}


def reported_fleet(db: Database, report_inventory: Callable[[str, dict[str, Inventory]], None],
                   names: tuple[str, ...] = ("n1", "n2")) -> None:
    fleet(db, names)
    for name in names:
        report_inventory(name, INVENTORY)


def test_a_known_nodes_new_inventory_is_read_once_the_static_part_aged(
        db: Database, report_inventory: Callable[[str, dict[str, Inventory]], None],
        monkeypatch: pytest.MonkeyPatch) -> None:
    reported_fleet(db, report_inventory)
    clock = [1000.0]
    monkeypatch.setattr(host_state.time, "monotonic", lambda: clock[0])
    reads = HostStateReads(db, NodeReservations(), 60, "nova", static_max_age=10)
    assert by_name(reads())["n1"].cpus == 32.0
    report_inventory("n1", {**INVENTORY, VCPU: Inventory(total=4, reserved=0, max_unit=4,
                                                         allocation_ratio=2.0)})
    containers.create(db, {"host": "n1", "status": "Running", "cpu": 0.5, "memory": "256"})
    clock[0] += 9
    kept = by_name(reads())["n1"]
    assert kept.cpus == 32.0 and kept.cpu_used == 1.5      # usage is read every time
    clock[0] += 1
    assert by_name(reads())["n1"].cpus == 8.0
    assert by_name(reads()) == by_name(load_host_states(db, NodeReservations(), 60, "nova"))


def test_a_node_registered_or_deleted_is_read_at_once(
        db: Database, report_inventory: Callable[[str, dict[str, Inventory]], None],
        monkeypatch: pytest.MonkeyPatch) -> None:
    reported_fleet(db, report_inventory)
    monkeypatch.setattr(host_state.time, "monotonic", lambda: 1000.0)
    reads = HostStateReads(db, NodeReservations(), 60, "nova", static_max_age=10)
    assert set(by_name(reads())) == {"n1", "n2"}
    fleet(db, ("n3",))
    # Registered, not reported yet: read again at each read until it has reported.
    assert by_name(reads())["n3"].cpus == by_name(
        load_host_states(db, NodeReservations(), 60, "nova"))["n3"].cpus
    report_inventory("n3", INVENTORY)
    assert by_name(reads())["n3"].cpus == 32.0
    nodes.delete_service(db, "n2", nodes.COMPUTE_BINARY)
    with db.write_connection() as conn:
        conn.exec_driver_sql("DELETE FROM compute_node WHERE hostname = 'n2'")
    assert set(by_name(reads())) == {"n1", "n3"}


def test_with_placement_elsewhere_every_read_reads_the_nodes(
        db: Database, monkeypatch: pytest.MonkeyPatch) -> None:
    fleet(db, ("n1",))
    monkeypatch.setattr(host_state.time, "monotonic", lambda: 1000.0)
    asked: list[str] = []

    def elsewhere(rp: str) -> dict[str, Inventory]:
        asked.append(rp)
        return INVENTORY

    reads = HostStateReads(db, NodeReservations(), 60, "nova", elsewhere, static_max_age=10)
    reads()
    reads()
    assert len(asked) == 2


def test_each_read_tells_which_compute_services_it_found_up(db: Database) -> None:
    fleet(db, ("n1", "n2"))
    nodes.report_service_up(db, "lone", nodes.COMPUTE_BINARY, "z1")   # no node row yet
    told: list[tuple[frozenset[str], float]] = []
    reads = HostStateReads(db, NodeReservations(), 60, "nova",
                           services_seen=lambda up, began: told.append((up, began)))
    before = host_state.time.monotonic()
    reads()
    assert told[0][0] == {"n1", "n2", "lone"} and told[0][1] >= before
    nodes.update_service(db, "n2", nodes.COMPUTE_BINARY, {"forced_down": True})
    reads()
    assert told[1][0] == {"n1", "lone"} and told[1][1] >= told[0][1]
