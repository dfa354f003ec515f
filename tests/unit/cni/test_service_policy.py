"""CniService and policies: laid before the interface exists, changed by set_policy,
taken away with the attachment, and laid again after a restart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.fake_network import FakeDriver, FakeFirewall

from berth.cni.contract import CniError, CniRequest, parse_request
from berth.cni.registry import Registry
from berth.cni.service import CniService
from berth.network.base import NetworkDriverError
from berth.network.policy import Policy

CONFIG = {"cniVersion": "1.0.0", "name": "net-a", "type": "berth-cni",
          "ipam": {"subnet": "10.244.1.0/29"}}


def request(netns: Path, container: str = "c1", policy: dict[str, object] | None = None,
            command: str = "ADD") -> CniRequest:
    config: dict[str, object] = dict(CONFIG)
    if policy is not None:
        config["runtimeConfig"] = {"berthPolicy": policy}
    env = {"CNI_COMMAND": command, "CNI_CONTAINERID": container, "CNI_IFNAME": "eth0",
           "CNI_NETNS": str(netns), "CNI_ARGS": ""}
    return parse_request(env, json.dumps(config).encode())


class WatchingDriver(FakeDriver):
    """Records what the firewall held when each interface was made."""

    def __init__(self, firewall: FakeFirewall) -> None:
        super().__init__()
        self.firewall, self.seen_at_attach = firewall, []  # type: ignore[var-annotated]

    def attach(self, spec, key, netns, address, mac=None):  # type: ignore[no-untyped-def]
        self.seen_at_attach.append(dict(self.firewall.policies.get(spec.name, {})))
        return super().attach(spec, key, netns, address, mac)


def make(tmp_path: Path) -> tuple[CniService, WatchingDriver, FakeFirewall]:
    firewall = FakeFirewall()
    driver = WatchingDriver(firewall)
    service = CniService(driver, firewall, Registry(str(tmp_path / "reg.json")))
    service.recover()
    return service, driver, firewall


def ns(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    path.write_text("")
    return path


def test_the_policy_is_in_place_before_the_interface_exists(tmp_path: Path) -> None:
    service, driver, _firewall = make(tmp_path)
    vif = service.add(request(ns(tmp_path, "n1"), policy={"groups": ["g"], "ports": []}))
    assert driver.seen_at_attach == [{str(vif.key): Policy.build(["g"])}]
    assert service.registry.get(vif.key).policy == Policy.build(["g"])  # type: ignore[union-attr]


def test_no_policy_costs_no_firewall_call(tmp_path: Path) -> None:
    service, _, firewall = make(tmp_path)
    vif = service.add(request(ns(tmp_path, "n1")))
    service.delete(request(ns(tmp_path, "n1"), command="DEL"))
    assert firewall.policies == {} and vif is not None


def test_set_policy_changes_every_attachment_of_the_container_only(tmp_path: Path) -> None:
    service, _, firewall = make(tmp_path)
    a = service.add(request(ns(tmp_path, "n1"), "c1", {"groups": ["x"]}))
    b = service.add(request(ns(tmp_path, "n2"), "c2", {"groups": ["x"]}))
    assert service.set_policy("c1", Policy.build(["y"])) == 1
    assert service.set_policy("c1", Policy.build(["y"])) == 0       # unchanged
    assert service.set_policy("nobody", Policy.build(["y"])) == 0
    laid = firewall.policies["net-a"]
    assert laid == {str(a.key): Policy.build(["y"]), str(b.key): Policy.build(["x"])}


def test_a_failed_add_and_a_delete_take_the_policy_away(tmp_path: Path) -> None:
    service, driver, firewall = make(tmp_path)
    keep = service.add(request(ns(tmp_path, "n1"), "keep", {"groups": ["g"]}))
    driver.fail_attach = True
    with pytest.raises(NetworkDriverError):
        service.add(request(ns(tmp_path, "n2"), "c2", {"groups": ["g"]}))
    assert set(firewall.policies["net-a"]) == {str(keep.key)}
    driver.fail_attach = False
    service.delete(request(ns(tmp_path, "n1"), "keep", command="DEL"))
    assert "net-a" not in firewall.networks        # the network went with its last member


def test_a_restarted_service_lays_the_recorded_policies_again(tmp_path: Path) -> None:
    service, _, _ = make(tmp_path)
    vif = service.add(request(ns(tmp_path, "n1"), policy={"ports": ["80/tcp"]}))
    again, _, firewall = make(tmp_path)
    assert firewall.policies["net-a"] == {str(vif.key): Policy.build((), ["80/tcp"])}
    assert again.registry.get(vif.key).policy == Policy.build((), ["80/tcp"])  # type: ignore[union-attr]


def test_a_bad_policy_is_a_configuration_error() -> None:
    with pytest.raises(CniError) as caught:
        request(Path("/proc/self/ns/net"), policy={"ports": ["http"]})
    assert caught.value.code == 7 and "berthPolicy" in caught.value.msg


def test_a_dual_stack_attachment_keeps_its_ipv6_twin_and_its_policy_names_it(
        tmp_path: Path) -> None:
    service, _driver, firewall = make(tmp_path)
    config = {**CONFIG, "ipam": {"subnet": "10.244.1.0/29", "subnet6": "fd00:b:1::/64"}}
    env = {"CNI_COMMAND": "ADD", "CNI_CONTAINERID": "c1", "CNI_IFNAME": "eth0",
           "CNI_NETNS": str(ns(tmp_path, "n1")), "CNI_ARGS": ""}
    vif = service.add(parse_request(env, json.dumps(
        {**config, "runtimeConfig": {"berthPolicy": {"groups": ["g"], "ports": []}}}).encode()))
    assert (str(vif.address6), str(vif.gateway6)) == (
        f"fd00:b:1::{vif.address.ip.packed[-1]:x}/64", "fd00:b:1::1")
    (member,) = firewall.members["net-a"]
    assert member.address6 == vif.address6.ip
    # A restarted daemon reads both back from its registry.
    again = CniService(_driver, firewall, Registry(str(tmp_path / "reg.json")))
    again.recover()
    (entry,) = again.registry.entries("net-a")
    assert entry.vif.address6 == vif.address6
    assert again.registry.network("net-a").cidr6 is not None
