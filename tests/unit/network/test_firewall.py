"""The firewall's rule bookkeeping against a fake iptables that keeps rules in lists."""

from __future__ import annotations

import ipaddress
import random
import shlex
import subprocess
from collections.abc import Sequence

import pytest

from berth.network.base import AttachmentKey, NetworkSpec
from berth.network.firewall import FORWARD_CHAIN, NAT_CHAIN, OUTPUT_CHAIN, Firewall, reachable
from berth.network.policy import Member, Policy, container_chain, dispatch_chain, group_chain

BUILTIN = {"FORWARD", "OUTPUT", "POSTROUTING", "INPUT"}


class FakeIptables:
    """``iptables`` and ``iptables-restore --noflush`` over dicts of rule tuples."""

    def __init__(self) -> None:
        self.chains: dict[tuple[str, str], list[tuple[str, ...]]] = {
            ("filter", "FORWARD"): [("-j", "DOCKER-USER")], ("filter", "OUTPUT"): [],
            ("nat", "POSTROUTING"): []}
        self.restores = 0

    def __call__(self, args: Sequence[str]) -> subprocess.CompletedProcess[str]:
        args = [a for a in args if a != "-n"]
        assert args[0] == "-t"
        ok = subprocess.CompletedProcess(args, 0, "", "")
        bad = subprocess.CompletedProcess(args, 1, "", "No chain/target/match by that name.")
        if len(args) == 3 and args[2] == "-S":  # every chain of the table
            table = args[1]
            lines = [f"-N {c}" for (t, c) in self.chains if t == table and c not in BUILTIN]
            lines += [" ".join(["-A", c, *r]) for (t, c), rules in self.chains.items()
                      if t == table for r in rules]
            return subprocess.CompletedProcess(args, 0, "\n".join(lines) + "\n", "")
        table, op, chain, rest = args[1], args[2], args[3], tuple(args[4:])
        key = (table, chain)
        if op == "-N":
            self.chains.setdefault(key, [])
            return ok
        if key not in self.chains:
            return bad
        rules = self.chains[key]
        if op == "-L":
            return ok
        if op == "-S":
            return subprocess.CompletedProcess(
                args, 0, "".join(" ".join(["-A", chain, *r]) + "\n" for r in rules), "")
        if op == "-C":
            return ok if rest in rules else bad
        if op == "-A":
            rules.append(rest)
        elif op == "-I":
            rules.insert(int(rest[0]) - 1, rest[1:])
        elif op == "-D":
            if rest not in rules:
                return subprocess.CompletedProcess(args, 1, "", "Bad rule (does a matching "
                                                                "rule exist in that chain?).")
            rules.remove(rest)
        elif op == "-F":
            rules.clear()
        elif op == "-X":            # only an empty chain nothing jumps to, as the real one
            if rules or any(r[-1] == chain for (t, _), rs in self.chains.items()
                            if t == table for r in rs):
                return subprocess.CompletedProcess(args, 1, "", "Device or resource busy.")
            del self.chains[key]
        return ok

    def restore(self, text: str) -> subprocess.CompletedProcess[str]:
        """All or nothing, as the real one: a refused line leaves the rules as they were."""
        self.restores += 1
        saved = {key: list(rules) for key, rules in self.chains.items()}
        table = ""
        for number, line in enumerate(text.splitlines(), 1):
            if line.startswith("*"):
                table = line[1:]
            elif line.startswith(":"):
                self.chains[(table, line[1:].split()[0])] = []
            elif line.startswith("-"):
                words = shlex.split(line)
                done = self(["-t", table, *words])
                if done.returncode != 0:
                    self.chains = saved
                    return subprocess.CompletedProcess(
                        ["iptables-restore"], 1, "", f"line {number} failed: {done.stderr}")
        return subprocess.CompletedProcess(["iptables-restore"], 0, "", "")


def make() -> tuple[FakeIptables, Firewall]:
    fake = FakeIptables()
    return fake, Firewall(fake, fake.restore)


def test_network_rules_are_added_once_in_order_and_jumped_to_first() -> None:
    fake, fw = make()
    spec = NetworkSpec.build("a", "10.244.1.0/24")
    fw.ensure_network(spec)
    fw.ensure_network(spec)
    assert fake.chains[("filter", "FORWARD")][0] == ("-j", FORWARD_CHAIN)
    assert fake.chains[("filter", "OUTPUT")][0] == ("-j", OUTPUT_CHAIN)
    rules = fake.chains[("filter", FORWARD_CHAIN)]
    assert len(rules) == 5
    assert rules[0][-1] == dispatch_chain(spec)       # policies judged first
    assert rules[1][-1] == "ACCEPT" and rules[-1][-1] == "DROP"
    assert fake.chains[("filter", OUTPUT_CHAIN)] == [rules[0]]
    assert fake.chains[("filter", dispatch_chain(spec))] == []
    assert ("nat", NAT_CHAIN) not in fake.chains
    assert fw.has_network(spec)


def test_missing_rule_lays_the_whole_network_again_in_order() -> None:
    fake, fw = make()
    spec = NetworkSpec.build("a", "10.244.1.0/24")
    fw.ensure_network(spec)
    expected = list(fake.chains[("filter", FORWARD_CHAIN)])
    del fake.chains[("filter", FORWARD_CHAIN)][2]
    fw.ensure_network(spec)
    assert fake.chains[("filter", FORWARD_CHAIN)] == expected


def test_masquerade_adds_egress_and_nat_and_removal_takes_both_variants() -> None:
    fake, fw = make()
    plain = NetworkSpec.build("a", "10.244.1.0/24")
    masq = NetworkSpec.build("a", "10.244.1.0/24", masquerade=True)
    other = NetworkSpec.build("b", "10.244.2.0/24")
    fw.ensure_network(masq)
    fw.ensure_network(other)
    assert len(fake.chains[("nat", NAT_CHAIN)]) == 1
    assert len(fake.chains[("filter", FORWARD_CHAIN)]) == 6 + 5
    fw.remove_network(plain)
    assert fake.chains[("nat", NAT_CHAIN)] == []
    assert all(f"berth:{other.bridge}" in rule for rule in fake.chains[("filter", FORWARD_CHAIN)])


def test_cleanup_removes_jumps_and_chains_and_leaves_the_rest() -> None:
    fake, fw = make()
    fw.ensure_network(NetworkSpec.build("a", "10.244.1.0/24", masquerade=True))
    fw.cleanup()
    fw.cleanup()
    assert fake.chains == {("filter", "FORWARD"): [("-j", "DOCKER-USER")],
                           ("filter", "OUTPUT"): [], ("nat", "POSTROUTING"): []}


def member(ip: str, container: str, groups: tuple[str, ...] = (),
           ports: tuple[str, ...] = ()) -> Member:
    return Member(AttachmentKey("a", container, "eth0"), ipaddress.IPv4Address(ip),
                  Policy.build(groups, ports))


def test_policy_chains_hold_each_members_rules_and_follow_changes() -> None:
    fake, fw = make()
    spec = NetworkSpec.build("a", "10.244.1.0/24")
    fw.ensure_network(spec)
    web = member("10.244.1.2", "web", ports=("80/tcp",))
    db = member("10.244.1.3", "db", groups=("back",))
    app = member("10.244.1.4", "app", groups=("back", "default"))
    fw.apply_policy(spec, [web, db, app])
    assert fake.restores == 1
    dispatch = fake.chains[("filter", dispatch_chain(spec))]
    assert [r[-1] for r in dispatch] == [container_chain(m.key) for m in (web, db, app)]
    web_rules = fake.chains[("filter", container_chain(web.key))]
    assert web_rules[0][:4] == ("-m", "conntrack", "--ctstate", "RELATED,ESTABLISHED")
    assert sum("--dport" in r for r in web_rules) == 2 and web_rules[-1][-1] == "DROP"
    back = fake.chains[("filter", group_chain("a", "back"))]
    assert [r[1] for r in back] == ["10.244.1.3/32", "10.244.1.4/32"]
    # db leaves: its chain goes, the group no longer lets its address in
    fw.apply_policy(spec, [web, app])
    assert ("filter", container_chain(db.key)) not in fake.chains
    assert [r[1] for r in fake.chains[("filter", group_chain("a", "back"))]] == ["10.244.1.4/32"]
    # the network goes: every policy chain with it, the jumps first
    fw.remove_network(spec)
    assert not [c for (_, c) in fake.chains if c.startswith("BERTH-") and c not in
                (FORWARD_CHAIN, OUTPUT_CHAIN)]
    assert fake.chains[("filter", FORWARD_CHAIN)] == []


def test_collect_removes_chains_nobody_needs_and_jumps_to_them() -> None:
    fake, fw = make()
    spec = NetworkSpec.build("a", "10.244.1.0/24")
    fw.ensure_network(spec)
    fw.apply_policy(spec, [member("10.244.1.2", "x", groups=("g",))])
    keep = {dispatch_chain(spec)}
    assert fw.collect_policy_chains(keep) == 2            # container and group chains
    assert fake.chains[("filter", dispatch_chain(spec))] == []
    assert fw.collect_policy_chains(keep) == 0


def test_collect_leaves_the_chains_another_daemons_networks_reach() -> None:
    """A second berth on the host: its network's dispatch chain is not in this daemon's
    ``keep``, and the container and group chains it reaches are that berth's."""
    fake, fw = make()
    mine, theirs = (NetworkSpec.build("a", "10.244.1.0/24"),
                    NetworkSpec.build("b", "10.244.2.0/24"))
    for spec, address in ((mine, "10.244.1.2"), (theirs, "10.244.2.2")):
        fw.ensure_network(spec)
        fw.apply_policy(spec, [member(address, spec.name, groups=("g",))])
    assert fw.collect_policy_chains({dispatch_chain(mine)}) == 2    # mine only
    kept = [c for (_, c) in fake.chains if c.startswith(("BERTH-C-", "BERTH-G-"))]
    assert len(kept) == 2 and fake.chains[("filter", dispatch_chain(theirs))] != []


def test_reachable_follows_jumps_through_chains() -> None:
    listing = ("-N D\n-N C\n-N G\n-N X\n-A D -s 1.2.3.4 -j C\n-A C -j G\n-A C -j DROP\n"
               "-A X -j ACCEPT\n")
    assert reachable(listing, {"D"}) == {"D", "C", "G", "DROP"}
    assert reachable(listing, set()) == set()


def test_a_process_that_did_not_lay_the_policies_still_removes_them_all() -> None:
    fake, fw = make()
    spec = NetworkSpec.build("a", "10.244.1.0/24")
    fw.ensure_network(spec)
    fw.apply_policy(spec, [member("10.244.1.2", "x", groups=("g",), ports=("80/tcp",))])
    Firewall(fake, fake.restore).remove_network(spec)    # e.g. a test's clean-up
    assert not [c for (_, c) in fake.chains if c.startswith(("BERTH-D-", "BERTH-C-",
                                                             "BERTH-G-"))]


def policy_state(fake: FakeIptables) -> dict[str, list[tuple[str, ...]]]:
    """The policy chains' rules: a container chain's in order (its DROP is last), a
    dispatch or group chain's as a set (each rule matches one address)."""
    return {c: rules if c.startswith("BERTH-C-") else sorted(rules)
            for (t, c), rules in fake.chains.items()
            if t == "filter" and c.startswith(("BERTH-D-", "BERTH-C-", "BERTH-G-"))}


@pytest.mark.parametrize("family", [4, 6])
def test_changes_written_alone_end_where_a_whole_relay_would(family: int) -> None:
    """Random arrivals, departures and policy changes on one network: after each, the
    rules the firewall changed in place are those a firewall laying the whole policy
    anew makes; and a change costs one restore whatever the network holds."""
    rng = random.Random(family)
    spec = NetworkSpec.build("a", "10.244.1.0/24", cidr6="fd00:a::/64")
    fake = FakeIptables()
    fw = Firewall(fake, fake.restore, family=family)
    fw.ensure_network(spec)
    members: dict[str, Member] = {}
    for step in range(60):
        name = f"c{rng.randrange(12)}"
        if name in members and rng.random() < 0.4:
            del members[name]
        else:
            ip = ipaddress.IPv4Address(f"10.244.1.{2 + rng.randrange(40)}")
            groups = tuple(rng.sample(["default", "back", "front"], rng.randrange(3)))
            ports = tuple(rng.sample(["80/tcp", "53/udp"], rng.randrange(2)))
            members[name] = Member(AttachmentKey("a", name, "eth0"), ip,
                                   Policy.build(groups, ports),
                                   spec.mirror6(ip) if rng.random() < 0.8 else None)
        before = fake.restores
        fw.apply_policy(spec, list(members.values()))
        assert fake.restores - before <= 1, step
        fresh = FakeIptables()
        whole = Firewall(fresh, fresh.restore, family=family)
        whole.ensure_network(spec)
        whole.apply_policy(spec, list(members.values()))
        assert policy_state(fake) == policy_state(fresh), step


def test_a_change_writes_only_the_member_that_came_and_a_refused_one_lays_all() -> None:
    fake, fw = make()
    spec = NetworkSpec.build("a", "10.244.1.0/24")
    fw.ensure_network(spec)
    crowd = [member(f"10.244.1.{i}", f"c{i}", groups=("default",)) for i in range(2, 52)]
    fw.apply_policy(spec, crowd)
    texts: list[str] = []
    restore = fake.restore
    fw._restore = lambda text: (texts.append(text), restore(text))[1]  # type: ignore[method-assign]
    newcomer = member("10.244.1.60", "new", groups=("default",))
    fw.apply_policy(spec, [*crowd, newcomer])
    # its dispatch rule, its chain's three (replies, its group, DROP), its group rule
    assert len(texts) == 1 and texts[0].count("\n-A ") == 5
    fw.apply_policy(spec, [*crowd, newcomer])                 # nothing changed: no restore
    assert len(texts) == 1
    # Someone flushed the group chain by hand: the removal of the newcomer's rule
    # there is refused, and the whole policy is laid again (the group back whole).
    fake.chains[("filter", group_chain("a", "default"))].clear()
    fw.apply_policy(spec, crowd)
    assert len(fake.chains[("filter", group_chain("a", "default"))]) == 50
    assert ("filter", container_chain(newcomer.key)) not in fake.chains
    # ``whole`` (the daemon's sync) lays everything even when nothing changed.
    fake.chains[("filter", container_chain(crowd[0].key))].clear()
    fw.apply_policy(spec, crowd, whole=True)
    assert fake.chains[("filter", container_chain(crowd[0].key))][-1][-1] == "DROP"
