"""The overlay's pure logic: names, MTU, VNI range, and the tables a node wants."""

from __future__ import annotations

import ipaddress

import pytest

from berth.network.base import InvalidNetworkSpec, NetworkSpec
from berth.network.overlay.plan import (
    Member,
    Tables,
    changes,
    check_vni,
    device_name,
    host_mac,
    host_owner,
    is_host_owner,
    overlay_mtu,
    policy_members,
    wanted,
)

SPEC = NetworkSpec.build("net-1", "10.244.3.0/24", bridge="bth0123456789a")
SPEC6 = NetworkSpec.build("net-6", "10.244.4.0/24", bridge="bth0123456789b",
                          cidr6="fd00:b:4::/64")
IP = ipaddress.IPv4Address


def member(last: int, host: str, tunnel: str = "192.0.2.9", mac: str = "") -> Member:
    return Member(IP(f"10.244.3.{last}"), mac or f"02:00:00:00:00:{last:02X}", host, IP(tunnel))


def test_the_device_is_named_after_its_bridge_and_fits_an_interface_name() -> None:
    assert device_name(SPEC) == "bvx0123456789a"
    assert len(device_name(SPEC)) <= 15


def test_the_mtu_leaves_fifty_bytes_for_vxlan_over_ipv4() -> None:
    assert overlay_mtu(1500) == 1450
    assert overlay_mtu(9000) == 8950
    with pytest.raises(InvalidNetworkSpec, match="below 576"):
        overlay_mtu(600)


def test_a_vni_is_24_bits_and_not_zero() -> None:
    assert check_vni(1) == 1 and check_vni(2 ** 24 - 1) == 2 ** 24 - 1
    for bad in (0, 2 ** 24, -3):
        with pytest.raises(InvalidNetworkSpec, match="VNI"):
            check_vni(bad)


def test_a_node_wants_the_members_of_other_live_nodes_only() -> None:
    members = [member(2, "me"), member(3, "b", "192.0.2.2"), member(4, "dead", "192.0.2.4"),
               member(5, "c", "192.0.2.3"),
               Member(IP("10.9.9.9"), "02:00:00:00:00:99", "b", IP("192.0.2.2"))]
    tables = wanted(SPEC, members, me="me", live={"me", "b", "c"})
    assert tables.fdb == {"02:00:00:00:00:03": IP("192.0.2.2"),
                          "02:00:00:00:00:05": IP("192.0.2.3")}
    assert tables.neigh == {IP("10.244.3.3"): "02:00:00:00:00:03",
                            IP("10.244.3.5"): "02:00:00:00:00:05"}


def test_a_dual_stack_member_has_its_ipv6_twin_as_a_neighbour_too() -> None:
    m = Member(IP("10.244.4.7"), "02:00:00:00:00:07", "b", IP("192.0.2.2"))
    tables = wanted(SPEC6, [m], me="me", live={"b"})
    assert tables.neigh == {IP("10.244.4.7"): "02:00:00:00:00:07",
                            ipaddress.IPv6Address("fd00:b:4::7"): "02:00:00:00:00:07"}


def test_a_node_s_own_address_is_a_member_without_ipv6_twin_or_policy() -> None:
    owner = host_owner("b")
    assert is_host_owner(owner) and not is_host_owner("net-6/ctr/eth0")
    mac = host_mac("net-6", "b")
    assert mac != host_mac("net-6", "c") and mac != host_mac("net-1", "b")
    assert int(mac.split(":")[0], 16) & 0b11 == 0b10     # local, unicast
    node_b = Member(IP("10.244.4.9"), mac, "b", IP("192.0.2.2"), owner)
    tables = wanted(SPEC6, [node_b], me="me", live={"b"})
    assert tables.fdb == {mac: IP("192.0.2.2")}
    assert tables.neigh == {IP("10.244.4.9"): mac}
    assert policy_members(SPEC6, [node_b], me="me", live={"b"}) == []


def test_changes_add_remove_and_replace_what_moved() -> None:
    have = Tables({"02:00:00:00:00:01": IP("192.0.2.2"), "02:00:00:00:00:02": IP("192.0.2.2"),
                   "02:00:00:00:00:03": IP("192.0.2.3")},
                  {IP("10.244.3.1"): "02:00:00:00:00:01", IP("10.244.3.2"): "02:00:00:00:00:02"})
    want = Tables({"02:00:00:00:00:01": IP("192.0.2.2"), "02:00:00:00:00:02": IP("192.0.2.4"),
                   "02:00:00:00:00:04": IP("192.0.2.3")},
                  {IP("10.244.3.1"): "02:00:00:00:00:01", IP("10.244.3.2"): "02:00:00:00:00:04"})
    change = changes(have, want)
    assert change.fdb_set == {"02:00:00:00:00:02": IP("192.0.2.4"),
                              "02:00:00:00:00:04": IP("192.0.2.3")}
    assert change.fdb_del == {"02:00:00:00:00:03": IP("192.0.2.3")}
    assert change.neigh_set == {IP("10.244.3.2"): "02:00:00:00:00:04"}
    assert change.neigh_del == {}
    assert len(change) == 4 and change
    assert not changes(want, want)
