"""What a container's (or capsule's) row shows of its addresses: ``Container.addresses``,
Zun's JSON column, keyed by network, with one item per address of each interface.
Declared here once, with the two ways an item is made: from a veth of a local network
(``of_vif``) and from a Neutron port (``of_port``, the Neutron and kuryr drivers).

::

    addresses = {<network uuid | Neutron network id>: [AddressEntry, ...], ...}

A network whose interface is unplugged keeps its key with an empty list. Rows written
by older berths and by the Zun takeover read as they are (no key is renamed on read).
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from berth.network.base import VIF
    from berth.network.metadata import NetworkEntry
    from berth.network.neutron.client import Port


class AddressEntry(TypedDict):
    """One address of one interface, as Zun's API shows it."""

    addr: str
    version: int
    #: the Neutron port's id; on a local network the host end of the veth
    port: str
    #: the Neutron subnet's id; on a local network the subnet's CIDR
    subnet_id: str
    preserve_on_delete: bool
    ifname: str
    mac_addr: str


Addresses = dict[str, list[AddressEntry]]


def of_vif(vif: VIF) -> list[AddressEntry]:
    """A local network's interface: IPv4, then IPv6 on a dual-stack network (a local
    network has no Neutron port, nothing to preserve)."""
    return [AddressEntry(addr=str(address.ip), version=address.version,
                         port=vif.host_ifname, subnet_id=str(address.network),
                         preserve_on_delete=False, ifname=vif.ifname, mac_addr=vif.mac)
            for address in (vif.address, vif.address6) if address is not None]


def of_port(port: Port, entry: NetworkEntry, ifname: str) -> list[AddressEntry]:
    """A Neutron port's fixed IPs, in Neutron's order; ``entry``, the interface's
    ``NetworkEntry``, says whether the user's port is kept at the delete."""
    return [AddressEntry(addr=ip, version=ipaddress.ip_address(ip).version, port=port.id,
                         subnet_id=subnet,
                         preserve_on_delete=bool(entry.get("preserve_on_delete")),
                         ifname=ifname, mac_addr=port.mac)
            for ip, subnet in port.fixed_ips]
