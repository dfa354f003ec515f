"""Address management for one IPv4 subnet: pure logic, no I/O, no locks.

The network, broadcast and gateway addresses are never handed out. Allocation is
*next free after the last one given*, wrapping round, so that an address just released
is not reused at once (a peer's ARP cache or a connection in TIME_WAIT may still point
at it). The owner of a ``SubnetAllocator`` serialises calls to it; the CNI daemon does
so under its network lock, and rebuilds the allocator from its registry at start-up.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from berth.network.base import AddressExhausted, AddressInUse, AddressOutOfRange, NetworkSpec


class SubnetAllocator:
    def __init__(self, spec: NetworkSpec, in_use: Iterable[ipaddress.IPv4Address] = ()) -> None:
        self.spec = spec
        net = spec.cidr
        self._first = int(net.network_address) + 1
        self._last = int(net.broadcast_address) - 1
        self._reserved = {int(spec.gateway)}
        self._used: set[int] = set()
        self._cursor = self._first - 1
        self.rebuild(in_use)

    @property
    def capacity(self) -> int:
        """How many addresses can be handed out at once."""
        return self._last - self._first + 1 - len(self._reserved)

    @property
    def in_use(self) -> frozenset[ipaddress.IPv4Address]:
        return frozenset(ipaddress.IPv4Address(a) for a in self._used)

    def rebuild(self, in_use: Iterable[ipaddress.IPv4Address]) -> None:
        """Forget every allocation, then mark ``in_use`` allocated (after a restart:
        the addresses of the attachments that survived). Addresses outside the usable
        range raise ``AddressOutOfRange``; duplicates raise ``AddressInUse``."""
        self._used.clear()
        for address in in_use:
            self._take(ipaddress.IPv4Address(address))
        self._cursor = max(self._used, default=self._first - 1)

    def resume_after(self, address: ipaddress.IPv4Address) -> None:
        """The next allocation starts after ``address`` (an allocator rebuilt from a
        shared table keeps the order its owner followed: a freed address is not
        handed out again at once)."""
        if self._first <= int(address) <= self._last:
            self._cursor = int(address)

    def allocate(self, requested: ipaddress.IPv4Address | None = None) -> ipaddress.IPv4Interface:
        """The requested address if free, else the next free one; as an interface
        with the subnet's prefix length."""
        if requested is not None:
            self._take(ipaddress.IPv4Address(requested))
            return self._interface(int(requested))
        span = self._last - self._first + 1
        for step in range(1, span + 1):
            candidate = self._first + (self._cursor - self._first + step) % span
            if candidate not in self._used and candidate not in self._reserved:
                self._used.add(candidate)
                self._cursor = candidate
                return self._interface(candidate)
        raise AddressExhausted(network=self.spec.name, cidr=str(self.spec.cidr))

    def release(self, address: ipaddress.IPv4Address | ipaddress.IPv4Interface) -> bool:
        """Give ``address`` back; False when it was not allocated (release is idempotent)."""
        if isinstance(address, ipaddress.IPv4Interface):
            address = address.ip
        value = int(address)
        if value in self._used:
            self._used.remove(value)
            return True
        return False

    def _take(self, address: ipaddress.IPv4Address) -> None:
        value = int(address)
        if not self._first <= value <= self._last or value in self._reserved:
            raise AddressOutOfRange(address=str(address), network=self.spec.name,
                                    cidr=str(self.spec.cidr))
        if value in self._used:
            raise AddressInUse(address=str(address), network=self.spec.name)
        self._used.add(value)

    def _interface(self, value: int) -> ipaddress.IPv4Interface:
        return ipaddress.IPv4Interface((value, self.spec.cidr.prefixlen))
