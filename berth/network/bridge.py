"""The local network driver: one Linux bridge per network, one veth pair per attachment.

::

    host namespace                               container namespace (netns)
    bth<hash> (bridge, gateway/prefix) ── vth<hash> ══ veth ══ eth0 (mac, address/prefix,
                                                                default via gateway)

An attach is one netlink request on the host (the pair, made with its container end
already in the namespace under its final name; the bridge's index is remembered) and
six inside the namespace (the lookup of the new end, address, up, loopback up, route,
and the read of its state that stands for the readiness check); a request costs
about half a millisecond through pyroute2, so the count matters, and so does opening
a session (as much again): the host's are kept open (``netns.host_iproute``). On a
dual-stack network the interface gets its IPv6 address and route too (two more
requests), after IPv6 is enabled on it (Docker disables IPv6 in a container without
a network); the addresses skip duplicate address detection (``nodad``): berth's IPAM
hands out each one once, and DAD would keep a new address unusable for a second or
more.

Names derive from the network name and the attachment key (``berth.network.base``),
so a restarted process finds what an earlier one made. Every method converges: an
``attach`` that finds a pair from an earlier, interrupted attempt removes it and
plugs again; ``detach`` and ``delete_network`` of what is absent do nothing.

The bridge is not filtered here: ``berth.network.firewall`` owns the iptables rules
without which Docker's FORWARD DROP policy drops the frames crossing it.
"""

from __future__ import annotations

import errno
import ipaddress
import logging
import os
from collections.abc import Collection, Iterator
from contextlib import contextmanager

from berth.network import netns as ns
from berth.network.base import (
    VETH_PREFIX,
    VIF,
    AttachmentKey,
    AttachmentMismatch,
    NetnsNotFound,
    NetworkDriverError,
    NetworkSpec,
    stable_mac,
)
from berth.network.netlink import IFA_F_NODAD, IPRoute, NetlinkError

LOG = logging.getLogger(__name__)

#: ``lo`` is the first interface of every network namespace.
LOOPBACK_INDEX = 1


@contextmanager
def translate_errors(action: str) -> Iterator[None]:
    """Netlink and OS failures become ``NetworkDriverError`` saying what was being done."""
    try:
        yield
    except NetworkDriverError:
        raise
    except (NetlinkError, OSError) as exc:
        raise NetworkDriverError(reason=f"{action}: {exc}") from exc


def _index(ipr: IPRoute, ifname: str) -> int | None:
    found = ipr.link_lookup(ifname=ifname)
    return found[0] if found else None


def _readiness_key(vif: VIF) -> tuple[str, str, str]:
    return (str(vif.key), vif.netns, vif.host_ifname)


def delete_link(ipr: IPRoute, ifname: str) -> bool:
    """Delete by name; False when there was no such link."""
    try:
        ipr.link("del", ifname=ifname)
    except NetlinkError as exc:
        if exc.code == errno.ENODEV:
            return False
        raise
    return True


class BridgeDriver:
    """``berth.network.base.NetworkDriver`` on Linux bridges and veth pairs."""

    def __init__(self) -> None:
        #: Bridge name -> index, so that an attach need not look the bridge up.
        self._bridges: dict[str, int] = {}
        #: Attachments their attach saw UP, for the readiness check that follows it.
        self._seen_up: set[tuple[str, str, str]] = set()

    def ensure_network(self, spec: NetworkSpec) -> None:
        with translate_errors(f"setting up bridge {spec.bridge}"), ns.host_iproute() as ipr:
            index = _index(ipr, spec.bridge)
            if index is None:
                try:
                    ipr.link("add", ifname=spec.bridge, kind="bridge", mtu=spec.mtu)
                except NetlinkError as exc:
                    if exc.code != errno.EEXIST:  # a concurrent creator won: fine
                        raise
                index = _index(ipr, spec.bridge)
                LOG.info("created bridge %s for network %s (%s)", spec.bridge, spec.name,
                         spec.cidr)
            if index is None:
                raise NetworkDriverError(reason=f"bridge {spec.bridge} vanished while set up")
            kind = self._kind(ipr, index)
            if kind != "bridge":
                raise NetworkDriverError(
                    reason=f"{spec.bridge} exists and is a {kind or 'plain'} link, not a "
                           f"bridge; remove it or give the network another bridge name")
            have = {(a.get("address"), a["prefixlen"]) for a in ipr.get_addr(index=index)}
            wanted = [(str(spec.gateway), spec.cidr.prefixlen, 0)]
            if spec.cidr6 is not None:
                wanted.append((str(spec.gateway6), spec.cidr6.prefixlen, IFA_F_NODAD))
            for address, prefixlen, flags in wanted:
                if (address, prefixlen) in have:
                    continue
                try:
                    ipr.addr("add", index=index, address=address, prefixlen=prefixlen,
                             flags=flags)
                except NetlinkError as exc:
                    if exc.code == errno.EACCES and flags:
                        raise NetworkDriverError(
                            reason=f"network {spec.name} is dual-stack, but IPv6 is disabled "
                                   f"on this host (net.ipv6.conf.{spec.bridge}.disable_ipv6"
                                   f"): enable it, or empty [network]local_subnet_pool_v6 "
                                   f"for new networks") from exc
                    if exc.code != errno.EEXIST:
                        raise
            ipr.link("set", index=index, state="up")
            self._bridges[spec.bridge] = index

    def delete_network(self, spec: NetworkSpec) -> None:
        self._bridges.pop(spec.bridge, None)
        with translate_errors(f"removing bridge {spec.bridge}"), ns.host_iproute() as ipr:
            if delete_link(ipr, spec.bridge):
                LOG.info("removed bridge %s of network %s", spec.bridge, spec.name)

    def attach(self, spec: NetworkSpec, key: AttachmentKey, netns: str,
               address: ipaddress.IPv4Interface, mac: str | None = None) -> VIF:
        mac = (mac or stable_mac(key)).lower()
        host = key.host_ifname
        fd = ns.open_fd(netns)  # NetnsNotFound before anything is made
        try:
            with translate_errors(f"plugging {key} into {spec.bridge}"), ns.host_iproute() as ipr:
                self._add_pair(ipr, spec, key, fd, mac)
            with translate_errors(f"configuring {key.ifname} in {netns}"):
                if spec.cidr6 is not None:
                    ns.write_sysctl_in(fd, f"net/ipv6/conf/{key.ifname}/disable_ipv6", "0")
                with ns.iproute_in(netns) as inner:
                    default_route, up = self._configure_inside(inner, spec, key, address)
        except BaseException:
            try:
                self._forget(host)
            except NetworkDriverError as undo:
                LOG.warning("could not undo the half-made attachment %s: %s", key, undo)
            raise
        finally:
            os.close(fd)
        vif = VIF.planned(spec, key, netns, mac, address, default_route)
        if up:
            self._seen_up.add(_readiness_key(vif))
        return vif

    def _add_pair(self, ipr: IPRoute, spec: NetworkSpec, key: AttachmentKey, fd: int,
                  mac: str) -> None:
        """One request makes the pair, puts the host end on the bridge and up, and makes
        the other end inside the namespace with its final name and MAC: no window in
        which it sits in the host's namespace under a temporary name. The bridge's index
        is remembered (the kernel never reuses one soon): a stale one is refused (EINVAL)
        and looked up again. A host end left by an interrupted attempt (EEXIST) is
        deleted, which deletes its pair wherever the other end is, and the pair made
        again."""
        bridge = self._bridge(ipr, spec.bridge)
        for attempt in range(3):
            try:
                ipr.link("add", ifname=key.host_ifname, kind="veth", mtu=spec.mtu,
                         master=bridge, state="up",
                         peer={"ifname": key.ifname, "net_ns_fd": fd, "address": mac,
                               "mtu": spec.mtu})
                return
            except NetlinkError as exc:
                if exc.code == errno.EINVAL and attempt < 2:
                    fresh = self._bridge(ipr, spec.bridge, fresh=True)
                    if fresh != bridge:
                        bridge = fresh
                        continue
                    raise
                if exc.code != errno.EEXIST:
                    raise
                if attempt < 2 and delete_link(ipr, key.host_ifname):
                    continue
                raise NetworkDriverError(
                    reason=f"the namespace already has an interface {key.ifname} that "
                           f"berth did not make; ask for another interface name") from exc

    def _bridge(self, ipr: IPRoute, name: str, fresh: bool = False) -> int:
        index = None if fresh else self._bridges.get(name)
        if index is None:
            index = _index(ipr, name)
            if index is None:
                self._bridges.pop(name, None)
                raise NetworkDriverError(reason=f"bridge {name} does not exist")
            self._bridges[name] = index
        return index

    @staticmethod
    def _configure_inside(ipr: IPRoute, spec: NetworkSpec, key: AttachmentKey,
                          address: ipaddress.IPv4Interface) -> tuple[bool, bool]:
        """Address, link up, loopback up, default route; whether it set the route, and
        whether the interface is UP already (read in the same session, which spares
        the readiness check a second one)."""
        index = _index(ipr, key.ifname)
        if index is None:
            raise NetworkDriverError(reason=f"{key.ifname} did not appear in the namespace")
        ipr.addr("add", index=index, address=str(address.ip),
                 prefixlen=address.network.prefixlen)
        address6 = spec.interface6(address)
        if address6 is not None:
            ipr.addr("add", index=index, address=str(address6.ip),
                     prefixlen=address6.network.prefixlen, flags=IFA_F_NODAD)
        ipr.link("set", index=index, state="up")
        ipr.link("set", index=LOOPBACK_INDEX, state="up")
        # The first network of a container carries its default route; a later one only
        # its own subnet (the kernel adds that route with the address).
        try:
            ipr.route("add", dst="0.0.0.0/0", gateway=str(spec.gateway), oif=index)
            default_route = True
        except NetlinkError as exc:
            if exc.code != errno.EEXIST:
                raise
            default_route = False
        if default_route and address6 is not None:
            try:
                ipr.route("add", dst="::/0", gateway=str(spec.gateway6), oif=index)
            except NetlinkError as exc:   # an IPv6 default from another network
                if exc.code != errno.EEXIST:
                    raise
        up = ipr.get_links(index)[0].get("IFLA_OPERSTATE") == "UP"
        return default_route, up

    def detach(self, key: AttachmentKey, netns: str | None = None) -> None:
        for seen in [k for k in list(self._seen_up) if k[0] == str(key)]:
            self._seen_up.discard(seen)
        self._forget(key.host_ifname)

    def remove_host_interface(self, ifname: str) -> None:
        """Remove one of berth's host-side links by name (the sync pass's orphans)."""
        if not ifname.startswith(VETH_PREFIX):
            raise ValueError(f"{ifname} is not a berth veth")
        self._forget(ifname)

    def _forget(self, *ifnames: str) -> None:
        with translate_errors(f"removing {', '.join(ifnames)}"), ns.host_iproute() as ipr:
            for name in ifnames:
                if delete_link(ipr, name):
                    LOG.info("removed veth %s", name)

    def check(self, vif: VIF) -> None:
        key = str(vif.key)
        with translate_errors(f"checking {key}"), ns.host_iproute() as ipr:
            host = _index(ipr, vif.host_ifname)
            bridge = _index(ipr, vif.bridge)
            if host is None:
                raise AttachmentMismatch(key=key, reason=f"host end {vif.host_ifname} is gone")
            master = ipr.get_links(host)[0].get("IFLA_MASTER")
            if bridge is None or master != bridge:
                raise AttachmentMismatch(
                    key=key, reason=f"{vif.host_ifname} is not on bridge {vif.bridge}")
        try:
            inner = ns.iproute_in(vif.netns)
        except NetnsNotFound as exc:
            raise AttachmentMismatch(key=key, reason=f"namespace {vif.netns} is gone") from exc
        with translate_errors(f"checking {key}"), inner:
            index = _index(inner, vif.ifname)
            if index is None:
                raise AttachmentMismatch(key=key, reason=f"{vif.ifname} is gone")
            link = inner.get_links(index)[0]
            if (link.get("IFLA_ADDRESS") or "").lower() != vif.mac:
                raise AttachmentMismatch(
                    key=key, reason=f"MAC is {link.get('IFLA_ADDRESS')}, not {vif.mac}")
            if not link["flags"] & 1:  # IFF_UP
                raise AttachmentMismatch(key=key, reason=f"{vif.ifname} is down")
            have = {(a.get("address"), a["prefixlen"]) for a in inner.get_addr(index=index)}
            for address in (vif.address, vif.address6):
                if address is not None and \
                        (str(address.ip), address.network.prefixlen) not in have:
                    raise AttachmentMismatch(key=key, reason=f"address {address} is missing")

    def is_ready(self, vif: VIF) -> bool:
        if _readiness_key(vif) in self._seen_up:      # seen UP by its attach
            self._seen_up.discard(_readiness_key(vif))
            return True
        try:
            inner = ns.iproute_in(vif.netns)
        except NetnsNotFound:
            return False
        with translate_errors(f"reading {vif.key}"), inner:
            index = _index(inner, vif.ifname)
            if index is None:
                return False
            return inner.get_links(index)[0].get("IFLA_OPERSTATE") == "UP"

    def host_interfaces(self, bridges: Collection[str]) -> set[str]:
        with translate_errors("listing veths"), ns.host_iproute() as ipr:
            links = ipr.get_links()
            index_of = {link.get("IFLA_IFNAME"): link["index"] for link in links}
            mine = {index_of[b] for b in bridges if b in index_of}
            return {name for link in links
                    if (name := link.get("IFLA_IFNAME") or "").startswith(VETH_PREFIX)
                    and (link.get("IFLA_MASTER") is None or link.get("IFLA_MASTER") in mine)}

    @staticmethod
    def _kind(ipr: IPRoute, index: int) -> str | None:
        info = ipr.get_links(index)[0].get("IFLA_LINKINFO")
        return info.get("IFLA_INFO_KIND") if info else None
