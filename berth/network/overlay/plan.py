"""The overlay's pure logic: names, MTU, and the tables one node wants.

A node's wanted tables follow from the members of a network that *other, live* nodes
hold (``Member``): for each, a forwarding entry (its MAC to the tunnel address of its
node) and a neighbour entry (its IPv4 address, and on a dual-stack network its IPv6
twin, to its MAC). Each node holds one member for itself, its bridge's address
(``host_owner``), so that its host reaches the containers of other nodes and their
answers come back to it. ``changes`` says what to add and remove to get from what the
kernel has to what is wanted; an entry whose value changed (a MAC now behind another
node, an address now on another MAC) is replaced, not removed and added.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field

from berth.network import policy as pol
from berth.network.base import (
    BRIDGE_PREFIX,
    AttachmentKey,
    InvalidNetworkSpec,
    NetworkSpec,
    stable_mac,
)
from berth.network.policy import Policy

#: Every VXLAN device berth makes starts with this; the rest is its bridge's suffix.
VXLAN_PREFIX = "bvx"
#: IANA's VXLAN port.
VXLAN_PORT = 4789
#: Bytes VXLAN adds over IPv4: outer Ethernet 14 + IPv4 20 + UDP 8 + VXLAN 8.
VXLAN_OVERHEAD = 50
#: VNIs are 24 bits; 0 is left unused.
VNI_MAX = 2 ** 24 - 1

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def device_name(spec: NetworkSpec) -> str:
    """The network's VXLAN device: its bridge's name with ``bvx`` for ``bth`` (so the
    pair is found from either, and stays within the 15 characters of a name)."""
    if not spec.bridge.startswith(BRIDGE_PREFIX):
        raise InvalidNetworkSpec(reason=f"bridge {spec.bridge} is not one of berth's")
    return VXLAN_PREFIX + spec.bridge[len(BRIDGE_PREFIX):]


def host_owner(host: str) -> str:
    """The owner of the address node ``host`` holds on a spanning network for itself
    (its bridge's): not an attachment's ``network/container/ifname``, so no policy
    or registry entry is ever looked for under it."""
    return f"node:{host}"


def is_host_owner(owner: str) -> bool:
    return owner.startswith("node:")


def host_mac(network: str, host: str) -> str:
    """The MAC node ``host`` gives the bridge of ``network``: set, so that it no longer
    follows the lowest MAC of the bridge's ports (which changes as containers come and
    go, while the other nodes' entries name it), and different on every node."""
    return stable_mac(AttachmentKey(network, host_owner(host), "bridge"))


def overlay_mtu(underlay_mtu: int) -> int:
    """The MTU of a spanning network's bridge, veths and container interfaces, so that
    a full frame plus its VXLAN encapsulation fits the underlay without fragmenting."""
    mtu = underlay_mtu - VXLAN_OVERHEAD
    if mtu < 576:
        raise InvalidNetworkSpec(reason=f"the underlay's MTU {underlay_mtu} leaves {mtu} "
                                        f"under VXLAN, below 576")
    return mtu


def check_vni(vni: int) -> int:
    if not 1 <= vni <= VNI_MAX:
        raise InvalidNetworkSpec(reason=f"VNI {vni} is out of range 1..{VNI_MAX} (the "
                                        f"network row's id)")
    return vni


@dataclass(frozen=True, slots=True)
class Member:
    """One attachment of a spanning network, as the store records it."""

    address: ipaddress.IPv4Address
    mac: str
    host: str
    tunnel_ip: ipaddress.IPv4Address
    #: The attachment's key (``network/container/ifname``) and policy.
    owner: str = ""
    policy: Policy | None = None


@dataclass(frozen=True, slots=True)
class Tables:
    """A VXLAN device's entries: ``fdb`` MAC -> tunnel address, ``neigh`` address -> MAC
    (MACs lower case)."""

    fdb: dict[str, ipaddress.IPv4Address] = field(default_factory=dict)
    neigh: dict[IPAddress, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Changes:
    fdb_set: dict[str, ipaddress.IPv4Address]
    fdb_del: dict[str, ipaddress.IPv4Address]
    neigh_set: dict[IPAddress, str]
    neigh_del: dict[IPAddress, str]

    def __bool__(self) -> bool:
        return bool(self.fdb_set or self.fdb_del or self.neigh_set or self.neigh_del)

    def __len__(self) -> int:
        return len(self.fdb_set) + len(self.fdb_del) + len(self.neigh_set) + len(self.neigh_del)


def wanted(spec: NetworkSpec, members: Iterable[Member], me: str,
           live: Collection[str]) -> Tables:
    """The tables node ``me`` wants for ``spec``: the members on the ``live`` nodes
    other than ``me``. Members outside the subnet are ignored (a row of another
    network's, or a corrupt one, must not route a foreign address into this one)."""
    fdb: dict[str, ipaddress.IPv4Address] = {}
    neigh: dict[IPAddress, str] = {}
    for m in sorted(members, key=lambda m: (int(m.address), m.host)):
        if m.host == me or m.host not in live or m.address not in spec.cidr:
            continue
        mac = m.mac.lower()
        fdb[mac] = m.tunnel_ip
        neigh[m.address] = mac
        twin = None if is_host_owner(m.owner) else spec.mirror6(m.address)
        if twin is not None:     # a node's own address is IPv4 only
            neigh[twin] = mac
    return Tables(fdb, neigh)


def policy_members(spec: NetworkSpec, members: Iterable[Member], me: str,
                   live: Collection[str]) -> list[pol.Member]:
    """The members of other live nodes that have a policy, as the security-group rules
    of this node count them (its groups' members; exposed ports and groups checked
    here too on the way out, as on their own node on the way in)."""
    out = []
    for m in members:
        if m.host == me or m.host not in live or m.policy is None or \
                m.address not in spec.cidr:
            continue
        network, _, rest = m.owner.partition("/")
        container_id, _, ifname = rest.rpartition("/")
        if network != spec.name or not container_id or not ifname:
            continue
        out.append(pol.Member(AttachmentKey(network, container_id, ifname), m.address,
                              m.policy, spec.mirror6(m.address)))
    return sorted(out, key=lambda m: int(m.address))


def changes(have: Tables, want: Tables) -> Changes:
    return Changes(
        fdb_set={mac: dst for mac, dst in want.fdb.items() if have.fdb.get(mac) != dst},
        fdb_del={mac: dst for mac, dst in have.fdb.items() if mac not in want.fdb},
        neigh_set={ip: mac for ip, mac in want.neigh.items() if have.neigh.get(ip) != mac},
        neigh_del={ip: mac for ip, mac in have.neigh.items() if ip not in want.neigh})
