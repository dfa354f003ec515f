"""Test doubles of berth.network's driver and firewall: they keep bridges, veths and
rules in sets, so the CNI service's bookkeeping is tested without root or netlink."""

from __future__ import annotations

import ipaddress
from collections.abc import Collection

from berth.network.base import (
    VIF,
    AttachmentKey,
    AttachmentMismatch,
    NetworkDriverError,
    NetworkSpec,
)
from berth.network.policy import Member, Policy


class FakeDriver:
    def __init__(self) -> None:
        self.bridges: set[str] = set()
        self.veths: dict[str, VIF] = {}
        self.extra: set[str] = set()  # host veths nobody recorded
        self.ready = True
        self.fail_attach = False

    def ensure_network(self, spec: NetworkSpec) -> None:
        self.bridges.add(spec.bridge)

    def delete_network(self, spec: NetworkSpec) -> None:
        self.bridges.discard(spec.bridge)

    def attach(self, spec: NetworkSpec, key: AttachmentKey, netns: str,
               address: ipaddress.IPv4Interface, mac: str | None = None) -> VIF:
        assert spec.bridge in self.bridges
        if self.fail_attach:
            raise NetworkDriverError(reason="netlink said no")
        vif = VIF.planned(spec, key, netns, mac or "02:00:00:00:00:01", address)
        self.veths[key.host_ifname] = vif
        return vif

    def detach(self, key: AttachmentKey, netns: str | None = None) -> None:
        self.veths.pop(key.host_ifname, None)

    def remove_host_interface(self, ifname: str) -> None:
        self.extra.discard(ifname)
        self.veths.pop(ifname, None)

    def check(self, vif: VIF) -> None:
        if vif.host_ifname not in self.veths:
            raise AttachmentMismatch(key=str(vif.key), reason="gone")

    def is_ready(self, vif: VIF) -> bool:
        return self.ready

    def host_interfaces(self, bridges: Collection[str]) -> set[str]:
        return set(self.veths) | self.extra


class FakeFirewall:
    def __init__(self) -> None:
        self.networks: dict[str, NetworkSpec] = {}
        #: network -> {attachment key: its policy}, as last laid.
        self.policies: dict[str, dict[str, Policy]] = {}
        #: network -> the members as last laid.
        self.members: dict[str, list[Member]] = {}
        self.kept: set[str] = set()

    def ensure_network(self, spec: NetworkSpec) -> None:
        self.networks[spec.name] = spec

    def remove_network(self, spec: NetworkSpec) -> None:
        self.networks.pop(spec.name, None)

    def has_network(self, spec: NetworkSpec) -> bool:
        return spec.name in self.networks

    def apply_policy(self, spec: NetworkSpec, members: list[Member],
                     whole: bool = False) -> None:
        self.policies[spec.name] = {str(m.key): m.policy for m in members}
        self.members[spec.name] = list(members)

    def collect_policy_chains(self, keep: set[str]) -> int:
        self.kept = set(keep)
        return 0
