"""``NodeOverlay``: what one node's CNI daemon does for its spanning networks.

- ``allocate`` / ``release``: the network-wide IPAM (``ipam``), keyed by attachment;
- ``ensure``: the network's VXLAN device on its bridge and its tables, when the
  network is laid on this node (its first attachment, or the daemon's recovery), and
  the node's own address on the network (``plan.host_owner``): claimed network-wide
  like a container's, on the bridge with a MAC of its own, the source of what the
  host sends into the network, so that the host reaches the containers of other
  nodes as it reaches its own (their exposed ports) and their answers find it;
- ``reconcile``: a network laid here made to match the store, on a short timer:
  members that came, went or moved, nodes that stopped reporting (their members
  withdrawn once ``service_down_time`` passes) or came back; and this node's own
  claims made to match its attachments (a claim whose attachment is gone, after a
  crash between the two, is released; an attachment without a claim, after the
  store lost it, claims its address again);
- ``remote_members``: the members with a policy on other live nodes, which this
  node's security-group rules count as it counts its own (``berth.network.policy``);
- ``remove``: the device goes with the network's bridge, and the node's address
  with them.

The store is a ``Membership``: ``berth.db.overlay.OverlayStore`` in the daemon.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import logging
from collections.abc import Collection, Mapping
from typing import Protocol

from berth.network import policy as pol
from berth.network.base import AddressExhausted, NetworkDriverError, NetworkSpec
from berth.network.overlay.ipam import AddressStore, Claim, NetworkWideAllocator
from berth.network.overlay.plan import (
    Member,
    changes,
    host_mac,
    host_owner,
    is_host_owner,
    overlay_mtu,
    policy_members,
    wanted,
)
from berth.network.overlay.vxlan import VxlanLinks, underlay_mtu
from berth.network.policy import Policy

LOG = logging.getLogger(__name__)

#: One attachment of this node as its registry holds it: address, MAC, policy.
Attachment = tuple[ipaddress.IPv4Address, str, Policy | None]


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
        #: Network -> the members with a policy on other live nodes, as of the last
        #: read: the security-group rules of this node count them (``remote_members``).
        self._remote: dict[str, list[pol.Member]] = {}
        #: Network -> this node's own address on it, as claimed.
        self._host_address: dict[str, ipaddress.IPv4Address] = {}

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
                 requested: ipaddress.IPv4Address | None,
                 policy: Policy | None = None) -> ipaddress.IPv4Interface:
        return self.allocator.allocate(spec, owner, mac, requested, policy)

    def set_policy(self, spec: NetworkSpec, owner: str, policy: Policy | None) -> None:
        """The attachment's claim records its new policy (the other nodes' rules follow
        at their next pass)."""
        held = self.store.held(spec.name, owner)
        if held is not None and held.host == self.host and held.policy != policy:
            self.store.claim(dataclasses.replace(held, policy=policy))

    def remote_members(self, network: str) -> list[pol.Member]:
        return list(self._remote.get(network, ()))

    def release(self, spec: NetworkSpec, owner: str) -> None:
        self.allocator.release(spec, owner)

    def ensure(self, spec: NetworkSpec) -> None:
        """The device and its tables (the bridge exists)."""
        vni = self.store.vni(spec.name)
        if vni is None:
            raise NetworkDriverError(reason=f"network {spec.name} has no row in the database "
                                            f"(deleted?): it cannot span nodes")
        self.links.ensure(spec, vni, self.tunnel_ip)
        self._ensure_host_address(spec, None)
        self._write(spec, self.store.members([spec.name])[spec.name],
                    self.store.live_hosts())

    def remove(self, spec: NetworkSpec) -> None:
        self.links.remove(spec)
        self._remote.pop(spec.name, None)
        self._host_address.pop(spec.name, None)
        try:
            self.store.release(spec.name, host_owner(self.host), self.host)
        except Exception as exc:  # noqa: BLE001 - the network goes all the same
            # The pass releases what this node holds on networks it no longer has.
            LOG.warning("network %s: could not release this node's address yet (%s); "
                        "the overlay pass will", spec.name, exc)

    def reconcile(self, spec: NetworkSpec,
                  attachments: Mapping[str, Attachment],
                  live: Collection[str] | None = None) -> int:
        """Make this node's claims on ``spec`` match ``attachments`` (owner -> (address,
        MAC, policy): what its registry holds) and the device's tables match the store; the
        caller holds the network's lock. ``live``: the live nodes, when the caller
        read them once for several networks. Returns how many claims and entries it
        changed; nothing when the network's row is gone."""
        vni = self.store.vni(spec.name)
        if vni is None:
            return 0
        held = self.store.owners_on(self.host).get(spec.name, set())
        changed = self._reconcile_claims(spec, attachments, held)
        self.links.ensure(spec, vni, self.tunnel_ip)   # missing, or off its bridge
        changed += self._ensure_host_address(spec, held)
        live = self.store.live_hosts() if live is None else live
        return changed + self._write(spec, self.store.members([spec.name])[spec.name], live)

    def claims_here(self) -> dict[str, set[str]]:
        """Network -> the owners holding addresses on this node."""
        return self.store.owners_on(self.host)

    def release_owner(self, network: str, owner: str) -> bool:
        return self.store.release(network, owner, self.host)

    def _ensure_host_address(self, spec: NetworkSpec, held: Collection[str] | None) -> int:
        """This node's address on the network claimed (when it is not known here yet,
        or ``held``, the owners the store records on this node, lacks it) and laid on
        the bridge. An exhausted subnet leaves the host without one (logged): the
        containers come first."""
        owner, mac = host_owner(self.host), host_mac(spec.name, self.host)
        address, changed = self._host_address.get(spec.name), 0
        if address is None or (held is not None and owner not in held):
            try:
                address = self.allocator.allocate(spec, owner, mac, None).ip
            except AddressExhausted:
                LOG.error("network %s: no address left for this node (%s): its host "
                          "does not reach the containers of other nodes", spec.name,
                          self.host)
                return 0
            self._host_address[spec.name] = address
            changed += 1
        return changed + self.links.set_host_address(spec, address, mac)

    def _reconcile_claims(self, spec: NetworkSpec,
                          attachments: Mapping[str, Attachment],
                          held: Collection[str]) -> int:
        changed = 0
        for owner in sorted(set(held) - set(attachments)):
            if is_host_owner(owner):
                continue                # the node's own (``_ensure_host_address``)
            LOG.warning("network %s: %s holds an address here but no attachment; "
                        "releasing it", spec.name, owner)
            self.store.release(spec.name, owner, self.host)
            changed += 1
        for owner, (address, mac, policy) in sorted(attachments.items()):
            if owner in held:
                self.set_policy(spec, owner, policy)    # repaired if it differs
                continue
            elsewhere = self.store.held(spec.name, owner)
            if elsewhere is not None:
                # Moved (evacuated) while this node was away: the new node's claim wins,
                # and this node's copy goes when its agent deletes the stale container.
                LOG.warning("network %s: %s holds %s on %s now; not claiming it back",
                            spec.name, owner, elsewhere.address, elsewhere.host)
                continue
            LOG.warning("network %s: %s has %s here but no claim; claiming it again",
                        spec.name, owner, address)
            if not self.store.claim(Claim(spec.name, address, owner, mac.lower(), self.host,
                                          self.tunnel_ip, policy)):
                LOG.error("network %s: %s is held by another attachment now; %s keeps it "
                          "until it is deleted", spec.name, address, owner)
            changed += 1
        return changed

    def _write(self, spec: NetworkSpec, members: list[Member], live: Collection[str]) -> int:
        self._remote[spec.name] = policy_members(spec, members, self.host, live)
        change = changes(self.links.read(spec), wanted(spec, members, self.host, live))
        if change:
            self.links.apply(spec, change)
            LOG.info("network %s: overlay tables updated (+%d fdb, -%d fdb, +%d neigh, "
                     "-%d neigh)", spec.name, len(change.fdb_set), len(change.fdb_del),
                     len(change.neigh_set), len(change.neigh_del))
        return len(change)
