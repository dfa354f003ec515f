from __future__ import annotations

import ipaddress

import pytest

from berth.network.base import (
    AddressExhausted,
    AddressInUse,
    AddressOutOfRange,
    InvalidNetworkSpec,
    NetworkSpec,
)
from berth.network.ipam import SubnetAllocator

IP = ipaddress.IPv4Address


def spec(cidr: str = "10.244.1.0/24", gateway: str | None = None) -> NetworkSpec:
    return NetworkSpec.build("net-a", cidr, gateway)


def test_first_allocation_skips_network_and_gateway_addresses() -> None:
    ipam = SubnetAllocator(spec())
    assert ipam.allocate() == ipaddress.IPv4Interface("10.244.1.2/24")
    assert ipam.allocate() == ipaddress.IPv4Interface("10.244.1.3/24")


def test_gateway_elsewhere_in_the_subnet_is_never_handed_out() -> None:
    ipam = SubnetAllocator(spec("10.244.1.0/29", gateway="10.244.1.3"))
    got = [ipam.allocate().ip for _ in range(ipam.capacity)]
    assert got == [IP("10.244.1.1"), IP("10.244.1.2"), IP("10.244.1.4"), IP("10.244.1.5"),
                   IP("10.244.1.6")]


def test_exhausted_subnet_raises_and_broadcast_is_never_used() -> None:
    ipam = SubnetAllocator(spec("10.244.1.0/30"))  # .1 gateway, .2 the only host
    assert ipam.allocate().ip == IP("10.244.1.2")
    with pytest.raises(AddressExhausted):
        ipam.allocate()


def test_released_address_is_not_reused_before_the_others() -> None:
    ipam = SubnetAllocator(spec("10.244.1.0/29"))
    a = ipam.allocate()
    ipam.allocate()
    assert ipam.release(a)
    assert ipam.allocate().ip == IP("10.244.1.4")


def test_allocation_wraps_round_to_released_addresses() -> None:
    ipam = SubnetAllocator(spec("10.244.1.0/29"))
    first = [ipam.allocate() for _ in range(ipam.capacity)]
    ipam.release(first[1])
    assert ipam.allocate() == first[1]


def test_release_is_idempotent() -> None:
    ipam = SubnetAllocator(spec())
    a = ipam.allocate()
    assert ipam.release(a.ip) is True
    assert ipam.release(a.ip) is False


def test_fixed_ip_is_honoured_and_then_in_use() -> None:
    ipam = SubnetAllocator(spec())
    assert ipam.allocate(IP("10.244.1.77")) == ipaddress.IPv4Interface("10.244.1.77/24")
    with pytest.raises(AddressInUse):
        ipam.allocate(IP("10.244.1.77"))


@pytest.mark.parametrize("address", ["10.244.1.0", "10.244.1.1", "10.244.1.255", "10.9.9.9"])
def test_fixed_ip_outside_the_usable_range_is_refused(address: str) -> None:
    ipam = SubnetAllocator(spec())
    with pytest.raises(AddressOutOfRange):
        ipam.allocate(IP(address))
    assert ipam.in_use == frozenset()


def test_rebuild_marks_survivors_in_use_and_continues_after_them() -> None:
    ipam = SubnetAllocator(spec(), in_use=[IP("10.244.1.2"), IP("10.244.1.9")])
    assert ipam.in_use == {IP("10.244.1.2"), IP("10.244.1.9")}
    assert ipam.allocate().ip == IP("10.244.1.10")


def test_rebuild_refuses_duplicates_and_foreign_addresses() -> None:
    with pytest.raises(AddressInUse):
        SubnetAllocator(spec(), in_use=[IP("10.244.1.2"), IP("10.244.1.2")])
    with pytest.raises(AddressOutOfRange):
        SubnetAllocator(spec(), in_use=[IP("10.244.2.2")])


def test_rebuild_forgets_earlier_allocations() -> None:
    ipam = SubnetAllocator(spec())
    ipam.allocate()
    ipam.rebuild([])
    assert ipam.in_use == frozenset()


@pytest.mark.parametrize(("cidr", "gateway"), [
    ("10.244.1.0/31", None), ("10.244.1.1/24", None), ("nonsense", None),
    ("10.244.1.0/24", "10.244.2.1"), ("10.244.1.0/24", "10.244.1.255"),
])
def test_bad_subnets_and_gateways_are_refused(cidr: str, gateway: str | None) -> None:
    with pytest.raises(InvalidNetworkSpec):
        NetworkSpec.build("n", cidr, gateway)


def test_bridge_name_is_stable_short_and_prefixed() -> None:
    a, b = NetworkSpec.build("net-a", "10.244.1.0/24"), NetworkSpec.build("net-a", "10.244.1.0/24")
    assert a.bridge == b.bridge and a.bridge.startswith("bth") and len(a.bridge) <= 15
    assert NetworkSpec.build("net-b", "10.244.1.0/24").bridge != a.bridge


def test_spec_round_trips_through_a_dict() -> None:
    a = NetworkSpec.build("net-a", "10.244.1.0/24", masquerade=True)
    assert NetworkSpec.from_dict(a.to_dict()) == a
