"""NeutronNetworks.sweep_orphan_ports: which ports bound to this host a start-up
recovery deletes (berth's, no row records them), unbinds (the user's) or leaves
(recorded, or their row's flow is under way). Neutron is a recording fake here; the
real one is in tests/integration/network."""

from __future__ import annotations

from typing import Any

import pytest

from berth.compute.networking import ContainerNetworks
from berth.compute.neutron_networks import NeutronNetworks
from berth.db import containers
from berth.db.engine import Database
from berth.network.neutron.client import NeutronError, Port


class RecordingNeutron:
    def __init__(self, fail: set[str] | None = None) -> None:
        self.deleted: list[str] = []
        self.released: list[str] = []
        self.fail = fail or set()

    def delete_port(self, port_id: str) -> None:
        if port_id in self.fail:
            raise NeutronError(reason="Neutron is down")
        self.deleted.append(port_id)

    def release_port(self, port_id: str) -> None:
        self.released.append(port_id)


def port(port_id: str, device: str, name: str | None = None) -> Port:
    return Port(id=port_id, network_id="n1", mac="fa:16:3e:00:00:01", fixed_ips=(),
                status="ACTIVE", device_id=device, project_id="p1",
                name=f"berth-{device}" if name is None else name)


def networks(neutron: RecordingNeutron, db: Database) -> NeutronNetworks:
    return NeutronNetworks(db, client=None, neutron=neutron, host="h1")  # type: ignore[arg-type]


def row(db: Database, ports: list[str], **extra: Any) -> Any:
    entries = [{"network": "n1", "ifname": f"eth{i}", "port": p} for i, p in enumerate(ports)]
    return containers.create(db, {"project_id": "p1", "status": "Running", "host": "h1",
                                  "cni_metadata": {"networks": entries, "pid": 1}, **extra})


def test_recorded_ports_and_busy_rows_are_kept_orphans_go(db: Database) -> None:
    neutron = RecordingNeutron()
    recorded = row(db, ["p-kept"])
    cut_short = row(db, [], status="Error")          # its create died before the write
    busy = row(db, [], task_state="container_starting")
    ports = [port("p-kept", recorded.uuid), port("p-cut", cut_short.uuid),
             port("p-busy", busy.uuid), port("p-gone", "no-such-row"),
             port("p-users", "no-such-row-either", name="my-port")]
    rows = {r.uuid: r for r in containers.list_by_host(db, "h1")}
    assert networks(neutron, db).sweep_orphan_ports(ports, rows) == 3
    assert neutron.deleted == ["p-cut", "p-gone"] and neutron.released == ["p-users"]


def test_a_neutron_failure_is_logged_and_the_sweep_goes_on(db: Database) -> None:
    neutron = RecordingNeutron(fail={"p-1"})
    ports = [port("p-1", "gone-1"), port("p-2", "gone-2")]
    assert networks(neutron, db).sweep_orphan_ports(ports, {}) == 1
    assert neutron.deleted == ["p-2"]


class ListingNeutron(RecordingNeutron):
    """Lists its ports, noting when; ``down``: the listing fails."""

    def __init__(self, ports: list[Port], events: list[str], down: bool = False) -> None:
        super().__init__()
        self.ports, self.events, self.down = ports, events, down

    def bound_ports(self, host: str) -> list[Port]:
        self.events.append(f"listed ports of {host}")
        if self.down:
            raise NeutronError(reason="Neutron is down")
        return self.ports


def test_the_start_up_sweep_lists_the_ports_before_it_reads_the_rows(db: Database) -> None:
    """A port made between the listing and the read has its row: kept."""
    events: list[str] = []
    made_meanwhile = row(db, [])
    neutron = ListingNeutron([port("p-new", made_meanwhile.uuid), port("p-gone", "gone")],
                             events)

    def rows_of() -> dict[str, Any]:
        events.append("read rows")
        containers.update_(db, made_meanwhile.uuid, {"cni_metadata": {
            "networks": [{"network": "n1", "ifname": "eth0", "port": "p-new"}], "pid": 1}})
        return {r.uuid: r for r in containers.list_by_host(db, "h1")}

    assert networks(neutron, db).sweep_orphans(rows_of) == 1
    assert events == ["listed ports of h1", "read rows"]
    assert neutron.deleted == ["p-gone"]


def test_neutron_not_listing_its_ports_sweeps_nothing_and_reads_no_rows(db: Database) -> None:
    events: list[str] = []
    neutron = ListingNeutron([port("p-gone", "gone")], events, down=True)
    assert networks(neutron, db).sweep_orphans(
        lambda: events.append("read rows") or {}) == 0
    assert events == ["listed ports of h1"] and neutron.deleted == []


def test_local_networks_hold_no_ports_to_sweep(db: Database) -> None:
    """The CNI daemon's own sync pass removes a local attachment left behind."""
    local = ContainerNetworks(db, client=None)  # type: ignore[arg-type]
    assert local.sweep_orphans(lambda: pytest.fail("local networks read no rows")) == 0
