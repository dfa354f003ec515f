"""The iptables rules berth owns: its own chains, nothing else touched.

::

    filter FORWARD ──(first rule)──► BERTH-FORWARD, per network on bridge BR:
        -i BR -o BR                                   ACCEPT  members talk to each other
        -i BR -o bth+                                 DROP    never into another berth network
        -i BR                                         ACCEPT  egress (masquerade networks only)
        -o BR -m conntrack --ctstate RELATED,ESTABLISHED ACCEPT  replies to what went out
        -o BR                                         DROP    nothing else comes in
    nat POSTROUTING ──► BERTH-POSTROUTING (masquerade networks only):
        -s CIDR ! -o BR                               MASQUERADE

Why: Docker sets FORWARD's policy to DROP and br_netfilter makes frames crossing any
bridge traverse FORWARD, so without the first rule two containers on one bridge cannot
talk. The host reaches every network through its gateway address on the bridge
(INPUT/OUTPUT, not FORWARD), so it is not affected. Each network's rules carry the
comment ``berth:<bridge>`` and are found again by their exact text, so adding is
idempotent (``-C`` before ``-A``), and ``remove_network`` and ``cleanup`` take away
exactly what berth added.

iptables runs as a subprocess with ``-w`` (wait for the xtables lock that Docker and
others hold at times); the runner is injectable for unit tests.
"""

from __future__ import annotations

import logging
import subprocess
import threading
from collections.abc import Callable, Sequence

from berth.network.base import BRIDGE_PREFIX, FirewallError, NetworkSpec

LOG = logging.getLogger(__name__)

FORWARD_CHAIN = "BERTH-FORWARD"
NAT_CHAIN = "BERTH-POSTROUTING"

#: Runs one iptables command line (without the leading ``iptables -w``), returns its
#: exit status; raises FirewallError only when iptables cannot run at all.
Runner = Callable[[Sequence[str]], "subprocess.CompletedProcess[str]"]


def run_iptables(args: Sequence[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(["iptables", "-w", *args], capture_output=True, text=True,
                              timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise FirewallError(reason=f"iptables {' '.join(args)}: {exc}") from exc


def forward_rules(spec: NetworkSpec) -> list[list[str]]:
    """The rule specs (after ``-A BERTH-FORWARD``) of one network, in order."""
    br, tag = spec.bridge, ["-m", "comment", "--comment", f"berth:{spec.bridge}"]
    rules = [
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


def nat_rules(spec: NetworkSpec) -> list[list[str]]:
    if not spec.masquerade:
        return []
    tag = ["-m", "comment", "--comment", f"berth:{spec.bridge}"]
    return [["-s", str(spec.cidr), "!", "-o", spec.bridge, *tag, "-j", "MASQUERADE"]]


class Firewall:
    """Thread-safe: one lock orders berth's own iptables edits (iptables' lock only
    makes each command atomic, not a check followed by an append)."""

    def __init__(self, runner: Runner = run_iptables) -> None:
        self._run = runner
        self._lock = threading.Lock()

    def ensure_network(self, spec: NetworkSpec) -> None:
        """The chains, their jumps and this network's rules are in place."""
        with self._lock:
            self._ensure_chain("filter", FORWARD_CHAIN, "FORWARD")
            if spec.masquerade:
                self._ensure_chain("nat", NAT_CHAIN, "POSTROUTING")
            if self._complete(spec):
                return
            # Some rule is missing (an interrupted add, a hand edit, a changed masquerade
            # setting): the order within a network matters, so lay them all again.
            self._remove(spec)
            for rule in forward_rules(spec):
                self._checked(["-t", "filter", "-A", FORWARD_CHAIN, *rule])
            for rule in nat_rules(spec):
                self._checked(["-t", "nat", "-A", NAT_CHAIN, *rule])
            LOG.info("firewall rules in place for network %s (bridge %s%s)", spec.name,
                     spec.bridge, ", masquerade" if spec.masquerade else "")

    def has_network(self, spec: NetworkSpec) -> bool:
        with self._lock:
            return self._complete(spec)

    def remove_network(self, spec: NetworkSpec) -> None:
        """This network's rules are gone, whatever its masquerade setting was when they
        were added (both variants are removed); the chains stay."""
        with self._lock:
            self._remove(spec)

    def cleanup(self) -> None:
        """Every rule and chain berth made is gone (the jumps first, then the chains)."""
        with self._lock:
            for table, chain, parent in (("filter", FORWARD_CHAIN, "FORWARD"),
                                         ("nat", NAT_CHAIN, "POSTROUTING")):
                self._remove_rule(table, parent, ["-j", chain])
                if self._call(["-t", table, "-n", "-L", chain]).returncode == 0:
                    self._checked(["-t", table, "-F", chain])
                    self._checked(["-t", table, "-X", chain])
                    LOG.info("removed iptables chain %s/%s", table, chain)

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
            raise FirewallError(reason=f"iptables {' '.join(args)}: "
                                       f"{(done.stderr or '').strip() or done.returncode}")

    def _complete(self, spec: NetworkSpec) -> bool:
        return all(self._exists("filter", FORWARD_CHAIN, r) for r in forward_rules(spec)) \
            and all(self._exists("nat", NAT_CHAIN, r) for r in nat_rules(spec))

    def _remove(self, spec: NetworkSpec) -> None:
        for masquerade in (False, True):
            variant = NetworkSpec(spec.name, spec.cidr, spec.gateway, spec.bridge,
                                  masquerade, spec.mtu)
            for rule in forward_rules(variant):
                self._remove_rule("filter", FORWARD_CHAIN, rule)
            for rule in nat_rules(variant):
                self._remove_rule("nat", NAT_CHAIN, rule)

    def _exists(self, table: str, chain: str, rule: Sequence[str]) -> bool:
        return self._call(["-t", table, "-C", chain, *rule]).returncode == 0

    def _ensure_chain(self, table: str, chain: str, parent: str) -> None:
        if self._call(["-t", table, "-n", "-L", chain]).returncode != 0:
            done = self._call(["-t", table, "-N", chain])
            if done.returncode != 0 and "exists" not in (done.stderr or ""):
                raise FirewallError(reason=f"creating chain {table}/{chain}: "
                                           f"{(done.stderr or '').strip()}")
            LOG.info("created iptables chain %s/%s", table, chain)
        # First in the parent chain, so that Docker's rules (which accept whatever
        # leaves docker0) cannot let other traffic into berth's networks before ours.
        if not self._exists(table, parent, ["-j", chain]):
            self._checked(["-t", table, "-I", parent, "1", "-j", chain])

    def _remove_rule(self, table: str, chain: str, rule: Sequence[str]) -> None:
        while self._exists(table, chain, rule):  # duplicates too
            self._checked(["-t", table, "-D", chain, *rule])
