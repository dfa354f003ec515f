"""The agent's network step with Neutron (``[network]driver = cni``): the container's
ports, bound to this host, plugged by ``berth-cni-daemon`` into Open vSwitch.

The row keeps::

    cni_metadata = ``berth.network.metadata.CniMetadata``: per network (interface
                   order) its entry, ``network`` the Neutron network's id, with its
                   ``port`` and ``preserve_on_delete``; the plugged ``pid``; and
                   ``exposed_sg``, the group berth made for the exposed ports
    addresses    = per Neutron network id, its port's fixed IPs (Zun's shape):
                   ``berth.network.addresses.Addresses``

Port lifetime::

    first start ──► port made (binding:host_id = this host, device_id = the uuid),
                    or the user's port bound, beside the engine's start (``reserve``)
                ──► plugged once the process runs ──► ACTIVE (the daemon waits)
    stop / exit ──► unplugged (the port stays, with its addresses)
    start       ──► the same port plugged again
    delete      ──► unplugged; ports berth made deleted, the user's unbound and kept;
                   the exposed-ports group berth made deleted (the one it recorded,
                   never "the first group", Zun's guess)

A plug that fails deletes the ports this plug made and unplugs what it plugged.
"""

from __future__ import annotations

import ipaddress
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from berth.cni.contract import CniError
from berth.common import exceptions as exc
from berth.compute.networking import ContainerNetworks, next_ifname, plugged_pid, requested
from berth.db.engine import Database
from berth.db.models import Container
from berth.network import metadata
from berth.network.addresses import AddressEntry, Addresses, of_port
from berth.network.metadata import CniMetadata, NetworkEntry
from berth.network.neutron.client import Network, NeutronAPI, NeutronError, Port
from berth.network.neutron.ovs import NeutronVIF
from berth.network.neutron.vif_client import VifClient

LOG = logging.getLogger(__name__)

NetworkPlugFailed = exc.NetworkPlugFailed


def fixed_ips(entry: NetworkEntry) -> list[dict[str, str]]:
    """The port's fixed IPs to ask Neutron for: the user's, if any."""
    fixed_ip = entry.get("fixed_ip")
    return [{"ip_address": fixed_ip}] if fixed_ip else []


def exposed_rules(exposed: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Ingress rules for ``{"80/tcp": {}, ...}``, from anywhere, IPv4 and IPv6."""
    rules = []
    for spec in sorted(exposed or {}):
        port, _, proto = str(spec).partition("/")
        for ethertype in ("IPv4", "IPv6"):
            rules.append({"protocol": proto or "tcp", "port_range_min": int(port),
                          "port_range_max": int(port), "ethertype": ethertype})
    return rules


@dataclass
class _Reserved:
    """What ``NeutronNetworks.reserve`` made ready for a plug: per interface name the
    port and whether it was made for it, the networks read, and the container's
    ``cni_metadata`` with the exposed ports' group it made."""

    meta: CniMetadata
    ports: dict[str, tuple[Port, bool]] = field(default_factory=dict)
    networks: dict[str, Network] = field(default_factory=dict)

    def made(self) -> list[str]:
        return [port.id for port, new in self.ports.values() if new]


class NeutronNetworks(ContainerNetworks):
    """``ContainerNetworks`` on Neutron ports. Thread-safe for different containers
    (the caller holds the container's task)."""

    def __init__(self, db: Database, client: VifClient, neutron: NeutronAPI, host: str,
                 bridge: str = "br-int") -> None:
        super().__init__(db, client)
        self.vifs, self.neutron, self.host, self.bridge = client, neutron, host, bridge
        self._lock = threading.Lock()
        self._reserved: dict[str, _Reserved] = {}     # container uuid -> its reservation

    # -- plug and unplug --

    def reserve(self, row: Container) -> None:
        """Ahead of the plug, beside the engine's start: the ports made or bound (and
        the exposed ports' group made), their networks read, so that the plug after
        the start only plugs and waits for ACTIVE (a port takes Neutron about 0.2 s to
        make: bench P14). Best effort: what fails is logged, and the plug makes what
        is missing and reports the cause. The plug claims the reservation; an unplug
        or a release that comes instead deletes what it made (and the orphan sweep
        would: its ports are named ``berth-<uuid>``, recorded by no row)."""
        reserved = _Reserved(meta=metadata.copied(row.cni_metadata))
        with self._lock:     # first, so that a drop finds what a failure left made
            self._reserved[row.uuid] = reserved
        try:
            groups = self._groups(row, reserved.meta)
            for entry in requested(row):
                reserved.ports[entry["ifname"]] = self._port(row, entry, groups)
                if entry["network"] not in reserved.networks:
                    reserved.networks[entry["network"]] = self.neutron.network(
                        entry["network"])
        except (CniError, exc.BerthError) as err:
            LOG.info("could not make the ports ahead of the plug (%s); the plug tries "
                     "again", getattr(err, "msg", err))

    def _claim(self, row: Container) -> _Reserved | None:
        with self._lock:
            return self._reserved.pop(row.uuid, None)

    def _drop_reserved(self, row: Container) -> None:
        """What a reservation no plug claimed made: deleted (the user's ports stay
        bound to the container, as after a failed plug, until its delete)."""
        reserved = self._claim(row)
        if reserved is None:
            return
        self._undo(row, [], reserved.made())
        self._drop_group(row, reserved.meta)

    def plug(self, row: Container, pid: int) -> dict[str, Any]:
        netns = f"/proc/{pid}/ns/net"
        entries = requested(row)
        reserved = self._claim(row) or _Reserved(meta=metadata.copied(row.cni_metadata))
        meta = reserved.meta
        made: list[str] = reserved.made()     # undone too if this plug fails
        plugged: list[str] = []
        addresses: Addresses = {}
        failing = "?"
        try:
            groups = self._groups(row, meta)
            for index, entry in enumerate(entries):
                failing = entry["network"]
                got = reserved.ports.pop(entry["ifname"], None)
                port, new = got if got is not None else self._port(row, entry, groups)
                if new and port.id not in made:
                    made.append(port.id)
                entry["port"] = port.id
                network = (reserved.networks.get(entry["network"])
                           or self.neutron.network(entry["network"]))
                self.vifs.add_vif(self._vif(row, netns, entry["ifname"], port, network,
                                            default_route=index == 0))
                plugged.append(port.id)
                addresses.setdefault(entry["network"], []).extend(
                    of_port(port, entry, entry["ifname"]))
        except (CniError, exc.BerthError) as err:
            self._undo(row, plugged, made)
            self._drop_group(row, meta)
            reason = getattr(err, "msg", str(err))
            if getattr(err, "http_status", None) == 504:
                reason = f"{reason} (the port never became ACTIVE in Neutron)"
            raise NetworkPlugFailed(network=failing, reason=reason) from err
        LOG.info("plugged Neutron port(s) %s", ", ".join(
            f"{a['ifname']} {a['addr']} ({a['port']})" for v in addresses.values() for a in v))
        return {"addresses": addresses,
                "cni_metadata": metadata.with_plug(meta, entries, pid)}

    def _undo(self, row: Container, plugged: list[str], made: list[str]) -> None:
        for port_id in plugged:
            try:
                self.vifs.delete_vif(port_id, self.bridge, row.uuid)
            except CniError as err:
                LOG.warning("could not unplug port %s (%s); the daemon's sync pass removes "
                            "it once the namespace is gone", port_id, err.msg)
        for port_id in made:
            try:
                self.neutron.delete_port(port_id)
                LOG.info("deleted port %s made for the failed plug", port_id)
            except NeutronError as err:
                LOG.error("could not delete port %s after a failed plug: %s", port_id,
                          err.msg)

    def _groups(self, row: Container, meta: CniMetadata) -> list[str] | None:
        """The security groups of the container's ports: the row's (ids, resolved by
        the API) and the one berth makes for its exposed ports (once, recorded)."""
        groups = list(row.security_groups or [])
        if row.exposed_ports and not meta.get("exposed_sg"):
            meta["exposed_sg"] = self.neutron.create_security_group(
                f"berth-{row.uuid}", row.project_id or "", exposed_rules(row.exposed_ports))
            LOG.info("made security group %s for the exposed ports %s", meta["exposed_sg"],
                     ", ".join(sorted(row.exposed_ports)))
        if meta.get("exposed_sg"):
            groups.append(meta["exposed_sg"])
        return groups or None

    def _port(self, row: Container, entry: NetworkEntry, groups: list[str] | None
              ) -> tuple[Port, bool]:
        """The entry's port, bound to this host for the container: the recorded one, the
        user's, or a new one. (port, whether it was made now)."""
        port_id = entry.get("port")
        port = self.neutron.port_or_none(port_id) if port_id else None
        if port is not None:
            if port.host == self.host and port.device_id == row.uuid:
                return port, False
            return self.neutron.bind_port(port.id, self.host, row.uuid, groups), False
        if entry.get("preserve_on_delete"):
            raise exc.NetworkNotFound(network=f"port {port_id} (deleted in Neutron)")
        port = self.neutron.create_port(entry["network"], self.host, row.uuid,
                                        row.project_id or "", fixed_ips(entry), groups)
        LOG.info("made port %s on network %s for %s", port.id, entry["network"],
                 entry["ifname"])
        return port, True

    def _vif(self, row: Container, netns: str, ifname: str, port: Port, network: Network,
             default_route: bool) -> NeutronVIF:
        subnets = {s.id: s for s in network.subnets}
        addresses, gateways = [], []
        for ip, subnet_id in port.fixed_ips:
            subnet = subnets.get(subnet_id)
            prefix = ipaddress.ip_network(subnet.cidr).prefixlen if subnet else 32
            addresses.append(f"{ip}/{prefix}")
            if subnet is not None and subnet.gateway_ip and subnet.gateway_ip not in gateways:
                gateways.append(subnet.gateway_ip)
        return NeutronVIF(container_id=row.uuid, ifname=ifname, netns=netns, port_id=port.id,
                          mac=port.mac, addresses=tuple(addresses), gateways=tuple(gateways),
                          bridge=port.bridge or self.bridge, mtu=network.mtu,
                          default_route=default_route)

    def unplug(self, row: Container, entries: list[NetworkEntry] | None = None
               ) -> dict[str, Any]:
        """Every VIF of the row unplugged (idempotent); the ports stay, but for those
        of a reservation no plug claimed."""
        self._drop_reserved(row)
        entries = requested(row) if entries is None else entries
        for entry in entries:
            port_id = entry.get("port")
            if not port_id:
                continue
            try:
                self.vifs.delete_vif(port_id, self.bridge, row.uuid)
            except CniError as err:
                raise NetworkPlugFailed(network=entry["network"], reason=err.msg) from err
        if entries:
            LOG.info("unplugged from %d Neutron network(s)", len(entries))
        return {"cni_metadata": metadata.with_plug(row.cni_metadata, requested(row), 0)}

    def release(self, row: Container) -> None:
        """The container is deleted: ports berth made deleted, the user's unbound and
        kept, the exposed-ports group berth made deleted. Neutron errors are logged."""
        self._drop_reserved(row)
        self._release_ports(requested(row))
        group = metadata.exposed_sg_of(row.cni_metadata)
        if group:
            self._delete_group(group)

    def _drop_group(self, row: Container, meta: CniMetadata) -> None:
        """After a failed plug or attach, or a reservation no plug claimed: the exposed
        ports' group it made in ``meta`` (the row records none) is deleted, not kept."""
        group = meta.get("exposed_sg")
        if group and group != metadata.exposed_sg_of(row.cni_metadata):
            self._delete_group(group)

    def _delete_group(self, group: str) -> None:
        try:
            self.neutron.delete_security_group(group)
            LOG.info("deleted security group %s (exposed ports)", group)
        except NeutronError as err:
            LOG.error("could not delete security group %s: %s", group, err.msg)

    def _release_ports(self, entries: list[NetworkEntry]) -> None:
        for entry in entries:
            port_id = entry.get("port")
            if not port_id:
                continue
            try:
                if entry.get("preserve_on_delete"):
                    self.neutron.release_port(port_id)
                    LOG.info("port %s is the user's: unbound and kept", port_id)
                else:
                    self.neutron.delete_port(port_id)
                    LOG.info("deleted port %s", port_id)
            except NeutronError as err:
                LOG.error("could not release port %s: %s", port_id, err.msg)

    def bound_ports(self) -> list[Port]:
        """The ports berth bound to this host (one Neutron request)."""
        return self.neutron.bound_ports(self.host)

    def sweep_orphans(self, rows_of: Callable[[], dict[str, Container]]) -> int:
        """The ports of this host that no row records (``sweep_orphan_ports``); listed
        before the rows are read. Neutron not answering is logged: the next start-up
        looks again."""
        try:
            ports = self.bound_ports()
        except NeutronError as err:
            LOG.error("could not list this host's Neutron ports (%s); orphan ports are "
                      "looked for at the next start-up", err.msg)
            return 0
        return self.sweep_orphan_ports(ports, rows_of())

    def sweep_orphan_ports(self, ports: list[Port], rows: dict[str, Container]) -> int:
        """Of ``ports`` (``bound_ports``), those whose container no longer records them:
        made by a create or an attach cut short (the agent died between Neutron's
        answer and the row's write), or left by a delete that could not reach Neutron.
        ``rows``: this host's rows, read *after* the ports were listed, so that a port
        made meanwhile has its row here; rows with a task under way are left alone
        (their flow may be about to record its port). Ports berth made (named
        ``berth-<uuid>``) are deleted, a user's port is unbound and kept. Returns how
        many it handled; Neutron errors are logged."""
        swept = 0
        for port in ports:
            row = rows.get(port.device_id)
            if row is not None and (row.task_state is not None or port.id in {
                    e.get("port") for e in requested(row)}):
                continue
            owner = "its container is gone" if row is None else \
                f"container {row.uuid} does not record it"
            try:
                if port.name == f"berth-{port.device_id}":
                    self.neutron.delete_port(port.id)
                    LOG.warning("deleted orphan port %s (%s)", port.id, owner)
                else:
                    self.neutron.release_port(port.id)
                    LOG.warning("unbound the user's port %s (%s); it is kept", port.id,
                                owner)
                swept += 1
            except NeutronError as err:
                LOG.error("could not remove orphan port %s: %s", port.id, err.msg)
        return swept

    def apply_security_groups(self, row: Container) -> None:
        """The row's groups (and the exposed-ports one) set on every port of the row."""
        group = metadata.exposed_sg_of(row.cni_metadata)
        groups = list(row.security_groups or [])
        if group:
            groups.append(group)
        for entry in requested(row):
            port_id = entry.get("port")
            if port_id:
                self.neutron.set_security_groups(port_id, groups)

    # -- attach and detach while the container lives --

    def attach(self, row: Container, network_uuid: str, fixed_ip: str | None,
               port: str | None = None) -> dict[str, Any]:
        entries = requested(row)
        if any(e["network"] == network_uuid for e in entries):
            raise exc.Conflict(f"Container {row.uuid} is already attached to network "
                               f"{network_uuid}.")
        entry: NetworkEntry = {"network": network_uuid, "ifname": next_ifname(entries),
                               "fixed_ip": fixed_ip or None, "port": port or None,
                               "preserve_on_delete": bool(port)}
        addresses = dict(row.addresses or {})
        meta = metadata.copied(row.cni_metadata)
        pid = plugged_pid(row)
        if pid:
            single = self.plug_one(row, pid, entry, len(entries), meta)
            addresses[network_uuid] = single
        else:
            addresses.setdefault(network_uuid, [])
        return {"addresses": addresses,
                "cni_metadata": metadata.with_plug(meta, entries + [entry], pid)}

    def plug_one(self, row: Container, pid: int, entry: NetworkEntry, index: int,
                 meta: CniMetadata) -> list[AddressEntry]:
        """One more port plugged into ``pid``; the exposed ports' group it makes, when
        the row records none yet (a container Zun made), goes into ``meta``, which the
        caller writes."""
        made: list[str] = []
        try:
            port, new = self._port(row, entry, self._groups(row, meta))
            if new:
                made.append(port.id)
            entry["port"] = port.id
            network = self.neutron.network(entry["network"])
            self.vifs.add_vif(self._vif(row, f"/proc/{pid}/ns/net", entry["ifname"], port,
                                        network, default_route=index == 0))
        except (CniError, exc.BerthError) as err:
            self._undo(row, [], made)
            self._drop_group(row, meta)
            raise NetworkPlugFailed(network=entry["network"],
                                    reason=getattr(err, "msg", str(err))) from err
        return of_port(port, entry, entry["ifname"])

    def detach(self, row: Container, network_uuid: str) -> dict[str, Any]:
        entries = requested(row)
        gone = [e for e in entries if e["network"] == network_uuid]
        if not gone:
            raise exc.Conflict(f"Container {row.uuid} is not attached to network "
                               f"{network_uuid}.")
        self.unplug(row, gone)
        kept = [e for e in entries if e not in gone]
        self._release_ports(gone)
        addresses = {k: v for k, v in (row.addresses or {}).items() if k != network_uuid}
        return {"addresses": addresses,
                "cni_metadata": metadata.with_plug(row.cni_metadata, kept,
                                                   plugged_pid(row))}
