"""The kernel side of the overlay, through pyroute2: a network's VXLAN device on its
bridge, and its forwarding (``bridge fdb ... self``) and neighbour tables.

The device: VNI from the network's row, UDP 4789, the node's tunnel address as
source, learning off and ARP/ND proxying on (its neighbour table answers the
containers' requests on their own node), no remote and no group: a frame whose MAC it
has no entry for is dropped. Every entry berth writes is permanent; the kernel's own
(the device's MAC, with no destination) are left alone.

``IPRoute`` is opened by the ``open_ipr`` given (the host's by default; a test hands
one that enters a network namespace, ``berth.network.netns.iproute_in``).
"""

from __future__ import annotations

import errno
import ipaddress
import logging
import socket
from collections.abc import Callable

from berth.network.base import NetworkDriverError, NetworkSpec
from berth.network.bridge import delete_link, translate_errors
from berth.network.netlink import IPRoute, NetlinkError, ndmsg
from berth.network.overlay.plan import VXLAN_PORT, Changes, Tables, check_vni, device_name

LOG = logging.getLogger(__name__)

AF_BRIDGE = 7
_PERMANENT = ndmsg.states["permanent"]
_NOARP = ndmsg.states["noarp"]
_SELF = ndmsg.flags["self"]
_SCOPE_LINK = 253
_PROTO_KERNEL = 2


class VxlanLinks:
    def __init__(self, open_ipr: Callable[[], IPRoute] = IPRoute) -> None:
        self._open = open_ipr

    def ensure(self, spec: NetworkSpec, vni: int, local: ipaddress.IPv4Address) -> int:
        """The network's device exists with ``vni`` and ``local``, on its bridge, up, with
        the bridge's MTU; one found with other settings is made again (its tables
        with it: the caller writes them next). Returns its index."""
        vni, name = check_vni(vni), device_name(spec)
        with translate_errors(f"setting up VXLAN device {name}"), self._open() as ipr:
            bridge = _index(ipr, spec.bridge)
            if bridge is None:
                raise NetworkDriverError(reason=f"bridge {spec.bridge} does not exist")
            index = _index(ipr, name)
            if index is not None and _settings(ipr, index) != (vni, str(local), 0, 1):
                LOG.info("VXLAN device %s has other settings; making it again for VNI %d "
                         "from %s", name, vni, local)
                delete_link(ipr, name)
                index = None
            if index is None:
                try:
                    ipr.link("add", ifname=name, kind="vxlan", vxlan_id=vni,
                             vxlan_local=str(local), vxlan_port=VXLAN_PORT,
                             vxlan_learning=0, vxlan_proxy=1, mtu=spec.mtu)
                except NetlinkError as exc:
                    if exc.code != errno.EEXIST:
                        raise
                index = _index(ipr, name)
                if index is None:
                    raise NetworkDriverError(reason=f"{name} vanished while set up")
                LOG.info("created VXLAN device %s (VNI %d, from %s) for network %s", name,
                         vni, local, spec.name)
            ipr.link("set", index=index, master=bridge, mtu=spec.mtu, state="up")
            return index

    def remove(self, spec: NetworkSpec) -> bool:
        name = device_name(spec)
        with translate_errors(f"removing VXLAN device {name}"), self._open() as ipr:
            if delete_link(ipr, name):
                LOG.info("removed VXLAN device %s of network %s", name, spec.name)
                return True
        return False

    def exists(self, spec: NetworkSpec) -> bool:
        with translate_errors("listing links"), self._open() as ipr:
            return _index(ipr, device_name(spec)) is not None

    def read(self, spec: NetworkSpec) -> Tables:
        """The permanent entries of the device's tables (empty when it is absent)."""
        name = device_name(spec)
        tables = Tables()
        with translate_errors(f"reading the tables of {name}"), self._open() as ipr:
            index = _index(ipr, name)
            if index is None:
                return tables
            for entry in ipr.get_neighbours(family=AF_BRIDGE, ifindex=index):
                mac, dst = entry.get("NDA_LLADDR"), entry.get("NDA_DST")
                if entry["ifindex"] == index and mac and dst and \
                        entry["state"] & _PERMANENT:
                    tables.fdb[mac.lower()] = ipaddress.IPv4Address(dst)
            for family in (socket.AF_INET, socket.AF_INET6):
                for entry in ipr.get_neighbours(family=family, ifindex=index):
                    mac, dst = entry.get("NDA_LLADDR"), entry.get("NDA_DST")
                    if entry["ifindex"] == index and mac and dst and \
                            entry["state"] & _PERMANENT:
                        tables.neigh[ipaddress.ip_address(dst)] = mac.lower()
        return tables

    def apply(self, spec: NetworkSpec, change: Changes) -> None:
        """Removals first (an address now elsewhere), then additions and replacements."""
        name = device_name(spec)
        with translate_errors(f"writing the tables of {name}"), self._open() as ipr:
            index = _index(ipr, name)
            if index is None:
                raise NetworkDriverError(reason=f"VXLAN device {name} does not exist")
            for address, mac in change.neigh_del.items():
                _quietly(ipr.neigh, "del", ifindex=index, dst=str(address), lladdr=mac,
                         family=_family(address))
            for mac, dst in change.fdb_del.items():
                _quietly(ipr.fdb, "del", ifindex=index, lladdr=mac, dst=str(dst))
            for mac, dst in change.fdb_set.items():
                ipr.neigh("replace", family=AF_BRIDGE, ifindex=index, lladdr=mac,
                          dst=str(dst), state=_PERMANENT | _NOARP, flags=_SELF)
            for address, mac in change.neigh_set.items():
                ipr.neigh("replace", family=_family(address), ifindex=index,
                          dst=str(address), lladdr=mac, state=_PERMANENT)

    def set_host_address(self, spec: NetworkSpec, address: ipaddress.IPv4Address,
                         mac: str) -> bool:
        """The node's own address on the network (``plan.host_owner``): the bridge gets
        ``mac`` and ``address``/32, and the subnet's route ``address`` as its source,
        so that what the host sends into the network (to a container here or on
        another node) comes from an address the other nodes' tables lead back to
        this node, not from the gateway's, which every node's bridge holds. Other
        /32s of the subnet on the bridge (an address held before) go. Idempotent;
        True when it changed anything."""
        changed = False
        with translate_errors(f"setting the node's address on {spec.bridge}"), \
                self._open() as ipr:
            index = _index(ipr, spec.bridge)
            if index is None:
                raise NetworkDriverError(reason=f"bridge {spec.bridge} does not exist")
            if (ipr.get_links(index)[0].get("IFLA_ADDRESS") or "").lower() != mac:
                ipr.link("set", index=index, address=mac)
                changed = True
            held = {a.get("IFA_ADDRESS") for a in ipr.get_addr(index=index,
                                                                 family=socket.AF_INET)
                    if a["prefixlen"] == 32}
            for other in held - {str(address)}:
                if other and ipaddress.IPv4Address(other) in spec.cidr:
                    _quietly(ipr.addr, "del", index=index, address=other, prefixlen=32)
                    changed = True
            if str(address) not in held:
                ipr.addr("add", index=index, address=str(address), prefixlen=32)
                changed = True
            routes = [r for r in ipr.get_routes(family=socket.AF_INET, table=254)
                      if r.get("RTA_OIF") == index and r["dst_len"] == spec.cidr.prefixlen
                      and r.get("RTA_DST") == str(spec.cidr.network_address)]
            if not any(r.get("RTA_PREFSRC") == str(address) for r in routes):
                ipr.route("replace", dst=str(spec.cidr), oif=index, prefsrc=str(address),
                          scope=_SCOPE_LINK, proto=_PROTO_KERNEL)
                changed = True
        return changed


def underlay_mtu(local: ipaddress.IPv4Address,
                 open_ipr: Callable[[], IPRoute] = IPRoute) -> int:
    """The MTU of the interface that holds ``local`` (``NetworkDriverError`` when no
    interface does: ``[network]local_tunnel_ip`` must be one of the node's addresses)."""
    with translate_errors("reading the underlay's MTU"), open_ipr() as ipr:
        for addr in ipr.get_addr(family=socket.AF_INET):
            if addr.get("IFA_ADDRESS") == str(local) or addr.get("IFA_LOCAL") == str(local):
                return int(ipr.get_links(addr["index"])[0].get("IFLA_MTU"))
    raise NetworkDriverError(reason=f"no interface of this node holds the tunnel address "
                                    f"{local}: set [network]local_tunnel_ip (or my_ip) to "
                                    f"one of its addresses")


def _index(ipr: IPRoute, ifname: str) -> int | None:
    found = ipr.link_lookup(ifname=ifname)
    return found[0] if found else None


def _settings(ipr: IPRoute, index: int) -> tuple[object, ...]:
    info = ipr.get_links(index)[0].get("IFLA_LINKINFO")
    if not info or info.get("IFLA_INFO_KIND") != "vxlan":
        return ()
    data = info.get("IFLA_INFO_DATA")
    return (data.get("IFLA_VXLAN_ID"), data.get("IFLA_VXLAN_LOCAL"),
            data.get("IFLA_VXLAN_LEARNING"), data.get("IFLA_VXLAN_PROXY"))


def _family(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> int:
    return socket.AF_INET if address.version == 4 else socket.AF_INET6


def _quietly(call: Callable[..., object], *args: object, **kwargs: object) -> None:
    """A removal of what is gone already is done."""
    try:
        call(*args, **kwargs)
    except NetlinkError as exc:
        if exc.code not in (errno.ENOENT, errno.ENODEV):
            raise
