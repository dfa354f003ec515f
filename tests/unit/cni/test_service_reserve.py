"""CniService.reserve: the address and the policy's rules laid before the namespace
exists, claimed by the ADD that follows, dropped by a DEL, by a restart, or by the
sync pass once no ADD came."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.fake_network import FakeDriver, FakeFirewall

from berth.cni import service as service_module
from berth.cni.contract import CniRequest, parse_request
from berth.cni.registry import Registry, State
from berth.cni.service import CniService
from berth.network.base import AddressInUse

CONFIG = {"cniVersion": "1.0.0", "name": "net-a", "type": "berth-cni",
          "ipam": {"subnet": "10.244.1.0/29"}}
POLICY = {"groups": ["default"], "ports": ["80/tcp"]}


def request(netns: Path | None, container: str = "c1", ip: str = "",
            policy: dict[str, object] | None = POLICY, command: str = "ADD") -> CniRequest:
    config: dict[str, object] = dict(CONFIG)
    if policy is not None:
        config["runtimeConfig"] = {"berthPolicy": policy}
    env = {"CNI_COMMAND": command, "CNI_CONTAINERID": container, "CNI_IFNAME": "eth0",
           "CNI_NETNS": str(netns) if netns else "", "CNI_ARGS": f"IP={ip}" if ip else ""}
    return parse_request(env, json.dumps(config).encode(), netns_required=netns is not None)


class CountingFirewall(FakeFirewall):
    def __init__(self) -> None:
        super().__init__()
        self.laid = 0

    def apply_policy(self, spec, members, whole=False):  # type: ignore[no-untyped-def]
        self.laid += 1
        super().apply_policy(spec, members, whole)


@pytest.fixture
def netns(tmp_path: Path) -> Path:
    path = tmp_path / "ns1"
    path.write_text("")
    return path


@pytest.fixture
def parts(tmp_path: Path) -> tuple[CniService, FakeDriver, CountingFirewall]:
    driver, firewall = FakeDriver(), CountingFirewall()
    service = CniService(driver, firewall, Registry(str(tmp_path / "reg.json")))
    service.recover()
    return service, driver, firewall


def test_reserve_takes_the_address_and_lays_the_policy_before_any_interface(parts) -> None:  # type: ignore[no-untyped-def]
    service, driver, firewall = parts
    service.reserve(request(None))
    (entry,) = service.registry.entries()
    assert entry.state is State.RESERVED and str(entry.vif.address) == "10.244.1.2/29"
    assert driver.veths == {} and len(driver.bridges) == 1
    assert list(firewall.policies["net-a"]) == [str(entry.key)]


def test_the_add_claims_the_reservation_without_laying_the_policy_again(parts, netns) -> None:  # type: ignore[no-untyped-def]
    service, driver, firewall = parts
    service.reserve(request(None))
    laid = firewall.laid
    vif = service.add(request(netns))
    assert str(vif.address) == "10.244.1.2/29" and set(driver.veths) == {vif.host_ifname}
    assert firewall.laid == laid
    (entry,) = service.registry.entries()
    assert entry.state is State.ACTIVE


def test_an_add_with_another_policy_lays_it(parts, netns) -> None:  # type: ignore[no-untyped-def]
    service, _, firewall = parts
    service.reserve(request(None))
    service.add(request(netns, policy={"groups": ["web"], "ports": []}))
    (policy,) = firewall.policies["net-a"].values()
    assert policy.to_dict()["groups"] == ["web"]


def test_an_add_asking_another_address_replaces_the_reservation(parts, netns) -> None:  # type: ignore[no-untyped-def]
    service, *_ = parts
    service.reserve(request(None))
    vif = service.add(request(netns, ip="10.244.1.5"))
    assert str(vif.address) == "10.244.1.5/29"
    assert [str(e.vif.address) for e in service.registry.entries()] == ["10.244.1.5/29"]


def test_a_fixed_address_is_reserved_and_a_taken_one_refused(parts) -> None:  # type: ignore[no-untyped-def]
    service, *_ = parts
    service.reserve(request(None, ip="10.244.1.4"))
    with pytest.raises(AddressInUse):
        service.reserve(request(None, container="c2", ip="10.244.1.4"))
    assert len(service.registry.entries()) == 1


def test_reserving_again_keeps_the_address(parts) -> None:  # type: ignore[no-untyped-def]
    service, *_ = parts
    service.reserve(request(None))
    service.reserve(request(None))
    assert [str(e.vif.address) for e in service.registry.entries()] == ["10.244.1.2/29"]


def test_reserving_an_attached_key_changes_nothing(parts, netns) -> None:  # type: ignore[no-untyped-def]
    service, *_ = parts
    vif = service.add(request(netns))
    service.reserve(request(None))
    (entry,) = service.registry.entries()
    assert entry.state is State.ACTIVE and entry.vif == vif


def test_del_drops_a_reservation_and_its_network(parts) -> None:  # type: ignore[no-untyped-def]
    service, driver, firewall = parts
    service.reserve(request(None))
    service.delete(request(None, command="DEL"))
    assert service.registry.entries() == [] and driver.bridges == set()
    assert firewall.networks == {}


def test_a_restarted_daemon_drops_reservations(parts, tmp_path) -> None:  # type: ignore[no-untyped-def]
    service, driver, firewall = parts
    service.reserve(request(None))
    again = CniService(driver, firewall, Registry(str(tmp_path / "reg.json")))
    again.recover()
    assert again.registry.entries() == []
    assert str(again.add(request(tmp_path / "reg.json")).address) == "10.244.1.2/29"


def test_sync_keeps_a_fresh_reservation_and_drops_an_old_one(parts, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    service, *_ = parts
    service.reserve(request(None))
    assert service.sync() == 0 and len(service.registry.entries()) == 1
    (entry,) = service.registry.entries()
    later = entry.reserved_at + service_module.RESERVATION_TTL + 1
    monkeypatch.setattr(service_module.time, "time", lambda: later)
    assert service.sync() == 1 and service.registry.entries() == []

