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
