"""Plugging a Neutron port into Open vSwitch the way os-vif's ``ovs`` plugin does for a
port Neutron bound as ``vif_type=ovs``::

    host namespace                                      container namespace (netns)
    br-int ── tap<port id[:11]> ══ veth ══ ethN (the port's MAC, its addresses,
              external_ids: iface-id=<port id>            default route via the subnet's
              attached-mac, iface-status=active,          gateway on the first interface)
              vm-uuid=<container uuid>

Neutron's OVS agent finds the port by ``external_ids:iface-id`` (not by the interface's
name), wires its flows and reports the port up: Neutron then marks it ACTIVE.

On Open vSwitch's userspace datapath (``datapath_type=netdev``) a veth's TCP segments
are dropped unless TX checksum offload is off on the container's end (infra.md §10,
pitfall 5): berth turns it off on every plug (``ethtool -K ethN tx off`` inside the
namespace), which costs nothing on the kernel datapath.

A port plugged again (its container's process restarted, so its namespace and veth
went while the OVS port stayed; or an earlier attempt was cut short) gets a *new* OVS
port: the old one is deleted in a transaction of its own before the veth is made.
ovs-vswitchd matches ports by name, and on the userspace datapath it keeps reading the
socket of the veth it first opened: a veth made again under the same name behind a
kept OVS port (``--may-exist``, or a delete and add in one transaction) is never read,
while Neutron, which watches only OVSDB, keeps the port ACTIVE. Such a port is then
waited for until the OVS agent has bound the new OVS port (``bound``) and only then
until ACTIVE: the status Neutron shows right after the re-plug is the old one.
"""

from __future__ import annotations

import errno
import ipaddress
import logging
import os
import shutil
import subprocess
from dataclasses import dataclass

from berth.network import netns as ns
from berth.network.base import NetworkDriverError
from berth.network.bridge import LOOPBACK_INDEX, delete_link, translate_errors
from berth.network.netlink import IFA_F_NODAD, IPRoute, NetlinkError

LOG = logging.getLogger(__name__)

#: The host end's prefix (os-vif's and Nova's ``tap``).
TAP_PREFIX = "tap"


def tap_name(port_id: str) -> str:
    return TAP_PREFIX + port_id[:11]


@dataclass(frozen=True, slots=True)
class NeutronVIF:
    """One Neutron port plugged into one container namespace."""

    container_id: str
    ifname: str
    netns: str
    port_id: str
    mac: str
    #: "address/prefix" strings, IPv4 and IPv6.
    addresses: tuple[str, ...]
    gateways: tuple[str, ...]
    bridge: str = "br-int"
    mtu: int = 1500
    default_route: bool = True

    @property
    def host_ifname(self) -> str:
        return tap_name(self.port_id)

    def to_dict(self) -> dict[str, object]:
        return {"container_id": self.container_id, "ifname": self.ifname,
                "netns": self.netns, "port_id": self.port_id, "mac": self.mac,
                "addresses": list(self.addresses), "gateways": list(self.gateways),
                "bridge": self.bridge, "mtu": self.mtu, "default_route": self.default_route}

    @classmethod
    def from_dict(cls, d: dict[str, object]) -> NeutronVIF:
        def strs(key: str) -> tuple[str, ...]:
            value = d.get(key) or []
            return tuple(str(v) for v in value) if isinstance(value, list) else ()

        return cls(container_id=str(d["container_id"]), ifname=str(d["ifname"]),
                   netns=str(d["netns"]), port_id=str(d["port_id"]), mac=str(d["mac"]),
                   addresses=strs("addresses"), gateways=strs("gateways"),
                   bridge=str(d.get("bridge") or "br-int"),
                   mtu=int(str(d.get("mtu") or 1500)),
                   default_route=bool(d.get("default_route", True)))


def _vsctl(*args: str) -> str:
    if shutil.which("ovs-vsctl") is None:
        raise NetworkDriverError(reason="ovs-vsctl is not installed: install "
                                        "openvswitch-switch (the cni driver plugs Neutron "
                                        "ports into Open vSwitch)")
    proc = subprocess.run(["ovs-vsctl", "--timeout=20", *args], check=False,
                          capture_output=True, text=True, timeout=30)
    if proc.returncode != 0:
        raise NetworkDriverError(reason=f"ovs-vsctl {' '.join(args[:4])}: "
                                        f"{proc.stderr.strip() or proc.returncode}")
    return proc.stdout


class OvsPlugger:
    """Plugs and unplugs ``NeutronVIF`` s. Idempotent; thread-safe for different ports."""

    def plug(self, vif: NeutronVIF) -> bool:
        """Plugs ``vif``; whether an OVS port of this name was there before (then the
        port's status in Neutron predates this plug: see ``bound``)."""
        host = vif.host_ifname
        fd = ns.open_fd(vif.netns)   # NetnsNotFound before anything is made
        try:
            replaced = self._remove_stale_port(vif.bridge, host)
            with translate_errors(f"plugging port {vif.port_id}"), ns.host_iproute() as ipr:
                delete_link(ipr, host)   # an interrupted attempt's leftover
                try:
                    ipr.link("add", ifname=host, kind="veth", mtu=vif.mtu, state="up",
                             peer={"ifname": vif.ifname, "net_ns_fd": fd,
                                   "address": vif.mac, "mtu": vif.mtu})
                except NetlinkError as exc:
                    if exc.code != errno.EEXIST:
                        raise
                    raise NetworkDriverError(
                        reason=f"{vif.netns} already has an interface {vif.ifname} that "
                               f"berth did not make") from exc
            _tune_inside(vif)
            with translate_errors(f"configuring {vif.ifname} in {vif.netns}"), \
                    ns.iproute_in(vif.netns) as inner:
                _configure_inside(inner, vif)
            _vsctl("--", "--may-exist", "add-port", vif.bridge, host,
                   "--", "set", "Interface", host,
                   f"external_ids:iface-id={vif.port_id}",
                   "external_ids:iface-status=active",
                   f"external_ids:attached-mac={vif.mac}",
                   f"external_ids:vm-uuid={vif.container_id}")
        except BaseException:
            try:
                self.unplug(vif.port_id, vif.bridge)
            except NetworkDriverError as undo:
                LOG.warning("could not undo the half-made plug of port %s: %s",
                            vif.port_id, undo)
            raise
        finally:
            os.close(fd)
        LOG.info("plugged port %s as %s (%s) into %s%s", vif.port_id, vif.ifname,
                 ", ".join(vif.addresses), vif.bridge,
                 " (replacing its earlier OVS port)" if replaced else "")
        return replaced

    @staticmethod
    def _remove_stale_port(bridge: str, host: str) -> bool:
        """Deletes the OVS port ``host`` left by an earlier plug, in its own transaction
        (ovs-vsctl returns once ovs-vswitchd has closed the old interface), so that the
        add that follows opens the veth about to be made. Whether there was one."""
        if not _vsctl("--if-exists", "get", "Port", host, "name").strip():
            return False
        LOG.warning("OVS port %s is left from an earlier plug; deleting it before plugging "
                    "again (a kept port would not carry the new veth's traffic)", host)
        _vsctl("--if-exists", "del-port", bridge, host)
        return True

    def bound(self, port_id: str) -> bool:
        """Whether Neutron's OVS agent has bound the OVS port of ``port_id`` (it writes
        the network's ``net_uuid`` and local VLAN ``tag`` into the port's other_config
        before it installs the port's flows and reports it up)."""
        out = _vsctl("--if-exists", "get", "Port", tap_name(port_id), "other_config")
        return "net_uuid=" in out

    def unplug(self, port_id: str, bridge: str = "br-int") -> None:
        """The OVS port and the veth pair are gone; nothing to do when absent."""
        host = tap_name(port_id)
        _vsctl("--if-exists", "del-port", bridge, host)
        with translate_errors(f"removing {host}"), ns.host_iproute() as ipr:
            if delete_link(ipr, host):
                LOG.info("unplugged port %s (%s)", port_id, host)

    def plugged(self, bridge: str = "br-int") -> dict[str, str]:
        """``tap`` ports on ``bridge``: interface name → its iface-id (port id)."""
        out = _vsctl("--columns=name,external_ids", "--format=csv", "--data=bare",
                     "--no-headings", "find", "Interface")
        found: dict[str, str] = {}
        for line in out.splitlines():
            name, _, ids = line.partition(",")
            if not name.startswith(TAP_PREFIX):
                continue
            for item in ids.split():
                k, _, v = item.partition("=")
                if k == "iface-id":
                    found[name] = v
        return found


def _configure_inside(ipr: IPRoute, vif: NeutronVIF) -> None:
    found = ipr.link_lookup(ifname=vif.ifname)
    if not found:
        raise NetworkDriverError(reason=f"{vif.ifname} did not appear in the namespace")
    index = found[0]
    for text in vif.addresses:
        address = ipaddress.ip_interface(text)
        # IPv6: no duplicate address detection (the address is Neutron's, and usable at
        # once rather than "tentative" for a second or two)
        kwargs = {"flags": IFA_F_NODAD} if address.version == 6 else {}
        try:
            ipr.addr("add", index=index, address=str(address.ip),
                     prefixlen=address.network.prefixlen, **kwargs)
        except NetlinkError as exc:
            if exc.code != errno.EEXIST:
                raise
    ipr.link("set", index=index, state="up")
    ipr.link("set", index=LOOPBACK_INDEX, state="up")
    if not vif.default_route:
        return
    for gateway in vif.gateways:
        gw = ipaddress.ip_address(gateway)
        dst = "0.0.0.0/0" if gw.version == 4 else "::/0"
        try:
            ipr.route("add", dst=dst, gateway=str(gw), oif=index,
                      family=2 if gw.version == 4 else 10)
        except NetlinkError as exc:
            if exc.code != errno.EEXIST:
                raise


def _tune_inside(vif: NeutronVIF) -> None:
    """Inside the namespace: TX checksum offload off (TCP on the userspace datapath), and
    IPv6 enabled on the interface when the port has an IPv6 address (Docker disables
    IPv6 in a container with network_mode none)."""
    if shutil.which("nsenter") is None:
        raise NetworkDriverError(reason="nsenter is not installed (util-linux)")
    steps = []
    if any(ipaddress.ip_interface(a).version == 6 for a in vif.addresses):
        steps.append(f"echo 0 > /proc/sys/net/ipv6/conf/{vif.ifname}/disable_ipv6")
    if shutil.which("ethtool") is not None:
        steps.append(f"ethtool -K {vif.ifname} tx off >/dev/null")
    else:
        LOG.warning("ethtool is missing: TX checksum offload stays on for %s of %s (TCP "
                    "fails on Open vSwitch's userspace datapath)", vif.ifname,
                    vif.container_id)
    if not steps:
        return
    proc = subprocess.run(["nsenter", f"--net={ns.netns_path(vif.netns)}", "sh", "-c",
                           " && ".join(steps)], check=False, capture_output=True,
                          text=True, timeout=30)
    if proc.returncode != 0:
        raise NetworkDriverError(reason=f"tuning {vif.ifname} in {vif.netns}: "
                                        f"{proc.stderr.strip() or proc.returncode}")
