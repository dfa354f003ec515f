"""NeutronNetworks.reserve: the ports made (and the exposed ports' group) beside the
engine's start, claimed by the plug that follows, deleted by the unplug that comes
instead; and the attach of one more network to a running container (its exposed
ports' group). Neutron and the daemon are recording fakes; tests/integration/network
has the real ones."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from berth.compute.neutron_networks import NeutronNetworks
from berth.db import containers
from berth.db.engine import Database
from berth.network.neutron.client import Network, NeutronError, Port, Subnet


class FakeNeutron:
    def __init__(self, fail_network: bool = False) -> None:
        self.calls: list[tuple[str, str]] = []
        self.fail_network = fail_network
        self._ids = itertools.count(1)

    def create_port(self, network: str, host: str, device: str, project: str,
                    fixed: list[Any], groups: list[str] | None) -> Port:
        port_id = f"port-{next(self._ids)}"
        self.calls.append(("create_port", port_id))
        return Port(id=port_id, network_id=network, mac="fa:16:3e:00:00:01",
                    fixed_ips=(("10.0.0.5", "s1"),), status="DOWN", device_id=device,
                    project_id=project, host=host, name=f"berth-{device}")

    def port_or_none(self, port_id: str) -> Port | None:
        self.calls.append(("get_port", port_id))
        return Port(id=port_id, network_id="n1", mac="fa:16:3e:00:00:02",
                    fixed_ips=(("10.0.0.9", "s1"),), status="DOWN", device_id="",
                    project_id="p1", name="my-port")

    def bind_port(self, port_id: str, host: str, device: str, groups: Any) -> Port:
        self.calls.append(("bind_port", port_id))
        return Port(id=port_id, network_id="n1", mac="fa:16:3e:00:00:02",
                    fixed_ips=(("10.0.0.9", "s1"),), status="DOWN", device_id=device,
                    project_id="p1", host=host, name="my-port")

    def network(self, network_id: str) -> Network:
        self.calls.append(("network", network_id))
        if self.fail_network:
            raise NeutronError(reason="Neutron is down")
        return Network(id=network_id, name="net", project_id="p1", shared=False, mtu=1450,
                       subnets=(Subnet("s1", "10.0.0.0/24", 4, "10.0.0.1"),))

    def create_security_group(self, name: str, project: str, rules: list[Any]) -> str:
        self.calls.append(("create_group", name))
        return "sg-exposed"

    def delete_security_group(self, group: str) -> None:
        self.calls.append(("delete_group", group))

    def delete_port(self, port_id: str) -> None:
        self.calls.append(("delete_port", port_id))

    def of(self, kind: str) -> list[str]:
        return [what for k, what in self.calls if k == kind]


class FakeVifs:
    def __init__(self) -> None:
        self.added: list[str] = []
        self.deleted: list[str] = []

    def add_vif(self, vif: Any) -> None:
        self.added.append(vif.port_id)

    def delete_vif(self, port_id: str, bridge: str, container: str) -> None:
        self.deleted.append(port_id)


def make(db: Database, neutron: FakeNeutron) -> tuple[NeutronNetworks, FakeVifs]:
    vifs = FakeVifs()
    return NeutronNetworks(db, client=vifs, neutron=neutron, host="h1"), vifs  # type: ignore[arg-type]


def row(db: Database, users_port: str | None = None, **extra: Any) -> Any:
    entries = [{"network": "n1", "ifname": "eth0", "port": None, "fixed_ip": None}]
    if users_port:
        entries.append({"network": "n1", "ifname": "eth1", "port": users_port,
                        "fixed_ip": None, "preserve_on_delete": True})
    return containers.create(db, {"project_id": "p1", "status": "Creating", "host": "h1",
                                  "cni_metadata": {"networks": entries}, **extra})


def test_the_plug_claims_what_the_reservation_made(db: Database) -> None:
    neutron = FakeNeutron()
    networks, vifs = make(db, neutron)
    r = row(db, users_port="users", exposed_ports={"80/tcp": {}})
    networks.reserve(r)
    assert neutron.of("create_port") == ["port-1"] and neutron.of("bind_port") == ["users"]
    assert neutron.of("create_group") == [f"berth-{r.uuid}"]
    before = len(neutron.calls)
    values = networks.plug(r, 1234)
    assert neutron.calls[before:] == []              # nothing more asked of Neutron
    assert vifs.added == ["port-1", "users"]
    meta = values["cni_metadata"]
    assert [e["port"] for e in meta["networks"]] == ["port-1", "users"]
    assert meta["exposed_sg"] == "sg-exposed" and meta["pid"] == 1234
    networks.unplug(r)                               # nothing reserved is left to drop
    assert neutron.of("delete_port") == [] and neutron.of("delete_group") == []


def test_an_unplug_instead_of_the_plug_deletes_what_the_reservation_made(db: Database) -> None:
    neutron = FakeNeutron()
    networks, _ = make(db, neutron)
    r = row(db, users_port="users", exposed_ports={"80/tcp": {}})
    networks.reserve(r)
    networks.unplug(r)                               # the start failed
    assert neutron.of("delete_port") == ["port-1"]   # the user's port is kept
    assert neutron.of("delete_group") == ["sg-exposed"]
    networks.plug(r, 99)                             # a later start makes its own
    assert neutron.of("create_port") == ["port-1", "port-2"]


def test_a_reservation_cut_short_leaves_the_rest_to_the_plug(db: Database) -> None:
    neutron = FakeNeutron(fail_network=True)
    networks, vifs = make(db, neutron)
    r = row(db)
    networks.reserve(r)                               # the port made, its network unread
    neutron.fail_network = False
    networks.plug(r, 7)
    assert neutron.of("create_port") == ["port-1"] and vifs.added == ["port-1"]
    assert neutron.of("network") == ["n1", "n1"]


def test_a_failed_plug_deletes_the_reserved_ports_too(db: Database) -> None:
    neutron = FakeNeutron()
    networks, vifs = make(db, neutron)

    def refuse(vif: Any) -> None:
        raise NeutronError(reason="no")

    vifs.add_vif = refuse  # type: ignore[method-assign]
    r = row(db)
    networks.reserve(r)
    with pytest.raises(Exception, match="no"):
        networks.plug(r, 7)
    assert neutron.of("delete_port") == ["port-1"]


# -- the attach of one more network to a running container (plug_one) ---------------


def running(db: Database, **extra: Any) -> Any:
    """A running container whose row records no exposed ports' group: as Zun made it
    (berth's own plug records one at the start)."""
    entries = [{"network": "n1", "ifname": "eth0", "port": "zun-port", "fixed_ip": None}]
    return containers.create(db, {"project_id": "p1", "status": "Running", "host": "h1",
                                  "cni_metadata": {"networks": entries, "pid": 4321},
                                  **extra})


def test_an_attach_records_the_exposed_ports_group_it_made(db: Database) -> None:
    neutron = FakeNeutron()
    networks, vifs = make(db, neutron)
    r = running(db, exposed_ports={"80/tcp": {}})
    values = networks.attach(r, "n2", None)
    meta = values["cni_metadata"]
    assert neutron.of("create_group") == [f"berth-{r.uuid}"]
    assert meta["exposed_sg"] == "sg-exposed"                # kept: deleted with the row
    assert [e["port"] for e in meta["networks"]] == ["zun-port", "port-1"]
    assert vifs.added == ["port-1"]
    r = containers.update_(db, r.uuid, values)
    networks.attach(r, "n3", None)                           # the next attach reuses it
    assert neutron.of("create_group") == [f"berth-{r.uuid}"]


def test_a_failed_attach_deletes_the_group_it_made(db: Database) -> None:
    neutron = FakeNeutron(fail_network=True)
    networks, _ = make(db, neutron)
    r = running(db, exposed_ports={"80/tcp": {}})
    with pytest.raises(Exception, match="Neutron is down"):
        networks.attach(r, "n2", None)
    assert neutron.of("delete_port") == ["port-1"]
    assert neutron.of("delete_group") == ["sg-exposed"]
