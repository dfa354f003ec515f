"""A container's policy from its row, and the iptables-restore body of a network."""

from __future__ import annotations

import ipaddress

import pytest

from berth.network.base import AttachmentKey, NetworkSpec
from berth.network.policy import (
    DEFAULT_GROUP,
    InvalidPolicy,
    Member,
    Policy,
    container_chain,
    dispatch_chain,
    group_chain,
    network_chains,
    restore_lines,
)


def test_zuns_defaults_default_group_unless_groups_or_exposed_ports() -> None:
    assert Policy.of_container(None, None).groups == (DEFAULT_GROUP,)
    assert Policy.of_container([], {"80/tcp": {}}) == Policy((), ((80, "tcp"),))
    assert Policy.of_container(["b", "a", "b"], None).groups == ("a", "b")


@pytest.mark.parametrize("port", ["0/tcp", "65536/tcp", "80/icmp", "80", "x/tcp"])
def test_a_port_that_cannot_be_a_rule_is_refused(port: str) -> None:
    with pytest.raises(InvalidPolicy, match="exposed port"):
        Policy.build((), [port])


def test_round_trip_and_bad_shapes() -> None:
    p = Policy.build(["g"], ["53/udp", "80/TCP"])
    assert Policy.from_dict(p.to_dict()) == p
    assert p.to_dict() == {"groups": ["g"], "ports": ["53/udp", "80/tcp"]}
    for bad in ("x", {"groups": "g"}, {"groups": [""]}):
        with pytest.raises(InvalidPolicy):
            Policy.from_dict(bad)


def test_chain_names_fit_iptables_and_differ_per_attachment() -> None:
    spec = NetworkSpec.build("net", "10.244.3.0/24")
    a, b = AttachmentKey("net", "c1", "eth0"), AttachmentKey("net", "c1", "eth1")
    names = [dispatch_chain(spec), container_chain(a), container_chain(b),
             group_chain("net", "g")]
    assert all(len(n) <= 28 for n in names) and len(set(names)) == 4
    assert group_chain("net", "g") != group_chain("other", "g")   # groups are per network


def test_restore_body_declares_every_chain_then_fills_it() -> None:
    spec = NetworkSpec.build("net", "10.244.3.0/24")
    web = Member(AttachmentKey("net", "web", "eth0"), ipaddress.IPv4Address("10.244.3.9"),
                 Policy.build((), ["80/tcp"]))
    app = Member(AttachmentKey("net", "app", "eth0"), ipaddress.IPv4Address("10.244.3.2"),
                 Policy.build(["g"], ()))
    lines = restore_lines(spec, [web, app])
    declared = [line[1:].split()[0] for line in lines if line.startswith(":")]
    assert set(declared) == network_chains(spec, [web, app])
    first_rule = next(i for i, line in enumerate(lines) if line.startswith("-A"))
    assert first_rule == len(declared)
    dispatch = [line for line in lines if line.startswith(f"-A {dispatch_chain(spec)} ")]
    assert [line.split()[3] for line in dispatch] == ["10.244.3.2/32", "10.244.3.9/32"]
    web_rules = [line for line in lines if line.startswith(f"-A {container_chain(web.key)} ")]
    assert web_rules[-1].endswith("-j DROP")
    assert any(f"-i {spec.bridge} -p tcp -m tcp --dport 80" in r for r in web_rules)
    assert any("! -i bth+ -p tcp -m tcp --dport 80" in r for r in web_rules)
    assert f"-A {group_chain('net', 'g')} -s 10.244.3.2/32" in "\n".join(lines)
