"""The API's pure network logic: ``network_list`` in both shapes, a fixed IP
checked against its network, the row's record of its networks."""

from __future__ import annotations

import pytest

from berth.api.microversions import APIVersion
from berth.api.operations import networks as ops
from berth.common import exceptions as exc
from berth.db.models import Container, Network

NET = "5f0c7c4e-0000-4000-8000-000000000001"


def row_with_address() -> Container:
    return Container(uuid="c", addresses={NET: [
        {"addr": "10.244.0.5", "version": 4, "port": "vth1", "subnet_id": "10.244.0.0/24",
         "preserve_on_delete": False}]})


def test_network_list_has_one_entry_per_address_before_1_18() -> None:
    assert ops.network_list(row_with_address(), APIVersion(1, 17)) == {"networks": [
        {"net_id": NET, "subnet_id": "10.244.0.0/24", "port_id": "vth1", "version": 4,
         "ip_address": "10.244.0.5"}]}


def test_network_list_has_fixed_ips_per_port_from_1_18() -> None:
    assert ops.network_list(row_with_address(), APIVersion(1, 18)) == {"networks": [
        {"net_id": NET, "port_id": "vth1", "fixed_ips": [
            {"subnet_id": "10.244.0.0/24", "version": 4, "ip_address": "10.244.0.5"}]}]}


@pytest.mark.parametrize("address", ["10.244.0.0", "10.244.0.1", "10.244.0.255", "10.9.0.4"])
def test_a_fixed_ip_must_be_a_usable_host_of_the_subnet(address: str) -> None:
    network = Network(uuid=NET, name="a", subnet="10.244.0.0/24", gateway="10.244.0.1")
    with pytest.raises(exc.Invalid, match="not a usable address"):
        ops.requested_entry(network, address)
    assert ops.requested_entry(network, "10.244.0.9")["fixed_ip"] == "10.244.0.9"


def test_the_row_records_its_networks_in_interface_order() -> None:
    requested = [{"network": "n1", "fixed_ip": ""}, {"network": "n2", "fixed_ip": "10.0.0.9"}]
    assert ops.metadata_of(requested) == {"networks": [
        {"network": "n1", "ifname": "eth0", "fixed_ip": None},
        {"network": "n2", "ifname": "eth1", "fixed_ip": "10.0.0.9"}], "pid": 0}
    assert ops.metadata_of([]) is None


DUAL = Network(uuid=NET, name="d", subnet="10.244.0.0/24", gateway="10.244.0.1",
               bridge="bthx", subnet_v6="fd00:b:0:1::/64")


def test_a_v6_fixed_ip_on_a_dual_stack_network_asks_for_its_ipv4_twin() -> None:
    assert ops._v4_twin(DUAL, "fd00:b:0:1::9", None, "nets[0]") == "10.244.0.9"
    assert ops._v4_twin(DUAL, "fd00:b:0:1::9", "10.244.0.9", "nets[0]") == "10.244.0.9"
    with pytest.raises(exc.Invalid, match="IPv6 address of 10.244.0.8 is fd00:b:0:1::8"):
        ops._v4_twin(DUAL, "fd00:b:0:1::9", "10.244.0.8", "nets[0]")
    with pytest.raises(exc.Invalid, match="mirror the IPv4 ones"):
        ops._v4_twin(DUAL, "fd00:b:0:1::1:0", None, "nets[0]")
    v4_only = Network(uuid=NET, name="a", subnet="10.244.0.0/24", gateway="10.244.0.1")
    with pytest.raises(exc.Invalid, match="has no IPv6 subnet"):
        ops._v4_twin(v4_only, "fd00:b:0:1::9", None, "nets[0]")


def test_the_network_view_shows_the_ipv6_subnet_and_gateway() -> None:
    shown = ops.view(DUAL)
    assert (shown["subnet_v6"], shown["gateway_v6"]) == ("fd00:b:0:1::/64", "fd00:b:0:1::1")


def test_network_list_from_1_18_gives_a_dual_stack_interface_one_port_with_both() -> None:
    row = Container(uuid="c", addresses={NET: [
        {"addr": "10.244.0.5", "version": 4, "port": "vth1", "subnet_id": "10.244.0.0/24"},
        {"addr": "fd00:b:0:1::5", "version": 6, "port": "vth1",
         "subnet_id": "fd00:b:0:1::/64"}]})
    assert ops.network_list(row, APIVersion(1, 18)) == {"networks": [
        {"net_id": NET, "port_id": "vth1", "fixed_ips": [
            {"subnet_id": "10.244.0.0/24", "version": 4, "ip_address": "10.244.0.5"},
            {"subnet_id": "fd00:b:0:1::/64", "version": 6, "ip_address": "fd00:b:0:1::5"}]}]}
    assert len(ops.network_list(row, APIVersion(1, 17))["networks"]) == 2
