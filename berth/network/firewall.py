"""The iptables rules berth owns: its own chains, nothing else touched.

::

    filter FORWARD ──(first rule)──► BERTH-FORWARD, per network on bridge BR:
        -o BR                                         BERTH-D-<BR>  the containers' policies
        -i BR -o BR                                   ACCEPT  members talk to each other
        -i BR -o bth+                                 DROP    never into another berth network
        -i BR                                         ACCEPT  egress (masquerade networks only)
        -o BR -m conntrack --ctstate RELATED,ESTABLISHED ACCEPT  replies to what went out
        -o BR                                         DROP    nothing else comes in
    filter OUTPUT ──(first rule)──► BERTH-OUTPUT, per network:
        -o BR                                         BERTH-D-<BR>  the host, under the same
    nat POSTROUTING ──► BERTH-POSTROUTING (masquerade networks only):
        -s CIDR ! -o BR                               MASQUERADE

``BERTH-D-<BR>`` holds the security groups and exposed ports of the network's
containers (``berth.network.policy``); it is empty until one has a policy, and then
only its containers' traffic is judged there.

Why: Docker sets FORWARD's policy to DROP and br_netfilter makes frames crossing any
bridge traverse FORWARD, so without the first rule two containers on one bridge cannot
talk. The host reaches every network through its gateway address on the bridge
(INPUT/OUTPUT, not FORWARD): only a container's policy limits it. Each network's rules carry the
comment ``berth:<bridge>`` and are found again by their exact text, so adding is
idempotent (``-C`` before ``-A``), and ``remove_network`` and ``cleanup`` take away
exactly what berth added.

iptables runs as a subprocess with ``-w`` (wait for the xtables lock that Docker and
others hold at times); the runner is injectable for unit tests.

A dual-stack network (``NetworkSpec.cidr6``) has the same rules in ip6tables, laid by
a second ``Firewall`` of family 6 (``DualStackFirewall`` holds both): br_netfilter
sends bridged IPv6 frames through ip6tables' FORWARD too. Its policy chains also let
neighbour discovery reach a container (IPv6's ARP: conntrack does not count it as a
reply, and a container whose neighbours cannot ask for its address is unreachable).
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import subprocess
import threading
from collections.abc import Callable, Sequence

from berth.network.base import BRIDGE_PREFIX, AttachmentKey, FirewallError, NetworkSpec
from berth.network.policy import (
    CONTAINER_PREFIX,
    DISPATCH_PREFIX,
    GROUP_PREFIX,
    POLICY_PREFIXES,
    Member,
    change_lines,
    dispatch_chain,
    network_chains,
    restore_lines,
)

LOG = logging.getLogger(__name__)

FORWARD_CHAIN = "BERTH-FORWARD"
OUTPUT_CHAIN = "BERTH-OUTPUT"
NAT_CHAIN = "BERTH-POSTROUTING"

#: Runs one iptables command line (without the leading ``iptables -w``), returns its
#: exit status; raises FirewallError only when iptables cannot run at all.
Runner = Callable[[Sequence[str]], "subprocess.CompletedProcess[str]"]
#: Feeds one ``iptables-restore --noflush`` input, returns its exit status.
RestoreRunner = Callable[[str], "subprocess.CompletedProcess[str]"]


def run_iptables(args: Sequence[str], binary: str = "iptables"
                 ) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run([binary, "-w", *args], capture_output=True, text=True,
                              timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise FirewallError(reason=f"{binary} {' '.join(args)}: {exc}") from exc


def run_iptables_restore(text: str, binary: str = "iptables-restore"
                         ) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run([binary, "-w", "--noflush"], input=text,
                              capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise FirewallError(reason=f"{binary}: {exc}") from exc


run_ip6tables: Runner = functools.partial(run_iptables, binary="ip6tables")
run_ip6tables_restore: RestoreRunner = functools.partial(run_iptables_restore,
                                                         binary="ip6tables-restore")


def forward_rules(spec: NetworkSpec) -> list[list[str]]:
    """The rule specs (after ``-A BERTH-FORWARD``) of one network, in order."""
    br, tag = spec.bridge, ["-m", "comment", "--comment", f"berth:{spec.bridge}"]
    rules = [
        ["-o", br, *tag, "-j", dispatch_chain(spec)],
        ["-i", br, "-o", br, *tag, "-j", "ACCEPT"],
        ["-i", br, "-o", BRIDGE_PREFIX + "+", *tag, "-j", "DROP"],
    ]
    if spec.masquerade:
        rules.append(["-i", br, *tag, "-j", "ACCEPT"])
    rules += [
        ["-o", br, "-m", "conntrack", "--ctstate", "RELATED,ESTABLISHED", *tag, "-j", "ACCEPT"],
        ["-o", br, *tag, "-j", "DROP"],
    ]
    return rules


def output_rules(spec: NetworkSpec) -> list[list[str]]:
    """The rule (after ``-A BERTH-OUTPUT``) that puts the host under the policies."""
    tag = ["-m", "comment", "--comment", f"berth:{spec.bridge}"]
    return [["-o", spec.bridge, *tag, "-j", dispatch_chain(spec)]]


def nat_rules(spec: NetworkSpec, family: int = 4) -> list[list[str]]:
    source = spec.cidr if family == 4 else spec.cidr6
    if not spec.masquerade or source is None:
        return []
    tag = ["-m", "comment", "--comment", f"berth:{spec.bridge}"]
    return [["-s", str(source), "!", "-o", spec.bridge, *tag, "-j", "MASQUERADE"]]


class Firewall:
    """Thread-safe: one lock orders berth's own iptables edits (iptables' lock only
    makes each command atomic, not a check followed by an append). ``family`` 6
    (``Firewall.ipv6()``) writes the same rules with ip6tables."""

    def __init__(self, runner: Runner = run_iptables,
                 restore: RestoreRunner = run_iptables_restore, family: int = 4) -> None:
        self._run, self._restore, self.family = runner, restore, family
        self._tool = "iptables" if family == 4 else "ip6tables"
        self._lock = threading.Lock()
        # Per network: the policy chains this process laid (to remove those it no longer
        # needs), and the members it laid them for (what the next change starts from).
        self._policy_chains: dict[str, set[str]] = {}
        self._laid: dict[str, dict[AttachmentKey, Member]] = {}

    @classmethod
    def ipv6(cls) -> Firewall:
        return cls(run_ip6tables, run_ip6tables_restore, family=6)

    def ensure_network(self, spec: NetworkSpec) -> None:
        """The chains, their jumps and this network's rules are in place."""
        with self._lock:
            self._ensure_chain("filter", FORWARD_CHAIN, "FORWARD")
            self._ensure_chain("filter", OUTPUT_CHAIN, "OUTPUT")
            self._ensure_chain("filter", dispatch_chain(spec), None)
            if spec.masquerade:
                self._ensure_chain("nat", NAT_CHAIN, "POSTROUTING")
            if self._complete(spec):
                return
            # Some rule is missing (an interrupted add, a hand edit, a changed masquerade
            # setting): the order within a network matters, so lay them all again.
            self._remove(spec)
            for rule in forward_rules(spec):
                self._checked(["-t", "filter", "-A", FORWARD_CHAIN, *rule])
            for rule in output_rules(spec):
                self._checked(["-t", "filter", "-A", OUTPUT_CHAIN, *rule])
            for rule in nat_rules(spec, self.family):
                self._checked(["-t", "nat", "-A", NAT_CHAIN, *rule])
            LOG.info("%s rules in place for network %s (bridge %s%s)", self._tool,
                     spec.name, spec.bridge, ", masquerade" if spec.masquerade else "")

    def has_network(self, spec: NetworkSpec) -> bool:
        with self._lock:
            return self._complete(spec)

    def remove_network(self, spec: NetworkSpec) -> None:
        """This network's rules and policy chains are gone, whatever its masquerade
        setting was when they were added (both variants are removed); berth's shared
        chains stay."""
        with self._lock:
            self._remove(spec)
            done = self._call(["-t", "filter", "-S"])
            listing = done.stdout if done.returncode == 0 else ""
            self._laid.pop(spec.name, None)
            stale = (self._policy_chains.pop(spec.name, set())
                     | _reached_from(dispatch_chain(spec), listing))
            self._drop_chains(stale, listing)

    def apply_policy(self, spec: NetworkSpec, members: list[Member],
                     whole: bool = False) -> None:
        """The network's policy chains hold exactly ``members``' policies, in one atomic
        ``iptables-restore``. After the first call for a network, only what changed
        since the last is written (``change_lines``); ``whole``, a first call, or a
        change that iptables refuses (a rule to delete is gone: edited by hand) lay
        the network's whole policy again, and the chains of members gone since the
        last call go in the same step. Call with the network's rules in place
        (``ensure_network``)."""
        with self._lock:
            laid = self._laid.get(spec.name)
            if laid is not None and not whole:
                lines = change_lines(spec, laid, members, self.family)
                try:
                    if lines:
                        self._restore_checked(lines, f"the policy changes of network "
                                                     f"{spec.name}")
                except FirewallError as err:
                    LOG.warning("network %s: %s; laying its whole policy again", spec.name,
                                err)
                else:
                    self._laid[spec.name] = {m.key: m for m in members}
                    self._policy_chains[spec.name] = network_chains(spec, members)
                    return
            chains = network_chains(spec, members)
            stale = self._policy_chains.get(spec.name, set()) - chains
            lines = restore_lines(spec, members, self.family)
            lines += [f":{c} - [0:0]" for c in sorted(stale)]
            lines += [f"-X {c}" for c in sorted(stale)]
            self._laid.pop(spec.name, None)      # unknown until this restore is done
            self._restore_checked(lines, f"the policies of network {spec.name}")
            self._policy_chains[spec.name] = chains
            self._laid[spec.name] = {m.key: m for m in members}
            LOG.debug("network %s: policies of %d container(s) laid", spec.name, len(members))

    def collect_policy_chains(self, keep: set[str]) -> int:
        """Remove every container and group chain (``BERTH-C/G-*``) not in ``keep``,
        and the jumps to it: what a daemon killed half-way left. (A network's own
        ``BERTH-D-*`` goes with the network, which the registry always knows.) Only for
        the daemon that owns them: chains another daemon's dispatch chains reach are
        left alone. Returns how many chains it removed."""
        with self._lock:
            done = self._call(["-t", "filter", "-S"])
            if done.returncode != 0:
                return 0
            declared = [line.split()[1] for line in done.stdout.splitlines()
                        if line.startswith("-N ")]
            # Another daemon's networks (a second berth on the host): their dispatch
            # chains are not in ``keep``, and what they reach is theirs.
            foreign = {c for c in declared if c.startswith(DISPATCH_PREFIX) and c not in keep}
            theirs = reachable(done.stdout, foreign)
            stale = {c for c in declared
                     if c.startswith((CONTAINER_PREFIX, GROUP_PREFIX)) and c not in keep
                     and c not in theirs}
            if not stale:
                return 0
            for chains in self._policy_chains.values():
                chains -= stale
            self._drop_chains(stale, listing=done.stdout)
            LOG.warning("removed %d policy chain(s) no attachment needs: %s", len(stale),
                        ", ".join(sorted(stale)))
            return len(stale)

    def cleanup(self) -> None:
        """Every rule and chain berth made is gone (the jumps first, then the chains)."""
        with self._lock:
            for table, chain, parent in (("filter", FORWARD_CHAIN, "FORWARD"),
                                         ("filter", OUTPUT_CHAIN, "OUTPUT"),
                                         ("nat", NAT_CHAIN, "POSTROUTING")):
                self._remove_rule(table, parent, ["-j", chain])
                if self._call(["-t", table, "-n", "-L", chain]).returncode == 0:
                    self._checked(["-t", table, "-F", chain])
                    self._checked(["-t", table, "-X", chain])
                    LOG.info("removed %s chain %s/%s", self._tool, table, chain)
            done = self._call(["-t", "filter", "-S"])
            policy = {line.split()[1] for line in done.stdout.splitlines()
                      if line.startswith("-N ") and line.split()[1].startswith(POLICY_PREFIXES)
                      } if done.returncode == 0 else set()
            self._drop_chains(policy)
            self._policy_chains.clear()
            self._laid.clear()

    def rules(self, table: str = "filter", chain: str = FORWARD_CHAIN) -> list[str]:
        """The chain's rules as ``iptables -S`` prints them (empty when it is absent)."""
        done = self._call(["-t", table, "-S", chain])
        if done.returncode != 0:
            return []
        return [line for line in done.stdout.splitlines() if line.startswith("-A ")]

    # -- helpers (called with the lock held) --

    def _call(self, args: Sequence[str]) -> subprocess.CompletedProcess[str]:
        return self._run(list(args))

    def _checked(self, args: Sequence[str]) -> None:
        done = self._call(args)
        if done.returncode != 0:
            raise FirewallError(reason=f"{self._tool} {' '.join(args)}: "
                                       f"{(done.stderr or '').strip() or done.returncode}")

    def _restore_checked(self, lines: list[str], what: str) -> None:
        done = self._restore("*filter\n" + "\n".join(lines) + "\nCOMMIT\n")
        if done.returncode != 0:
            raise FirewallError(reason=f"{self._tool}-restore of {what}: "
                                       f"{(done.stderr or '').strip() or done.returncode}")

    def _drop_chains(self, chains: set[str], listing: str | None = None) -> None:
        """Remove ``chains`` and every rule of berth's chains that jumps to them, in one
        step. Absent chains are fine (declaring one makes it, to be removed at once)."""
        if not chains:
            return
        if listing is None:
            done = self._call(["-t", "filter", "-S"])
            listing = done.stdout if done.returncode == 0 else ""
        jumps = [line for line in listing.splitlines()
                 if line.startswith("-A ") and line.split()[-1] in chains
                 and line.split()[1] not in chains]
        lines = [f":{c} - [0:0]" for c in sorted(chains)]
        lines += ["-D" + line[2:] for line in jumps]
        lines += [f"-X {c}" for c in sorted(chains)]
        self._restore_checked(lines, f"removing chains {', '.join(sorted(chains))}")

    def _complete(self, spec: NetworkSpec) -> bool:
        return all(self._exists("filter", FORWARD_CHAIN, r) for r in forward_rules(spec)) \
            and all(self._exists("filter", OUTPUT_CHAIN, r) for r in output_rules(spec)) \
            and all(self._exists("nat", NAT_CHAIN, r) for r in nat_rules(spec, self.family))

    def _remove(self, spec: NetworkSpec) -> None:
        for masquerade in (False, True):
            variant = dataclasses.replace(spec, masquerade=masquerade)
            for rule in forward_rules(variant):
                self._remove_rule("filter", FORWARD_CHAIN, rule)
            for rule in output_rules(variant):
                self._remove_rule("filter", OUTPUT_CHAIN, rule)
            for rule in nat_rules(variant, self.family):
                self._remove_rule("nat", NAT_CHAIN, rule)

    def _exists(self, table: str, chain: str, rule: Sequence[str]) -> bool:
        return self._call(["-t", table, "-C", chain, *rule]).returncode == 0

    def _ensure_chain(self, table: str, chain: str, parent: str | None) -> None:
        if self._call(["-t", table, "-n", "-L", chain]).returncode != 0:
            done = self._call(["-t", table, "-N", chain])
            if done.returncode != 0 and "exists" not in (done.stderr or ""):
                raise FirewallError(reason=f"creating chain {table}/{chain}: "
                                           f"{(done.stderr or '').strip()}")
            LOG.info("created %s chain %s/%s", self._tool, table, chain)
        # First in the parent chain, so that Docker's rules (which accept whatever
        # leaves docker0) cannot let other traffic into berth's networks before ours.
        if parent is not None and not self._exists(table, parent, ["-j", chain]):
            self._checked(["-t", table, "-I", parent, "1", "-j", chain])

    def _remove_rule(self, table: str, chain: str, rule: Sequence[str]) -> None:
        while self._exists(table, chain, rule):  # duplicates too
            self._checked(["-t", table, "-D", chain, *rule])


def _reached_from(chain: str, listing: str) -> set[str]:
    """``chain`` and every policy chain its rules jump to, transitively, as an
    ``iptables -S`` listing shows them: a network's dispatch chain reaches its
    containers' chains, and those their groups' (found even by a process that did not
    lay them)."""
    jumps: dict[str, set[str]] = {}
    for line in listing.splitlines():
        words = line.split()
        if len(words) > 2 and words[0] == "-A" and words[-2] == "-j" \
                and words[-1].startswith(POLICY_PREFIXES):
            jumps.setdefault(words[1], set()).add(words[-1])
    found, todo = {chain}, [chain]
    while todo:
        for target in jumps.get(todo.pop(), set()) - found:
            found.add(target)
            todo.append(target)
    return found


def reachable(listing: str, roots: set[str]) -> set[str]:
    """The chains ``roots`` jump to, directly or through others, in ``iptables -S``'s
    ``listing`` (pure); the roots included."""
    jumps: dict[str, set[str]] = {}
    for line in listing.splitlines():
        words = line.split()
        if len(words) >= 2 and words[0] == "-A" and "-j" in words:
            target = words[words.index("-j") + 1] if words.index("-j") + 1 < len(words) else ""
            jumps.setdefault(words[1], set()).add(target)
    seen, todo = set(roots), list(roots)
    while todo:
        for target in jumps.get(todo.pop(), ()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


class DualStackFirewall:
    """The CNI daemon's firewall: iptables for every network, ip6tables as well for
    the dual-stack ones (``NetworkSpec.cidr6``). ip6tables is run for a network only
    when it has an IPv6 subnet, and its sweeps only once such a network was seen (or
    at the first sweep, for what an earlier process left)."""

    def __init__(self, v4: Firewall | None = None, v6: Firewall | None = None) -> None:
        self.v4, self.v6 = v4 or Firewall(), v6 or Firewall.ipv6()
        self._v6_seen = False
        self._v6_swept = False
        self._forwarding_warned: set[str] = set()

    def _both(self, spec: NetworkSpec) -> tuple[Firewall, ...]:
        if spec.cidr6 is None:
            return (self.v4,)
        self._v6_seen = True
        return (self.v4, self.v6)

    def ensure_network(self, spec: NetworkSpec) -> None:
        for firewall in self._both(spec):
            firewall.ensure_network(spec)
        if spec.cidr6 is not None and spec.masquerade:
            self._warn_without_forwarding(spec)

    def has_network(self, spec: NetworkSpec) -> bool:
        return all(firewall.has_network(spec) for firewall in self._both(spec))

    def remove_network(self, spec: NetworkSpec) -> None:
        for firewall in self._both(spec):
            firewall.remove_network(spec)

    def apply_policy(self, spec: NetworkSpec, members: list[Member],
                     whole: bool = False) -> None:
        for firewall in self._both(spec):
            firewall.apply_policy(spec, members, whole)

    def collect_policy_chains(self, keep: set[str]) -> int:
        removed = self.v4.collect_policy_chains(keep)
        if self._v6_seen or not self._v6_swept:
            self._v6_swept = True
            removed += self.v6.collect_policy_chains(keep)
        return removed

    def cleanup(self) -> None:
        self.v4.cleanup()
        self.v6.cleanup()

    def _warn_without_forwarding(self, spec: NetworkSpec) -> None:
        """IPv6 egress needs the host to forward IPv6, which berth does not switch on
        itself: on a host configured by router advertisements it would stop taking
        them (accept_ra), which is the operator's call."""
        try:
            with open("/proc/sys/net/ipv6/conf/all/forwarding") as f:
                forwarding = f.read().strip() == "1"
        except OSError:
            return
        if not forwarding and spec.name not in self._forwarding_warned:
            self._forwarding_warned.add(spec.name)
            LOG.warning("network %s masquerades, but this host does not forward IPv6: its "
                        "containers reach the outside over IPv4 only until "
                        "net.ipv6.conf.all.forwarding = 1 (sysctl; with accept_ra = 2 on "
                        "an interface configured by router advertisements)", spec.name)
