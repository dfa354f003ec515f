"""The agent's network step (berth/compute/networking.py) against a fake CNI daemon
client: the plug follows the container's process, an address is asked for again,
a failed plug leaves nothing, attach and detach pick and free interfaces."""

from __future__ import annotations

import ipaddress
from typing import Any

import pytest

from berth.cni.contract import CniError, Code
from berth.compute import networking
from berth.db import containers
from berth.db import networks as db_networks
from berth.db.engine import Database
from berth.network.base import VIF, AttachmentKey, NetworkSpec
from berth.network.policy import Policy
from berth.runtime import base as rt

POOL = db_networks.SubnetPool("10.244.0.0/22", 24)


class FakeDaemon:
    """What DaemonClient answers, from a dict of attachments; ``refuse`` makes the
    add of a network fail; addresses come from a counter unless fixed."""

    def __init__(self) -> None:
        self.attached: dict[tuple[str, str, str], VIF] = {}
        self.refuse: set[str] = set()
        self.taken: set[str] = set()
        self.calls: list[tuple[str, str, str]] = []
        self.policies: dict[str, Policy | None] = {}
        self.reserved_ips: list[str | None] = []
        self._next = 10

    def add(self, spec: NetworkSpec, container_id: str, netns: str, ifname: str = "eth0",
            fixed_ip: ipaddress.IPv4Address | None = None, mac: str | None = None,
            policy: Policy | None = None) -> VIF:
        self.calls.append(("add", spec.name, ifname))
        self.policies[container_id] = policy
        if spec.name in self.refuse:
            raise CniError(Code.DRIVER_FAILURE, "refused")
        if fixed_ip is not None and str(fixed_ip) in self.taken:
            raise CniError(Code.ADDRESS_UNAVAILABLE, f"{fixed_ip} in use")
        if fixed_ip is None:
            fixed_ip = spec.cidr.network_address + self._next
            self._next += 1
        key = AttachmentKey(spec.name, container_id, ifname)
        vif = VIF(key=key, netns=netns, mac="02:00:00:00:00:01",
                  address=ipaddress.IPv4Interface(f"{fixed_ip}/{spec.cidr.prefixlen}"),
                  gateway=spec.gateway, bridge=spec.bridge, host_ifname=key.host_ifname)
        self.attached[(spec.name, container_id, ifname)] = vif
        return vif

    def reserve(self, spec: NetworkSpec, container_id: str, ifname: str = "eth0",
                fixed_ip: ipaddress.IPv4Address | None = None,
                policy: Policy | None = None) -> None:
        self.calls.append(("reserve", spec.name, ifname))
        self.reserved_ips.append(str(fixed_ip) if fixed_ip else None)
        if spec.name in self.refuse:
            raise CniError(Code.DRIVER_FAILURE, "refused")
        if fixed_ip is not None and str(fixed_ip) in self.taken:
            raise CniError(Code.ADDRESS_UNAVAILABLE, f"{fixed_ip} in use")

    def set_policy(self, container_id: str, policy: Policy | None) -> int:
        self.calls.append(("set_policy", container_id, ""))
        self.policies[container_id] = policy
        return 1

    def delete(self, spec: NetworkSpec, container_id: str, ifname: str = "eth0",
               netns: str | None = None) -> None:
        self.calls.append(("delete", spec.name, ifname))
        self.attached.pop((spec.name, container_id, ifname), None)


@pytest.fixture
def daemon() -> FakeDaemon:
    return FakeDaemon()


@pytest.fixture
def nets(db: Database, daemon: FakeDaemon) -> networking.ContainerNetworks:
    return networking.ContainerNetworks(db, daemon)  # type: ignore[arg-type]


def row_on(db: Database, *network_uuids: str, fixed: str | None = None) -> Any:
    entries = [{"network": n, "ifname": f"eth{i}", "fixed_ip": fixed if i == 0 else None}
               for i, n in enumerate(network_uuids)]
    return containers.create(db, {"project_id": "p1", "status": "Running",
                                  "cni_metadata": {"networks": entries, "pid": 0}})


def seen(pid: int) -> rt.RuntimeContainer:
    state = rt.ContainerState(status=rt.RunState.RUNNING if pid else rt.RunState.EXITED,
                              running=bool(pid), pid=pid)
    return rt.RuntimeContainer(id="c", name="zun-x", uuid=None, image="i", state=state)


def apply(db: Database, row: Any, values: dict[str, Any]) -> Any:
    return containers.update_(db, row.uuid, values) if values else row


def test_the_plug_follows_the_process_and_asks_for_the_same_address_again(
        db: Database, nets: networking.ContainerNetworks, daemon: FakeDaemon) -> None:
    a = db_networks.create_local(db, POOL, {"name": "a"})
    row = row_on(db, a.uuid)
    assert nets.network_mode(row) == "none"
    row = apply(db, row, nets.follow(row, seen(100)))
    address = row.addresses[a.uuid][0]["addr"]
    assert row.cni_metadata["pid"] == 100 and address == "10.244.0.10"
    assert nets.follow(row, seen(100)) == {}              # same process: nothing to do
    row = apply(db, row, nets.follow(row, seen(0)))       # exited: unplugged
    assert row.cni_metadata["pid"] == 0 and not daemon.attached
    assert row.addresses[a.uuid][0]["addr"] == address    # still shown, as Zun does
    row = apply(db, row, nets.follow(row, seen(200)))     # started again
    assert row.addresses[a.uuid][0]["addr"] == address
    daemon.taken.add(address)                             # taken meanwhile: a new one
    row = apply(db, row, nets.follow(row, seen(300)))
    assert row.addresses[a.uuid][0]["addr"] != address


def test_a_fixed_ip_taken_by_another_is_an_error_and_nothing_stays_plugged(
        db: Database, nets: networking.ContainerNetworks, daemon: FakeDaemon) -> None:
    a = db_networks.create_local(db, POOL, {"name": "a"})
    b = db_networks.create_local(db, POOL, {"name": "b"})
    daemon.taken.add("10.244.0.7")
    row = row_on(db, a.uuid, fixed="10.244.0.7")
    with pytest.raises(networking.NetworkPlugFailed, match="in use"):
        nets.follow(row, seen(100))
    row = row_on(db, a.uuid, b.uuid)
    daemon.refuse.add(b.uuid)
    with pytest.raises(networking.NetworkPlugFailed):
        nets.plug(row, 100)
    assert not daemon.attached                            # eth0 on a was undone


def test_attach_takes_the_next_free_interface_and_detach_frees_it(
        db: Database, nets: networking.ContainerNetworks, daemon: FakeDaemon) -> None:
    a = db_networks.create_local(db, POOL, {"name": "a"})
    b = db_networks.create_local(db, POOL, {"name": "b"})
    c = db_networks.create_local(db, POOL, {"name": "c"})
    row = row_on(db, a.uuid)
    row = apply(db, row, nets.follow(row, seen(100)))
    row = apply(db, row, nets.attach(row, b.uuid, None))
    assert (b.uuid, row.uuid, "eth1") in daemon.attached
    assert set(row.addresses) == {a.uuid, b.uuid}
    row = apply(db, row, nets.detach(row, a.uuid))
    assert set(row.addresses) == {b.uuid} and (a.uuid, row.uuid, "eth0") not in daemon.attached
    row = apply(db, row, nets.attach(row, c.uuid, "10.244.2.9"))
    assert [(e["network"], e["ifname"]) for e in row.cni_metadata["networks"]] == \
        [(b.uuid, "eth1"), (c.uuid, "eth0")]
    assert row.addresses[c.uuid][0]["addr"] == "10.244.2.9"


def test_a_stopped_container_is_plugged_into_an_attached_network_at_its_start(
        db: Database, nets: networking.ContainerNetworks, daemon: FakeDaemon) -> None:
    a = db_networks.create_local(db, POOL, {"name": "a"})
    b = db_networks.create_local(db, POOL, {"name": "b"})
    row = row_on(db, a.uuid)
    row = apply(db, row, nets.attach(row, b.uuid, None))
    assert not daemon.attached and row.addresses == {b.uuid: []}
    row = apply(db, row, nets.follow(row, seen(100)))
    assert {k[0] for k in daemon.attached} == {a.uuid, b.uuid}


def test_without_networks_nothing_is_plugged(db: Database,
                                             nets: networking.ContainerNetworks) -> None:
    row = containers.create(db, {"project_id": "p1", "status": "Running"})
    assert nets.network_mode(row) is None and nets.follow(row, seen(100)) == {}
    assert networking.follow(None, row, seen(100)) == {}


def test_each_plug_carries_the_rows_policy_and_a_group_change_reaches_a_plugged_one(
        db: Database, nets: networking.ContainerNetworks, daemon: FakeDaemon) -> None:
    a = db_networks.create_local(db, POOL, {"name": "a"})
    row = row_on(db, a.uuid)
    row = apply(db, row, {"exposed_ports": {"80/tcp": {}}})
    row.security_groups = ["g"]
    nets.apply_security_groups(row)                       # unplugged: nothing to tell
    assert ("set_policy", row.uuid, "") not in daemon.calls
    row.security_groups = []
    row = apply(db, row, nets.follow(row, seen(100)))
    assert daemon.policies[row.uuid] == Policy.build((), ["80/tcp"])
    row.security_groups = ["g"]
    nets.apply_security_groups(row)
    assert daemon.policies[row.uuid] == Policy.build(["g"], ["80/tcp"])
    plain = row_on(db, a.uuid)
    apply(db, plain, nets.follow(plain, seen(101)))
    assert daemon.policies[plain.uuid] == Policy.build(["default"])


def test_a_reservation_asks_for_what_the_plug_asks_for_and_never_fails_the_flow(
        db: Database, nets: networking.ContainerNetworks, daemon: FakeDaemon) -> None:
    a = db_networks.create_local(db, POOL, {"name": "a"})
    b = db_networks.create_local(db, POOL, {"name": "b"})
    row = row_on(db, a.uuid, b.uuid, fixed="10.244.0.7")
    networking.reserve(nets, row)
    assert [c for c in daemon.calls if c[0] == "reserve"] == [
        ("reserve", a.uuid, "eth0"), ("reserve", b.uuid, "eth1")]
    assert daemon.reserved_ips == ["10.244.0.7", None]
    row = apply(db, row, nets.follow(row, seen(100)))      # the plug asks the same
    held = row.addresses[b.uuid][0]["addr"]
    row = apply(db, row, nets.follow(row, seen(0)))
    daemon.calls.clear()
    daemon.reserved_ips.clear()
    daemon.taken.add(held)                                 # its old address went meanwhile
    networking.reserve(nets, row)
    assert daemon.reserved_ips == ["10.244.0.7", held, None]   # asked again without it
    daemon.refuse.add(a.uuid)                              # a refusal is the plug's to report
    networking.reserve(nets, row)
    with pytest.raises(networking.NetworkPlugFailed):
        nets.follow(row, seen(200))
    plain = containers.create(db, {"project_id": "p1", "status": "Running"})
    daemon.calls.clear()
    networking.reserve(nets, plain)
    networking.reserve(None, row)
    assert daemon.calls == []


def test_a_networks_spec_is_read_once_for_a_reservation_and_its_plug(
        db: Database, nets: networking.ContainerNetworks, monkeypatch: pytest.MonkeyPatch
        ) -> None:
    """The plug after a start reuses the spec its reservation read (a network's
    subnets, gateway and bridge never change); after ``SPEC_TTL`` it is read again,
    and a network gone by then is NetworkNotFound."""
    from berth.common import exceptions as exc

    a = db_networks.create_local(db, POOL, {"name": "a"})
    reads: list[str] = []
    real = db_networks.find_by_uuid
    monkeypatch.setattr(db_networks, "find_by_uuid",
                        lambda d, u: reads.append(u) or real(d, u))
    clock = [1000.0]
    monkeypatch.setattr(networking.time, "monotonic", lambda: clock[0])
    row = row_on(db, a.uuid)
    nets.reserve(row)
    apply(db, row, nets.follow(row, seen(100)))
    assert reads == [a.uuid]
    assert nets.spec(a.uuid) == db_networks.spec_of(real(db, a.uuid))
    db_networks.destroy(db, a.uuid)
    clock[0] += nets.SPEC_TTL + 1
    with pytest.raises(exc.NetworkNotFound):
        nets.spec(a.uuid)
