"""Dual-stack local networks, pure logic: the IPv6 twin of an address, the spec's
checks, the VIF's record, the policy's ip6tables lines and the firewall that lays
ip6tables only for dual-stack networks."""

from __future__ import annotations

import ipaddress

import pytest
from test_firewall import FakeIptables

from berth.network.base import VIF, AttachmentKey, InvalidNetworkSpec, NetworkSpec
from berth.network.firewall import NAT_CHAIN, DualStackFirewall, Firewall, nat_rules
from berth.network.policy import Member, Policy, container_chain, restore_lines

SPEC = NetworkSpec.build("n", "10.244.3.0/24", cidr6="fd00:b:3::/64")
V4_ONLY = NetworkSpec.build("m", "10.244.4.0/24")


def test_an_address_and_the_gateway_mirror_into_the_ipv6_subnet() -> None:
    assert SPEC.gateway6 == ipaddress.IPv6Address("fd00:b:3::1")
    assert SPEC.mirror6(ipaddress.IPv4Address("10.244.3.7")) == \
        ipaddress.IPv6Address("fd00:b:3::7")
    assert SPEC.interface6(ipaddress.IPv4Interface("10.244.3.254/24")) == \
        ipaddress.IPv6Interface("fd00:b:3::fe/64")
    assert SPEC.twin4(ipaddress.IPv6Address("fd00:b:3::7")) == \
        ipaddress.IPv4Address("10.244.3.7")
    assert SPEC.twin4(ipaddress.IPv6Address("fd00:b:3::100")) is None     # past the /24
    assert V4_ONLY.twin4(ipaddress.IPv6Address("fd00:b:3::7")) is None
    assert V4_ONLY.gateway6 is None
    assert V4_ONLY.interface6(ipaddress.IPv4Interface("10.244.4.9/24")) is None


@pytest.mark.parametrize("cidr6, why", [
    ("fd00:b:3::/121", "smaller than the IPv4 subnet"),
    ("fe80::/64", "cannot hold"),
    ("ff02::/64", "cannot hold"),
    ("::ffff:0:0/96", "cannot hold"),
    ("fd00:b:3::1/64", "host bits"),
    ("10.0.0.0/8", "IPv6 subnet"),
])
def test_an_ipv6_subnet_that_cannot_work_is_refused_saying_why(cidr6: str, why: str) -> None:
    with pytest.raises(InvalidNetworkSpec, match=why):
        NetworkSpec.build("n", "10.244.3.0/24", cidr6=cidr6)


def test_ipv6_needs_an_mtu_of_1280() -> None:
    with pytest.raises(InvalidNetworkSpec, match="1280"):
        NetworkSpec.build("n", "10.244.3.0/24", mtu=1200, cidr6="fd00::/64")
    assert NetworkSpec.build("n", "10.244.3.0/24", mtu=1200).mtu == 1200


def test_spec_and_vif_records_keep_the_ipv6_side_and_read_old_records() -> None:
    assert NetworkSpec.from_dict(SPEC.to_dict()) == SPEC
    assert "cidr6" not in V4_ONLY.to_dict()
    assert NetworkSpec.from_dict(V4_ONLY.to_dict()) == V4_ONLY
    key = AttachmentKey("n", "c1", "eth0")
    vif = VIF.planned(SPEC, key, "/proc/1/ns/net", "02:00:00:00:00:01",
                      ipaddress.IPv4Interface("10.244.3.7/24"))
    assert (str(vif.address6), str(vif.gateway6)) == ("fd00:b:3::7/64", "fd00:b:3::1")
    assert VIF.from_dict(vif.to_dict()) == vif
    old = VIF.planned(V4_ONLY, key, "x", "02:00:00:00:00:01",
                      ipaddress.IPv4Interface("10.244.4.7/24"))
    assert "address6" not in old.to_dict() and VIF.from_dict(old.to_dict()) == old


def _member(name: str, last: int, groups: tuple[str, ...] = (), ports: tuple[str, ...] = ()
            ) -> Member:
    v4 = ipaddress.IPv4Address(f"10.244.3.{last}")
    return Member(AttachmentKey("n", name, "eth0"), v4, Policy.build(groups, ports),
                  SPEC.mirror6(v4))


def test_the_ip6tables_policy_matches_ipv6_addresses_and_lets_neighbour_discovery_in() -> None:
    members = [_member("a", 2, ("web",), ("80/tcp",)), _member("b", 3, ("web",))]
    v4, v6 = restore_lines(SPEC, members, 4), restore_lines(SPEC, members, 6)
    assert any("-d 10.244.3.2/32" in line for line in v4)
    assert not any("fd00" in line or "icmpv6" in line for line in v4)
    assert any("-d fd00:b:3::2/128" in line for line in v6)
    assert any("-s fd00:b:3::3/128" in line for line in v6)
    assert not any("10.244" in line for line in v6)
    chain = container_chain(members[0].key)
    mine = [line for line in v6 if line.startswith(f"-A {chain} ")]
    # Neighbour discovery before the DROP that ends the container's chain.
    assert [line for line in mine if "neighbour" in line] and mine[-1].endswith("-j DROP")
    assert [line.replace("fd00:b:3::", "X") for line in v6 if "icmpv6" not in line] == \
        [line.replace("10.244.3.", "X").replace("/32", "/128") for line in v4]


def test_masquerade_in_ip6tables_takes_the_ipv6_subnet() -> None:
    masq = NetworkSpec.build("n", "10.244.3.0/24", masquerade=True, cidr6="fd00:b:3::/64")
    assert nat_rules(masq, 6)[0][:2] == ["-s", "fd00:b:3::/64"]
    assert nat_rules(masq, 4)[0][:2] == ["-s", "10.244.3.0/24"]
    assert nat_rules(NetworkSpec.build("m", "10.244.4.0/24", masquerade=True), 6) == []


def test_ip6tables_is_laid_only_for_dual_stack_networks_and_removed_with_them() -> None:
    fake4, fake6 = FakeIptables(), FakeIptables()
    firewall = DualStackFirewall(Firewall(fake4, fake4.restore),
                                 Firewall(fake6, fake6.restore, family=6))
    firewall.ensure_network(V4_ONLY)
    assert firewall.has_network(V4_ONLY)
    assert ("filter", "BERTH-FORWARD") in fake4.chains
    assert ("filter", "BERTH-FORWARD") not in fake6.chains
    firewall.ensure_network(SPEC)
    firewall.apply_policy(SPEC, [_member("a", 2, ports=("80/tcp",))])
    assert firewall.has_network(SPEC)
    assert len(fake6.chains[("filter", "BERTH-FORWARD")]) == 5
    assert any("fd00:b:3::2/128" in r for rules in fake6.chains.values() for r in rules)
    assert ("nat", NAT_CHAIN) not in fake6.chains
    firewall.remove_network(SPEC)
    assert fake6.chains[("filter", "BERTH-FORWARD")] == []
    assert not any(chain.startswith("BERTH-C-") for _, chain in fake6.chains)
    assert len(fake4.chains[("filter", "BERTH-FORWARD")]) == 5      # V4_ONLY's rules stay
