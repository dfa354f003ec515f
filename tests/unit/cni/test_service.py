"""CniService's bookkeeping (registry, IPAM, undo, recovery, sync) over a fake driver.

Namespaces are plain files here: the service only needs a path whose identity
(device, inode) it can read; the real thing is in tests/functional/network.
"""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path

import pytest
from support.fake_network import FakeDriver, FakeFirewall

from berth.cni.contract import CniError, CniRequest, parse_request
from berth.cni.registry import Entry, Registry, State
from berth.cni.service import CniService
from berth.network import netns as ns
from berth.network.base import (
    VIF,
    AddressInUse,
    AttachmentKey,
    AttachmentMismatch,
    NetnsNotFound,
    NetworkDriverError,
    NetworkSpec,
    VIFNotReady,
)


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


CONFIG = {"cniVersion": "1.0.0", "name": "net-a", "type": "berth-cni",
          "ipam": {"subnet": "10.244.1.0/29"}}


def request(netns: Path | None, command: str = "ADD", container: str = "c1", args: str = "",
            config: dict[str, object] | None = None) -> CniRequest:
    env = {"CNI_COMMAND": command, "CNI_CONTAINERID": container, "CNI_IFNAME": "eth0",
           "CNI_NETNS": str(netns) if netns else "", "CNI_ARGS": args}
    return parse_request(env, json.dumps(config or CONFIG).encode())


@pytest.fixture
def netns(tmp_path: Path) -> Path:
    path = tmp_path / "ns1"
    path.write_text("")
    return path


@pytest.fixture
def parts(tmp_path: Path) -> tuple[CniService, FakeDriver, FakeFirewall, FakeClock]:
    driver, firewall, clock = FakeDriver(), FakeFirewall(), FakeClock()
    service = CniService(driver, firewall, Registry(str(tmp_path / "reg.json")),
                         vif_active_timeout=5, clock=clock, sleep=clock.sleep)
    service.recover()
    return service, driver, firewall, clock


def test_add_plugs_records_and_persists(parts, netns, tmp_path) -> None:  # type: ignore[no-untyped-def]
    service, driver, firewall, _ = parts
    vif = service.add(request(netns))
    assert str(vif.address) == "10.244.1.2/29"
    assert set(driver.veths) == {vif.host_ifname} and "net-a" in firewall.networks
    saved = json.loads((tmp_path / "reg.json").read_text())
    assert [a["state"] for a in saved["attachments"]] == ["active"]


def test_add_again_answers_the_same_attachment(parts, netns) -> None:  # type: ignore[no-untyped-def]
    service, *_ = parts
    assert service.add(request(netns)) == service.add(request(netns))


def test_fixed_ip_taken_is_refused_and_leaves_nothing(parts, netns, tmp_path) -> None:  # type: ignore[no-untyped-def]
    service, driver, *_ = parts
    service.add(request(netns, args="IP=10.244.1.5"))
    other = tmp_path / "ns2"
    other.write_text("")
    with pytest.raises(AddressInUse):
        service.add(request(other, container="c2", args="IP=10.244.1.5"))
    assert len(driver.veths) == 1 and len(service.registry.entries()) == 1


def test_missing_namespace_is_refused_before_anything_is_made(parts, tmp_path) -> None:  # type: ignore[no-untyped-def]
    service, driver, *_ = parts
    with pytest.raises(NetnsNotFound):
        service.add(request(tmp_path / "nope"))
    assert driver.bridges == set() and service.registry.entries() == []


def test_failed_attach_is_undone_and_the_network_dropped(parts, netns) -> None:  # type: ignore[no-untyped-def]
    service, driver, firewall, _ = parts
    driver.fail_attach = True
    with pytest.raises(NetworkDriverError):
        service.add(request(netns))
    assert driver.bridges == set() and firewall.networks == {}
    assert service.registry.entries() == [] and service.registry.networks() == []
    driver.fail_attach = False
    assert str(service.add(request(netns)).address) == "10.244.1.2/29"  # address came back


def test_interface_never_ready_times_out_and_is_undone(parts, netns) -> None:  # type: ignore[no-untyped-def]
    service, driver, _, clock = parts
    driver.ready = False
    with pytest.raises(VIFNotReady):
        service.add(request(netns))
    assert clock.now >= 5
    assert driver.veths == {} and service.registry.entries() == []


def test_delete_is_idempotent_and_the_last_one_drops_the_network(parts, netns, tmp_path) -> None:  # type: ignore[no-untyped-def]
    service, driver, firewall, _ = parts
    other = tmp_path / "ns2"
    other.write_text("")
    service.add(request(netns))
    service.add(request(other, container="c2"))
    service.delete(request(netns, command="DEL"))
    assert driver.bridges and "net-a" in firewall.networks
    service.delete(request(None, command="DEL", container="c2"))
    service.delete(request(None, command="DEL", container="c2"))
    assert driver.bridges == set() and firewall.networks == {} and driver.veths == {}


def test_conflicting_configuration_of_a_network_in_use_is_code_7(parts, netns, tmp_path) -> None:  # type: ignore[no-untyped-def]
    service, *_ = parts
    service.add(request(netns))
    other = tmp_path / "ns2"
    other.write_text("")
    with pytest.raises(CniError) as err:
        service.add(request(other, container="c2",
                            config={**CONFIG, "ipam": {"subnet": "10.244.9.0/24"}}))
    assert err.value.code == 7
    with pytest.raises(CniError):  # another network on an overlapping subnet
        service.add(request(other, container="c2",
                            config={**CONFIG, "name": "net-b",
                                    "ipam": {"subnet": "10.244.1.0/24"}}))


def test_check_finds_a_missing_veth_and_missing_rules(parts, netns) -> None:  # type: ignore[no-untyped-def]
    service, driver, firewall, _ = parts
    vif = service.add(request(netns))
    service.check(request(netns, command="CHECK"))
    firewall.networks.clear()
    with pytest.raises(AttachmentMismatch):
        service.check(request(netns, command="CHECK"))
    firewall.networks["net-a"] = service.registry.network("net-a")  # type: ignore[assignment]
    del driver.veths[vif.host_ifname]
    with pytest.raises(AttachmentMismatch):
        service.check(request(netns, command="CHECK"))


def test_recovery_undoes_half_made_work_and_keeps_active_addresses(tmp_path, netns) -> None:  # type: ignore[no-untyped-def]
    registry = Registry(str(tmp_path / "reg.json"))
    spec = NetworkSpec.build("net-a", "10.244.1.0/29")
    made = []
    for container, state in (("c1", State.ACTIVE), ("c2", State.PLUGGING),
                             ("c3", State.DELETING)):
        key = AttachmentKey("net-a", container, "eth0")
        vif = VIF(key=key, netns=str(netns), mac="02:00:00:00:00:01",
                  address=ipaddress.IPv4Interface(f"10.244.1.{len(made) + 2}/29"),
                  gateway=spec.gateway, bridge=spec.bridge, host_ifname=key.host_ifname)
        made.append(vif)
        registry.put(Entry(vif, state, str(ns.identity(str(netns)))), spec)
    driver, firewall = FakeDriver(), FakeFirewall()
    driver.veths = {v.host_ifname: v for v in made}
    driver.extra = {"vth00000000000"}
    service = CniService(driver, firewall, Registry(registry.path))
    service.recover()
    assert [e.key.container_id for e in service.registry.entries()] == ["c1"]
    assert set(driver.veths) == {made[0].host_ifname} and driver.extra == set()
    assert spec.bridge in driver.bridges and "net-a" in firewall.networks
    other = tmp_path / "ns2"
    other.write_text("")
    assert str(service.add(request(other, container="c9")).address) == "10.244.1.3/29"


def test_sync_removes_attachments_whose_namespace_is_gone(parts, netns) -> None:  # type: ignore[no-untyped-def]
    service, driver, _, _ = parts
    service.add(request(netns))
    assert service.sync() == 0
    netns.unlink()
    assert service.sync() == 1
    assert service.registry.entries() == [] and driver.veths == {} and driver.bridges == set()


def test_sync_lays_missing_rules_again(parts, netns) -> None:  # type: ignore[no-untyped-def]
    service, _, firewall, _ = parts
    service.add(request(netns))
    firewall.networks.clear()
    service.sync()
    assert "net-a" in firewall.networks


def test_sync_goes_on_past_an_attachment_it_cannot_remove(parts, netns, tmp_path) -> None:  # type: ignore[no-untyped-def]
    service, driver, _, _ = parts
    other = tmp_path / "ns2"
    other.write_text("")
    stuck = service.add(request(netns))
    service.add(request(other, container="c2"))
    netns.unlink()
    other.unlink()
    real_detach = driver.detach

    def detach(key, netns=None):  # type: ignore[no-untyped-def]
        if key == stuck.key:
            raise NetworkDriverError(reason="netlink busy")
        real_detach(key, netns)

    driver.detach = detach  # type: ignore[method-assign]
    assert service.sync() == 1
    assert [e.key for e in service.registry.entries()] == [stuck.key]
    driver.detach = real_detach  # type: ignore[method-assign]
    assert service.sync() == 1  # the next pass finishes it
    assert service.registry.entries() == [] and driver.bridges == set()
