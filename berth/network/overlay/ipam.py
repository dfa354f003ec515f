"""Network-wide address management for spanning networks.

Every node's CNI daemon allocates from one table (``AddressStore``): it reads the
addresses taken on the network, picks the next free one after the highest (the
order ``berth.network.ipam.SubnetAllocator`` follows on one node), and claims it. The
store's claim is atomic and refuses an address some other attachment holds (the
database's unique constraint on network and address): two nodes that picked the
same address at once cannot both win, and the loser picks again. So no lock spans
nodes, and a daemon that restarts needs no state of its own: the store is the truth.

An attachment holds at most one address per network (``owner``): claiming again for
the same owner answers the address it holds (a reservation claimed by its ADD, an
ADD repeated after a restart), unless another one is asked for by name.
"""

from __future__ import annotations

import ipaddress
import logging
from dataclasses import dataclass
from typing import Protocol

from berth.network.base import AddressInUse, NetworkDriverError, NetworkSpec
from berth.network.ipam import SubnetAllocator
from berth.network.policy import Policy

LOG = logging.getLogger(__name__)

#: Claims lost to other nodes before giving up (each loss means another node won an
#: address: on a busy network that is a burst of creates, never a livelock).
MAX_ATTEMPTS = 16


@dataclass(frozen=True, slots=True)
class Claim:
    network: str
    address: ipaddress.IPv4Address
    owner: str
    mac: str
    host: str
    tunnel_ip: ipaddress.IPv4Address
    policy: Policy | None = None


class AddressStore(Protocol):
    def taken(self, network: str) -> set[ipaddress.IPv4Address]:
        """Every address of ``network`` held on any node."""
        ...

    def held(self, network: str, owner: str) -> Claim | None:
        """What ``owner`` holds on ``network``."""
        ...

    def claim(self, claim: Claim) -> bool:
        """Record ``claim`` atomically; False when the address is held by another owner
        (nothing written then). Replaces what the owner held before."""
        ...

    def release(self, network: str, owner: str, host: str | None = None) -> bool:
        """Drop what ``owner`` holds on ``network`` (only if on ``host``, when given: a
        node never releases a claim that moved to another); False when it held
        nothing there."""
        ...


class NetworkWideAllocator:
    """Allocates for one node: ``host`` and its ``tunnel_ip`` go into every claim."""

    def __init__(self, store: AddressStore, host: str,
                 tunnel_ip: ipaddress.IPv4Address) -> None:
        self.store, self.host, self.tunnel_ip = store, host, tunnel_ip
        #: Network -> the last address this node handed out (where the next search
        #: starts, so that an address just freed is not reused at once).
        self._last: dict[str, ipaddress.IPv4Address] = {}

    def allocate(self, spec: NetworkSpec, owner: str, mac: str,
                 requested: ipaddress.IPv4Address | None = None,
                 policy: Policy | None = None) -> ipaddress.IPv4Interface:
        """The address ``requested`` (``AddressInUse`` when another attachment holds
        it, ``AddressOutOfRange`` when it is no host of the subnet), or the one ``owner``
        holds already, or the next free one (``AddressExhausted`` when none is)."""
        held = self.store.held(spec.name, owner)
        if held is not None and requested in (None, held.address) and \
                (held.host, held.tunnel_ip, held.mac, held.policy) == \
                (self.host, self.tunnel_ip, mac, policy):
            return ipaddress.IPv4Interface((held.address, spec.cidr.prefixlen))
        if held is not None and requested is None:
            requested = held.address     # moved to this node, or its MAC changed: keep it
        for _attempt in range(MAX_ATTEMPTS):
            taken = self.store.taken(spec.name)
            if held is not None:
                taken.discard(held.address)
            allocator = SubnetAllocator(spec, taken)
            if spec.name in self._last:
                allocator.resume_after(self._last[spec.name])
            address = allocator.allocate(requested).ip
            if self.store.claim(Claim(spec.name, address, owner, mac.lower(), self.host,
                                      self.tunnel_ip, policy)):
                LOG.info("network %s: %s claimed %s on %s", spec.name, owner, address,
                         self.host)
                if requested is None:
                    self._last[spec.name] = address
                return ipaddress.IPv4Interface((address, spec.cidr.prefixlen))
            if requested is not None:
                raise AddressInUse(address=str(address), network=spec.name)
            LOG.info("network %s: %s was claimed by another node meanwhile; picking again",
                     spec.name, address)
        raise NetworkDriverError(reason=f"network {spec.name}: lost the race for a free "
                                        f"address {MAX_ATTEMPTS} times; try again")

    def release(self, spec: NetworkSpec, owner: str) -> bool:
        """Drop ``owner``'s claim if this node holds it (after an evacuation the
        attachment's claim is the new node's; the old node's clean-up leaves it)."""
        return self.store.release(spec.name, owner, self.host)
