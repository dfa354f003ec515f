"""The options and IPAM configuration of a Neutron network's Docker network of the
kuryr plugin (Zun's: the network and subnets by id, one subnet per IP version)."""

from __future__ import annotations

import pytest

from berth.common.exceptions import NetworkPlugFailed
from berth.network.kuryr.docker_networks import docker_options
from berth.network.neutron.client import Network, Subnet


def net(*subnets: Subnet, shared: bool = False) -> Network:
    return Network(id="n1", name="kuryr-a", project_id="p", shared=shared, mtu=1500,
                   subnets=subnets)


def test_a_dual_stack_network_names_both_subnets_and_their_gateways() -> None:
    options, ipam = docker_options(net(Subnet("s4", "10.0.0.0/24", 4, "10.0.0.1"),
                                       Subnet("s6", "fd00::/64", 6, None), shared=True),
                                   "kuryr")
    assert options == {"neutron.net.uuid": "n1", "neutron.net.shared": "True",
                       "neutron.subnet.uuid": "s4", "neutron.subnet.v6.uuid": "s6"}
    assert ipam["Driver"] == "kuryr"
    assert ipam["Options"] == {"neutron.net.shared": "True", "neutron.subnet.uuid": "s4",
                               "neutron.subnet.v6.uuid": "s6"}
    assert ipam["Config"] == [{"Subnet": "10.0.0.0/24", "Gateway": "10.0.0.1"},
                              {"Subnet": "fd00::/64"}]


def test_a_network_without_subnet_or_with_two_of_one_version_is_refused() -> None:
    with pytest.raises(NetworkPlugFailed, match="no subnet"):
        docker_options(net(), "kuryr")
    with pytest.raises(NetworkPlugFailed, match="2 IPv4 subnets"):
        docker_options(net(Subnet("a", "10.0.0.0/24", 4, None),
                           Subnet("b", "10.0.1.0/24", 4, None)), "kuryr")
