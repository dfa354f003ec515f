"""Who may reach a container on berth's local networks: its security groups and its
exposed ports, as iptables rules.

A local network has no Neutron, so a security group here is a *membership*: the
containers of one network that share a group reach each other on every port and
protocol, as Neutron's ``default`` group lets its members do. Anything else reaches a
container only on its exposed ports (the host, the host's own networks when they
route to it, a container of the same network outside its groups); another berth
network never does. Replies to what the container opened always come back. Like
Zun, a container made with ``exposed_ports`` is in no group but its own (Zun gives it
a dedicated Neutron group holding those ports), one made with neither is in
``default``, one made with ``security_groups`` is in those.

The rules of one network, all in berth's chains (``BERTH-*``)::

    FORWARD ─► BERTH-FORWARD ─► -o BR -j BERTH-D-<bridge>     (first rule of the network)
    OUTPUT  ─► BERTH-OUTPUT  ─► -o BR -j BERTH-D-<bridge>     (the host's own traffic)

    BERTH-D-<bridge>      -d IP -j BERTH-C-<attachment>        one per container with a policy
    BERTH-C-<attachment>  ctstate RELATED,ESTABLISHED ACCEPT
                          -i BR -j BERTH-G-<network,group>     one per group
                          -i BR -p tcp --dport 80 ACCEPT       one pair per exposed port:
                          ! -i bth+ -p tcp --dport 80 ACCEPT   same network, or not a berth network
                          DROP
    BERTH-G-<network,group>  -s IP ACCEPT                      one per member on the network

An attachment without a policy (a CNI caller that sends none) has no chain: the
network's own rules apply to it (open within its network, closed from outside).
Every change of one network is written by one ``iptables-restore --noflush``, so it
is atomic and costs one process. It writes only the members that came, went or
changed (``change_lines``): a create on a network of 200 containers wrote about 1,000
rules when each change laid the whole policy again (``restore_lines``, which the CNI
daemon's start and its periodic sync still do, to repair what was edited by hand).
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from berth.network.base import BRIDGE_PREFIX, AttachmentKey, NetworkSpec

#: Chain prefixes; iptables limits a chain's name to 28 characters.
DISPATCH_PREFIX = "BERTH-D-"
CONTAINER_PREFIX = "BERTH-C-"
GROUP_PREFIX = "BERTH-G-"
POLICY_PREFIXES = (DISPATCH_PREFIX, CONTAINER_PREFIX, GROUP_PREFIX)

#: The group of a container that asked for neither groups nor exposed ports.
DEFAULT_GROUP = "default"

_PORT_RE = re.compile(r"^(\d{1,5})/(tcp|udp|sctp)$")


class InvalidPolicy(ValueError):
    """A policy that cannot be written as rules (a bad port or group)."""


@dataclass(frozen=True, slots=True)
class Policy:
    """The groups a container is in and the ports it exposes (``("80", "tcp")``)."""

    groups: tuple[str, ...] = ()
    ports: tuple[tuple[int, str], ...] = ()

    @classmethod
    def build(cls, groups: Iterable[str] = (), ports: Iterable[str] = ()) -> Policy:
        """From group names and Zun's ``"80/tcp"`` port keys (``InvalidPolicy`` when one
        is not a port)."""
        parsed = []
        for raw in ports:
            match = _PORT_RE.match(str(raw).strip().lower())
            if not match or not 1 <= int(match.group(1)) <= 65535:
                raise InvalidPolicy(f"exposed port {raw!r} is not <1-65535>/<tcp|udp|sctp>")
            parsed.append((int(match.group(1)), match.group(2)))
        names = []
        for group in groups:
            if not isinstance(group, str) or not group:
                raise InvalidPolicy(f"security group {group!r} is not a name")
            names.append(group)
        return cls(groups=tuple(sorted(set(names))), ports=tuple(sorted(set(parsed))))

    @classmethod
    def of_container(cls, security_groups: Sequence[str] | None,
                     exposed_ports: Mapping[str, Any] | Sequence[str] | None) -> Policy:
        """A container's policy from its row's fields, with Zun's defaults (see above)."""
        ports = list(exposed_ports or [])
        groups = list(security_groups or [])
        if not groups and not ports:
            groups = [DEFAULT_GROUP]
        return cls.build(groups, ports)

    def to_dict(self) -> dict[str, list[str]]:
        return {"groups": list(self.groups), "ports": [f"{p}/{proto}" for p, proto in self.ports]}

    @classmethod
    def from_dict(cls, data: Any) -> Policy:
        if not isinstance(data, Mapping):
            raise InvalidPolicy("a policy is an object with 'groups' and 'ports'")
        groups, ports = data.get("groups") or [], data.get("ports") or []
        if not isinstance(groups, list) or not isinstance(ports, list):
            raise InvalidPolicy("a policy's 'groups' and 'ports' are lists")
        return cls.build(groups, ports)


@dataclass(frozen=True, slots=True)
class Member:
    """One attachment with a policy, as the rules of its network need it."""

    key: AttachmentKey
    address: ipaddress.IPv4Address
    policy: Policy
    #: Its IPv6 twin on a dual-stack network (``NetworkSpec.mirror6``).
    address6: ipaddress.IPv6Address | None = None

    def source(self, family: int) -> str | None:
        """Its address as a host prefix of ``family``, None when it has none."""
        if family == 4:
            return f"{self.address}/32"
        return None if self.address6 is None else f"{self.address6}/128"


def _hash(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def dispatch_chain(spec: NetworkSpec) -> str:
    return DISPATCH_PREFIX + spec.bridge[len(BRIDGE_PREFIX):]


def container_chain(key: AttachmentKey) -> str:
    return CONTAINER_PREFIX + _hash(key.network, key.container_id, key.ifname)


def group_chain(network: str, group: str) -> str:
    return GROUP_PREFIX + _hash(network, group)


def network_chains(spec: NetworkSpec, members: Iterable[Member]) -> set[str]:
    """Every chain the network's policy uses."""
    chains = {dispatch_chain(spec)}
    for m in members:
        chains.add(container_chain(m.key))
        chains.update(group_chain(spec.name, g) for g in m.policy.groups)
    return chains


#: What neighbour discovery sends to a container's own address (IPv6 only).
_NEIGHBOUR_DISCOVERY = ("neighbour-solicitation", "neighbour-advertisement")


def restore_lines(spec: NetworkSpec, members: Sequence[Member], family: int = 4
                  ) -> list[str]:
    """The body (between ``*filter`` and ``COMMIT``) that lays the whole policy of one
    network: each chain declared (which empties it) and filled again. ``family`` 6:
    the ip6tables twin, on the members' IPv6 addresses (the chains are the same)."""
    ordered = sorted((m for m in members if m.source(family) is not None),
                     key=lambda m: (int(m.address), str(m.key)))
    groups: dict[str, list[Member]] = {}
    for m in ordered:
        for g in m.policy.groups:
            groups.setdefault(g, []).append(m)
    lines = [f":{c} - [0:0]" for c in sorted(network_chains(spec, ordered))]
    for m in ordered:
        lines.append("-A " + _dispatch_rule(spec, m, family))
        lines += _container_rules(spec, m, family)
    for g, in_group in sorted(groups.items()):
        lines += ["-A " + _group_rule(spec, g, m, family) for m in in_group]
    return lines


def change_lines(spec: NetworkSpec, laid: Mapping[AttachmentKey, Member],
                 members: Sequence[Member], family: int = 4) -> list[str]:
    """The body that turns the policy ``restore_lines`` laid for ``laid`` into the one
    of ``members``, touching only the members that came, went or changed (their
    container chains, their rule in the dispatch chain and in their groups' chains)
    and the groups that came or went: a create writes the same few rules whatever the
    network holds. Empty when nothing changed. The dispatch chain's rules are
    appended in arrival order rather than by address, which changes nothing: each
    matches one destination."""
    before = {m.key: m for m in laid.values() if m.source(family) is not None}
    after = {m.key: m for m in members if m.source(family) is not None}
    went = [m for k, m in before.items() if k not in after]
    old = [m for k, m in before.items() if k in after and after[k] != m]
    new = [m for k, m in after.items() if before.get(k) != m]
    if not (went or new):
        return []
    groups_before = {g for m in before.values() for g in m.policy.groups}
    groups_after = {g for m in after.values() for g in m.policy.groups}
    dead = {group_chain(spec.name, g) for g in groups_before - groups_after}
    declared = {container_chain(m.key) for m in [*went, *new]} | dead | {
        group_chain(spec.name, g) for g in groups_after - groups_before}
    lines = [f":{c} - [0:0]" for c in sorted(declared)]
    for m in [*went, *old]:            # their rules in chains that stay
        lines.append("-D " + _dispatch_rule(spec, m, family))
        lines += ["-D " + _group_rule(spec, g, m, family) for g in m.policy.groups
                  if group_chain(spec.name, g) not in dead]
    for m in new:
        lines.append("-A " + _dispatch_rule(spec, m, family))
        lines += _container_rules(spec, m, family)
        lines += ["-A " + _group_rule(spec, g, m, family) for g in m.policy.groups]
    lines += [f"-X {c}" for c in sorted({container_chain(m.key) for m in went} | dead)]
    return lines


def _tag(spec: NetworkSpec) -> str:
    return f'-m comment --comment "berth:{spec.bridge}"'


def _dispatch_rule(spec: NetworkSpec, m: Member, family: int) -> str:
    return f"{dispatch_chain(spec)} -d {m.source(family)} {_tag(spec)} -j {container_chain(m.key)}"


def _group_rule(spec: NetworkSpec, group: str, m: Member, family: int) -> str:
    return f"{group_chain(spec.name, group)} -s {m.source(family)} {_tag(spec)} -j ACCEPT"


def _container_rules(spec: NetworkSpec, m: Member, family: int) -> list[str]:
    """The rules of ``m``'s own chain: replies, its groups, its exposed ports, DROP."""
    br, tag, chain = spec.bridge, _tag(spec), container_chain(m.key)
    lines = [f"-A {chain} -m conntrack --ctstate RELATED,ESTABLISHED {tag} -j ACCEPT"]
    if family == 6:
        lines += [f"-A {chain} -p ipv6-icmp -m icmp6 --icmpv6-type {kind} {tag} -j ACCEPT"
                  for kind in _NEIGHBOUR_DISCOVERY]
    lines += [f"-A {chain} -i {br} {tag} -j {group_chain(spec.name, g)}"
              for g in m.policy.groups]
    for port, proto in m.policy.ports:
        match = f"-p {proto} -m {proto} --dport {port}"
        lines.append(f"-A {chain} -i {br} {match} {tag} -j ACCEPT")
        lines.append(f"-A {chain} ! -i {BRIDGE_PREFIX}+ {match} {tag} -j ACCEPT")
    lines.append(f"-A {chain} {tag} -j DROP")
    return lines
