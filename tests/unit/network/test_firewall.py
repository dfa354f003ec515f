"""The firewall's rule bookkeeping against a fake iptables that keeps rules in lists."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence

from berth.network.base import NetworkSpec
from berth.network.firewall import FORWARD_CHAIN, NAT_CHAIN, Firewall


class FakeIptables:
    def __init__(self) -> None:
        self.chains: dict[tuple[str, str], list[tuple[str, ...]]] = {
            ("filter", "FORWARD"): [("-j", "DOCKER-USER")], ("nat", "POSTROUTING"): []}

    def __call__(self, args: Sequence[str]) -> subprocess.CompletedProcess[str]:
        args = [a for a in args if a != "-n"]
        assert args[0] == "-t"
        table, op, chain, rest = args[1], args[2], args[3], tuple(args[4:])
        key = (table, chain)
        ok = subprocess.CompletedProcess(args, 0, "", "")
        bad = subprocess.CompletedProcess(args, 1, "", "No chain/target/match by that name.")
        if op == "-N":
            self.chains.setdefault(key, [])
            return ok
        if key not in self.chains:
            return bad
        rules = self.chains[key]
        if op in ("-L", "-S"):
            return ok
        if op == "-C":
            return ok if rest in rules else bad
        if op == "-A":
            rules.append(rest)
        elif op == "-I":
            rules.insert(int(rest[0]) - 1, rest[1:])
        elif op == "-D":
            rules.remove(rest)
        elif op == "-F":
            rules.clear()
        elif op == "-X":
            del self.chains[key]
        return ok


def test_network_rules_are_added_once_in_order_and_jumped_to_first() -> None:
    fake = FakeIptables()
    fw = Firewall(fake)
    spec = NetworkSpec.build("a", "10.244.1.0/24")
    fw.ensure_network(spec)
    fw.ensure_network(spec)
    assert fake.chains[("filter", "FORWARD")][0] == ("-j", FORWARD_CHAIN)
    rules = fake.chains[("filter", FORWARD_CHAIN)]
    assert len(rules) == 4
    assert rules[0][-1] == "ACCEPT" and rules[-1][-1] == "DROP"
    assert ("nat", NAT_CHAIN) not in fake.chains
    assert fw.has_network(spec)


def test_missing_rule_lays_the_whole_network_again_in_order() -> None:
    fake = FakeIptables()
    fw = Firewall(fake)
    spec = NetworkSpec.build("a", "10.244.1.0/24")
    fw.ensure_network(spec)
    expected = list(fake.chains[("filter", FORWARD_CHAIN)])
    del fake.chains[("filter", FORWARD_CHAIN)][2]
    fw.ensure_network(spec)
    assert fake.chains[("filter", FORWARD_CHAIN)] == expected


def test_masquerade_adds_egress_and_nat_and_removal_takes_both_variants() -> None:
    fake = FakeIptables()
    fw = Firewall(fake)
    plain = NetworkSpec.build("a", "10.244.1.0/24")
    masq = NetworkSpec.build("a", "10.244.1.0/24", masquerade=True)
    other = NetworkSpec.build("b", "10.244.2.0/24")
    fw.ensure_network(masq)
    fw.ensure_network(other)
    assert len(fake.chains[("nat", NAT_CHAIN)]) == 1
    assert len(fake.chains[("filter", FORWARD_CHAIN)]) == 5 + 4
    fw.remove_network(plain)
    assert fake.chains[("nat", NAT_CHAIN)] == []
    assert all(f"berth:{other.bridge}" in rule for rule in fake.chains[("filter", FORWARD_CHAIN)])


def test_cleanup_removes_jumps_and_chains_and_leaves_the_rest() -> None:
    fake = FakeIptables()
    fw = Firewall(fake)
    fw.ensure_network(NetworkSpec.build("a", "10.244.1.0/24", masquerade=True))
    fw.cleanup()
    fw.cleanup()
    assert fake.chains == {("filter", "FORWARD"): [("-j", "DOCKER-USER")],
                           ("nat", "POSTROUTING"): []}
