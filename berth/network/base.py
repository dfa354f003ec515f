"""The network driver interface and the plain values that cross it.

A *network* is a layer-2 segment with one IPv4 subnet and, dual-stack, one IPv6
subnet beside it (``NetworkSpec``); an *attachment* (``VIF``) is one interface of one
container on one network, keyed as the CNI spec keys it: (network name, container id,
interface name in the container).

An attachment's IPv6 address mirrors its IPv4 one: the host's offset in the IPv4
subnet, at the same offset in the IPv6 subnet (10.244.3.7 on 10.244.3.0/24 is
fd00:b:3::7 on fd00:b:3::/64). So the IPv4 allocation is the only one (the registry,
the fixed IPs, the sync pass keep working on it), two containers never share an IPv6
address, and an address is read from the other without a lookup.

Errors, all under ``berth.common.exceptions.BerthError``::

    NetworkDriverError              the host refused or answered something unexpected
    ├── NetnsNotFound               the container's network namespace is gone
    ├── InvalidNetworkSpec          a subnet, gateway, name or address that cannot work
    ├── AddressError                IPAM
    │   ├── AddressExhausted        no free address left in the subnet
    │   ├── AddressInUse            the fixed IP asked for is taken
    │   └── AddressOutOfRange       the fixed IP asked for is not a host of the subnet
    ├── AttachmentMismatch          CHECK found the attachment not as it was made
    ├── VIFNotReady                 the interface did not come up within the timeout
    └── FirewallError               iptables refused a rule
"""

from __future__ import annotations

import hashlib
import ipaddress
from collections.abc import Collection
from dataclasses import dataclass
from typing import Protocol

from berth.common.exceptions import BerthError

#: Every bridge berth makes starts with this; firewall rules match on ``BRIDGE_PREFIX+``.
BRIDGE_PREFIX = "bth"
#: Host-side end of every veth pair berth makes.
VETH_PREFIX = "vth"
#: Linux limits interface names to 15 characters.
IFNAME_MAX = 15


class NetworkDriverError(BerthError):
    message = "Network error: %(reason)s"


class NetnsNotFound(NetworkDriverError):
    message = "Network namespace %(netns)s does not exist (the container is gone?)."


class InvalidNetworkSpec(NetworkDriverError):
    message = "Invalid network: %(reason)s"


class AddressError(NetworkDriverError):
    message = "Address error on network %(network)s: %(reason)s"


class AddressExhausted(AddressError):
    message = "No free address left on network %(network)s (%(cidr)s)."


class AddressInUse(AddressError):
    message = "Address %(address)s on network %(network)s is already in use."


class AddressOutOfRange(AddressError):
    message = (
        "Address %(address)s is not a usable host address of network %(network)s "
        "(%(cidr)s; the network, broadcast and gateway addresses are reserved)."
    )


class AttachmentMismatch(NetworkDriverError):
    message = "Attachment %(key)s is not as it was made: %(reason)s"


class VIFNotReady(NetworkDriverError):
    message = "Interface %(key)s did not become ready within %(timeout)s s."


class FirewallError(NetworkDriverError):
    message = "Firewall rule refused: %(reason)s"


def _short_hash(*parts: str, length: int = 11) -> str:
    digest = hashlib.sha256("\0".join(parts).encode()).hexdigest()
    return digest[:length]


@dataclass(frozen=True, slots=True)
class NetworkSpec:
    """One local network. ``name`` identifies it (the CNI network name); the bridge's
    name is derived from it unless given, so that every process finds the same bridge.

    ``gateway`` defaults to the subnet's first host; it is the bridge's own address,
    the containers' default route, and the host's address on the network.
    """

    name: str
    cidr: ipaddress.IPv4Network
    gateway: ipaddress.IPv4Address
    bridge: str
    masquerade: bool = False
    mtu: int = 1500
    #: The IPv6 subnet of a dual-stack network (None: IPv4 only); its gateway is the
    #: mirror of ``gateway`` (``mirror6``).
    cidr6: ipaddress.IPv6Network | None = None

    @property
    def gateway6(self) -> ipaddress.IPv6Address | None:
        return None if self.cidr6 is None else self.mirror6(self.gateway)

    def mirror6(self, address: ipaddress.IPv4Address) -> ipaddress.IPv6Address | None:
        """``address``'s IPv6 twin: its offset in ``cidr``, in ``cidr6`` (None when
        the network is IPv4 only)."""
        if self.cidr6 is None:
            return None
        offset = int(address) - int(self.cidr.network_address)
        return ipaddress.IPv6Address(int(self.cidr6.network_address) + offset)

    def twin4(self, address6: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
        """``mirror6``'s inverse: the IPv4 address whose twin ``address6`` is; None when
        it is the twin of no address of ``cidr`` (or the network is IPv4 only)."""
        if self.cidr6 is None:
            return None
        offset = int(address6) - int(self.cidr6.network_address)
        if not 0 <= offset < self.cidr.num_addresses:
            return None
        return self.cidr.network_address + offset

    def interface6(self, address: ipaddress.IPv4Interface) -> ipaddress.IPv6Interface | None:
        twin = self.mirror6(address.ip)
        return None if twin is None or self.cidr6 is None else \
            ipaddress.IPv6Interface((twin, self.cidr6.prefixlen))

    @classmethod
    def build(cls, name: str, cidr: str, gateway: str | None = None,
              bridge: str | None = None, masquerade: bool = False,
              mtu: int = 1500, cidr6: str | None = None) -> NetworkSpec:
        """A checked spec from strings; ``InvalidNetworkSpec`` says what is wrong."""
        if not name:
            raise InvalidNetworkSpec(reason="a network needs a name")
        try:
            net = ipaddress.IPv4Network(cidr, strict=True)
        except ValueError as exc:
            raise InvalidNetworkSpec(reason=f"subnet {cidr!r}: {exc}") from exc
        if net.num_addresses < 4:
            raise InvalidNetworkSpec(
                reason=f"subnet {cidr} is too small: it needs room for a gateway and a host "
                       f"(a /30 or larger)")
        try:
            gw = ipaddress.IPv4Address(gateway) if gateway else next(net.hosts())
        except ValueError as exc:
            raise InvalidNetworkSpec(reason=f"gateway {gateway!r}: {exc}") from exc
        if gw not in net or gw in (net.network_address, net.broadcast_address):
            raise InvalidNetworkSpec(reason=f"gateway {gw} is not a host of {net}")
        br = bridge or BRIDGE_PREFIX + _short_hash(name)
        if not br.startswith(BRIDGE_PREFIX) or len(br) > IFNAME_MAX:
            raise InvalidNetworkSpec(
                reason=f"bridge name {br!r} must start with {BRIDGE_PREFIX!r} and be at most "
                       f"{IFNAME_MAX} characters (berth's firewall matches on the prefix)")
        if not 576 <= mtu <= 65535:
            raise InvalidNetworkSpec(reason=f"mtu {mtu} is out of range 576..65535")
        if mtu < 1280 and cidr6:
            raise InvalidNetworkSpec(reason=f"mtu {mtu} is below IPv6's minimum of 1280")
        return cls(name=name, cidr=net, gateway=gw, bridge=br, masquerade=masquerade, mtu=mtu,
                   cidr6=_subnet6(cidr6, net) if cidr6 else None)

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "name": self.name, "cidr": str(self.cidr), "gateway": str(self.gateway),
            "bridge": self.bridge, "masquerade": self.masquerade, "mtu": self.mtu}
        if self.cidr6 is not None:
            out["cidr6"] = str(self.cidr6)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> NetworkSpec:
        return cls.build(str(data["name"]), str(data["cidr"]), str(data["gateway"]),
                         str(data["bridge"]), bool(data.get("masquerade", False)),
                         int(data.get("mtu", 1500)),  # type: ignore[call-overload]
                         str(data["cidr6"]) if data.get("cidr6") else None)


def _subnet6(cidr6: str, net: ipaddress.IPv4Network) -> ipaddress.IPv6Network:
    """A checked IPv6 subnet for the IPv4 subnet ``net``: room for every IPv4 host's
    twin, and no IPv4-mapped, link-local or multicast range."""
    try:
        net6 = ipaddress.IPv6Network(cidr6, strict=True)
    except ValueError as exc:
        raise InvalidNetworkSpec(reason=f"IPv6 subnet {cidr6!r}: {exc}") from exc
    if net6.num_addresses < net.num_addresses:
        raise InvalidNetworkSpec(
            reason=f"IPv6 subnet {net6} is smaller than the IPv4 subnet {net}: each IPv4 "
                   f"address has its twin there (a /64 is the usual size)")
    if net6.is_multicast or net6.is_link_local or net6.network_address.ipv4_mapped is not None \
            or net6.is_loopback or net6.is_unspecified:
        raise InvalidNetworkSpec(reason=f"IPv6 subnet {net6} cannot hold containers' "
                                        f"addresses (a unique local fd00::/8 subnet can)")
    return net6


@dataclass(frozen=True, slots=True)
class AttachmentKey:
    """The CNI spec's primary key of a plugin's state."""

    network: str
    container_id: str
    ifname: str

    def __str__(self) -> str:
        return f"{self.network}/{self.container_id}/{self.ifname}"

    @property
    def host_ifname(self) -> str:
        """The host end's name: stable, so a restarted process finds its veth again."""
        return VETH_PREFIX + _short_hash(self.network, self.container_id, self.ifname)


def stable_mac(key: AttachmentKey) -> str:
    """A locally administered unicast MAC derived from the key: the same on every retry."""
    digest = hashlib.sha256(str(key).encode()).digest()
    return "02:" + ":".join(f"{b:02x}" for b in digest[:5])


@dataclass(frozen=True, slots=True)
class VIF:
    """One container interface on one network, as plugged."""

    key: AttachmentKey
    netns: str
    mac: str
    address: ipaddress.IPv4Interface
    gateway: ipaddress.IPv4Address
    bridge: str
    host_ifname: str
    mtu: int = 1500
    #: Whether this interface carries the namespace's default route (the first one does).
    default_route: bool = True
    #: Its IPv6 address and gateway on a dual-stack network (``NetworkSpec.mirror6``).
    address6: ipaddress.IPv6Interface | None = None
    gateway6: ipaddress.IPv6Address | None = None

    @classmethod
    def planned(cls, spec: NetworkSpec, key: AttachmentKey, netns: str, mac: str,
                address: ipaddress.IPv4Interface, default_route: bool = True) -> VIF:
        """The VIF of ``key`` on ``spec`` with ``address`` (and its IPv6 twin)."""
        return cls(key=key, netns=netns, mac=mac, address=address, gateway=spec.gateway,
                   bridge=spec.bridge, host_ifname=key.host_ifname, mtu=spec.mtu,
                   default_route=default_route, address6=spec.interface6(address),
                   gateway6=spec.gateway6)

    @property
    def ifname(self) -> str:
        return self.key.ifname

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "network": self.key.network, "container_id": self.key.container_id,
            "ifname": self.key.ifname, "netns": self.netns, "mac": self.mac,
            "address": str(self.address), "gateway": str(self.gateway),
            "bridge": self.bridge, "host_ifname": self.host_ifname, "mtu": self.mtu,
            "default_route": self.default_route}
        if self.address6 is not None and self.gateway6 is not None:
            out.update(address6=str(self.address6), gateway6=str(self.gateway6))
        return out

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> VIF:
        six = data.get("address6") and data.get("gateway6")
        return cls(key=AttachmentKey(str(data["network"]), str(data["container_id"]),
                                     str(data["ifname"])),
                   netns=str(data["netns"]), mac=str(data["mac"]),
                   address=ipaddress.IPv4Interface(str(data["address"])),
                   gateway=ipaddress.IPv4Address(str(data["gateway"])),
                   bridge=str(data["bridge"]), host_ifname=str(data["host_ifname"]),
                   mtu=int(data.get("mtu", 1500)),  # type: ignore[call-overload]
                   default_route=bool(data.get("default_route", True)),
                   address6=ipaddress.IPv6Interface(str(data["address6"])) if six else None,
                   gateway6=ipaddress.IPv6Address(str(data["gateway6"])) if six else None)


class NetworkDriver(Protocol):
    """Plugs containers into local networks. Every method is idempotent (calling it
    again after success, or after a crash half-way, converges on the same state) and
    safe to call from several threads for *different* networks; the caller serialises
    calls that touch the same network. Failures raise ``NetworkDriverError``."""

    def ensure_network(self, spec: NetworkSpec) -> None:
        """The network's bridge exists, is up and holds the gateway address."""

    def delete_network(self, spec: NetworkSpec) -> None:
        """The bridge (and so its address and routes) is gone; no-op when absent."""

    def attach(self, spec: NetworkSpec, key: AttachmentKey, netns: str,
               address: ipaddress.IPv4Interface, mac: str | None = None) -> VIF:
        """A veth pair: the host end on the bridge, the other end in ``netns``
        renamed to ``key.ifname`` with ``mac`` (or a stable generated one), ``address``
        (and its IPv6 twin on a dual-stack network) and, for the first interface, a
        default route via the gateway (and the IPv6 gateway).
        ``NetnsNotFound`` when the namespace does not exist."""
        ...

    def detach(self, key: AttachmentKey, netns: str | None = None) -> None:
        """The veth pair of ``key`` is gone (both ends); no-op when absent."""

    def remove_host_interface(self, ifname: str) -> None:
        """Remove one host-side link berth made, by name (an orphan the sync pass found)."""

    def check(self, vif: VIF) -> None:
        """``AttachmentMismatch`` unless the interface exists in its namespace with the
        VIF's MAC and address and is up, and its host end is on the bridge."""

    def is_ready(self, vif: VIF) -> bool:
        """True once the container end has carrier (the link is usable)."""
        ...

    def host_interfaces(self, bridges: Collection[str]) -> set[str]:
        """Names of the host-side veth ends berth made that exist now on one of
        ``bridges`` (the caller's networks) or on no bridge at all: another berth's
        daemon on the same host (a test run's, say) keeps its own, on its own bridges."""
        ...
