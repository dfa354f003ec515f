"""``NodeOverlay``: what one node's CNI daemon does for its spanning networks.

- ``allocate`` / ``release``: the network-wide IPAM (``ipam``), keyed by attachment;
- ``ensure``: the network's VXLAN device on its bridge and its tables, when the
  network is laid on this node (its first attachment, or the daemon's recovery);
- ``reconcile``: every network laid here made to match the store, on a short timer:
  members that came, went or moved, nodes that stopped reporting (their members
  withdrawn once ``service_down_time`` passes) or came back; and this node's own
  claims made to match its attachments (a claim whose attachment is gone, after a
  crash between the two, is released; an attachment without a claim, after the
  store lost it, claims its address again);
- ``remove``: the device goes with the network's bridge.

The store is a ``Membership``: ``berth.db.overlay.OverlayStore`` in the daemon.
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Collection, Mapping
from typing import Protocol

from berth.network.base import NetworkDriverError, NetworkSpec
from berth.network.overlay.ipam import AddressStore, Claim, NetworkWideAllocator
from berth.network.overlay.plan import Member, changes, overlay_mtu, wanted
from berth.network.overlay.vxlan import VxlanLinks, underlay_mtu

LOG = logging.getLogger(__name__)


class Membership(AddressStore, Protocol):
    def vni(self, network: str) -> int | None: ...
    def members(self, networks: Collection[str]) -> dict[str, list[Member]]: ...
    def owners_on(self, host: str) -> dict[str, set[str]]: ...
    def live_hosts(self) -> set[str]: ...


class NodeOverlay:
    def __init__(self, store: Membership, host: str, tunnel_ip: str,
                 links: VxlanLinks | None = None, mtu: int | None = None) -> None:
        self.store, self.host = store, host
        self.tunnel_ip = ipaddress.IPv4Address(tunnel_ip)
        self.links = links or VxlanLinks()
        self.allocator = NetworkWideAllocator(store, host, self.tunnel_ip)
        self._mtu = mtu

    @property
    def mtu(self) -> int:
        """The MTU of spanning networks on this node: the underlay's less VXLAN's 50."""
        if self._mtu is None:
            self._mtu = overlay_mtu(underlay_mtu(self.tunnel_ip))
        return self._mtu

    def fit(self, spec: NetworkSpec) -> NetworkSpec:
        """``spec`` with this node's overlay MTU when its own is larger."""
        if spec.mtu <= self.mtu:
            return spec
        return NetworkSpec.build(spec.name, str(spec.cidr), str(spec.gateway), spec.bridge,
                                 spec.masquerade, self.mtu,
                                 str(spec.cidr6) if spec.cidr6 else None)

    def allocate(self, spec: NetworkSpec, owner: str, mac: str,
                 requested: ipaddress.IPv4Address | None) -> ipaddress.IPv4Interface:
        return self.allocator.allocate(spec, owner, mac, requested)

    def release(self, spec: NetworkSpec, owner: str) -> None:
        self.allocator.release(spec, owner)

    def ensure(self, spec: NetworkSpec) -> None:
        """The device and its tables (the bridge exists)."""
        vni = self.store.vni(spec.name)
        if vni is None:
            raise NetworkDriverError(reason=f"network {spec.name} has no row in the database "
                                            f"(deleted?): it cannot span nodes")
        self.links.ensure(spec, vni, self.tunnel_ip)
        self._write(spec, self.store.members([spec.name])[spec.name],
                    self.store.live_hosts())

    def remove(self, spec: NetworkSpec) -> None:
        self.links.remove(spec)

    def reconcile(self, specs: Collection[NetworkSpec],
                  attachments: Mapping[str, Mapping[str, tuple[ipaddress.IPv4Address, str]]]
                  ) -> int:
        """Make this node's claims match ``attachments`` (network -> owner -> (address,
        MAC), what its registry holds) and its devices' tables match the store.
        Returns how many entries and claims it changed. A network whose device
        cannot be made is logged and skipped: the others still converge."""
        changed = self._reconcile_claims(specs, attachments)
        live = self.store.live_hosts()
        members = self.store.members([s.name for s in specs])
        for spec in specs:
            try:
                if not self.links.exists(spec):
                    vni = self.store.vni(spec.name)
                    if vni is None:
                        continue
                    LOG.warning("VXLAN device of network %s was missing; making it again",
                                spec.name)
                    self.links.ensure(spec, vni, self.tunnel_ip)
                changed += self._write(spec, members[spec.name], live)
            except NetworkDriverError as exc:
                LOG.error("network %s: could not reconcile its overlay: %s", spec.name, exc)
        return changed

    def _reconcile_claims(self, specs: Collection[NetworkSpec],
                          attachments: Mapping[str, Mapping[str, tuple[ipaddress.IPv4Address,
                                                                       str]]]) -> int:
        changed = 0
        by_name = {s.name: s for s in specs}
        for network, owners in self.store.owners_on(self.host).items():
            mine = attachments.get(network, {})
            for owner in sorted(owners - set(mine)):
                LOG.warning("network %s: %s holds an address here but no attachment; "
                            "releasing it", network, owner)
                self.store.release(network, owner)
                changed += 1
        held = self.store.owners_on(self.host)
        for network, mine in attachments.items():
            for owner, (address, mac) in mine.items():
                if network in by_name and owner not in held.get(network, set()):
                    LOG.warning("network %s: %s has %s here but no claim; claiming it "
                                "again", network, owner, address)
                    if not self.store.claim(Claim(network, address, owner, mac.lower(),
                                                  self.host, self.tunnel_ip)):
                        LOG.error("network %s: %s is held by another node now; %s keeps "
                                  "it until deleted", network, address, owner)
                    changed += 1
        return changed

    def _write(self, spec: NetworkSpec, members: list[Member], live: set[str]) -> int:
        change = changes(self.links.read(spec), wanted(spec, members, self.host, live))
        if change:
            self.links.apply(spec, change)
            LOG.info("network %s: overlay tables updated (+%d fdb, -%d fdb, +%d neigh, "
                     "-%d neigh)", spec.name, len(change.fdb_set), len(change.fdb_del),
                     len(change.neigh_set), len(change.neigh_del))
        return len(change)
