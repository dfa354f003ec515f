"""The agent's network step with kuryr-libnetwork (``[network]driver = kuryr``, Zun's
default): Neutron ports made by berth, plugged by Docker through the kuryr plugin.

Unlike the cni driver, Docker plugs the container itself: its first network is the
container's network mode (``docker create`` gets the Docker network of the Neutron
network, the port's address and MAC: ``engine_networking``), its other networks are
connected once it runs (``docker network connect`` with the port's address). The
plugin finds berth's port by its address, binds it to its host (kuryr-libnetwork's
hostname, which must be berth's ``[DEFAULT]host``) and plugs a veth into Open vSwitch.
berth then waits until Neutron reports every port ACTIVE (``[cni_daemon]
vif_active_timeout``): a port that never does ends the create in Error with the
reason, its ports deleted. Docker unplugs on stop and plugs again on start (the
plugin finds the same ports by their addresses); the row's ``cni_metadata`` has the
cni driver's keys (``berth.network.metadata.CniMetadata``, as
``berth.compute.neutron_networks`` writes it).

Ports: the first network's is made bound to this host with its MAC given to Docker;
the others' unbound, since Docker gives their interfaces MACs of its own and the
plugin may change a port's MAC only while it is unbound. On Open vSwitch's userspace
datapath TCP needs TX checksum offload off in the container (as the cni driver does):
done after each plug.
"""

from __future__ import annotations

import ipaddress
import logging
import shutil
import subprocess
import time
from collections.abc import Callable
from typing import Any

from berth.common import exceptions as exc
from berth.compute.networking import next_ifname, plugged_pid, requested
from berth.compute.neutron_networks import NeutronNetworks, _Reserved, fixed_ips
from berth.db.engine import Database
from berth.db.models import Container
from berth.network import metadata
from berth.network.addresses import Addresses, of_port
from berth.network.kuryr.docker_networks import KuryrDockerNetworks
from berth.network.metadata import NetworkEntry
from berth.network.neutron.client import NeutronAPI, NeutronError, Port
from berth.runtime import base as rt

LOG = logging.getLogger(__name__)

NetworkPlugFailed = exc.NetworkPlugFailed


class KuryrNetworks(NeutronNetworks):
    """``ContainerNetworks`` on kuryr-libnetwork. Thread-safe for different containers
    (the caller holds the container's task)."""

    #: Seconds between two reads of the host's port statuses while a port is not ACTIVE.
    TICK = 0.2

    def __init__(self, db: Database, neutron: NeutronAPI, host: str,
                 networks: KuryrDockerNetworks, active_timeout: float = 60.0,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        super().__init__(db, None, neutron, host)  # type: ignore[arg-type]
        self.docker, self.active_timeout = networks, active_timeout
        self._clock, self._sleep = clock, sleep

    # -- docker create --

    def engine_networking(self, row: Container
                          ) -> tuple[str | None, rt.NetworkEndpoint | None]:
        """Every network's Docker network made (once per node) and its port made or
        bound; the first network is the container's network mode, with the port's
        addresses and MAC. ``NetworkPlugFailed`` with the reason (what it made is
        undone)."""
        entries = requested(row)
        if not entries:
            return None, None
        reserved = _Reserved(meta=metadata.copied(row.cni_metadata))
        try:
            groups = self._groups(row, reserved.meta)
            for index, entry in enumerate(entries):
                self.docker.ensure(entry["network"], row.project_id, row.user_id)
                reserved.ports[entry["ifname"]] = self._kuryr_port(row, entry, groups,
                                                                   primary=index == 0)
        except exc.BerthError as err:
            self._undo(row, [], reserved.made())
            self._drop_group(row, reserved.meta)
            raise _failed(entries[0]["network"], err) from err
        with self._lock:
            self._reserved[row.uuid] = reserved
        first = reserved.ports[entries[0]["ifname"]][0]
        v4, v6 = _addresses(first)
        return entries[0]["network"], rt.NetworkEndpoint(ipv4=v4, ipv6=v6, mac=first.mac)

    def reserve(self, row: Container) -> None:
        """Nothing beside the engine's start: ``docker create`` needed the ports."""

    def _kuryr_port(self, row: Container, entry: NetworkEntry, groups: list[str] | None,
                    primary: bool) -> tuple[Port, bool]:
        if primary:
            return self._port(row, entry, groups)
        port_id = entry.get("port")
        port = self.neutron.port_or_none(port_id) if port_id else None
        if port is not None:
            if entry.get("preserve_on_delete") and groups:
                port = self.neutron.set_security_groups(port.id, groups)
            return port, False
        if entry.get("preserve_on_delete"):
            raise exc.NetworkNotFound(network=f"port {port_id} (deleted in Neutron)")
        port = self.neutron.create_port(entry["network"], "", row.uuid, row.project_id or "",
                                        fixed_ips(entry), groups)
        LOG.info("made port %s on network %s for %s (bound by kuryr when connected)",
                 port.id, entry["network"], entry["ifname"])
        return port, True

    # -- after docker start --

    def plug(self, row: Container, pid: int) -> dict[str, Any]:
        """The process runs: the networks Docker did not plug yet connected, every
        port waited for until ACTIVE, TX checksum offload turned off in the
        namespace. ``NetworkPlugFailed`` with the reason; what this plug made (and
        the create's ports) is undone."""
        entries = requested(row)
        reserved = self._claim(row) or _Reserved(meta=metadata.copied(row.cni_metadata))
        made: list[str] = reserved.made()
        connected: list[str] = []
        container_id = row.container_id or ""
        failing = entries[0]["network"] if entries else "?"
        try:
            attached = self._attached(container_id)
            known = {p.network_id: p for p in self.neutron.ports_of_device(row.uuid)} \
                if any(not e.get("port") and e["ifname"] not in reserved.ports
                       for e in entries) else {}
            groups = None
            ports: list[Port] = []
            for index, entry in enumerate(entries):
                failing = entry["network"]
                got = reserved.ports.pop(entry["ifname"], None)
                port_id = entry.get("port")
                if got is None and port_id:
                    got = (self.neutron.port(port_id), False)
                if got is None and entry["network"] in known:
                    got = (known[entry["network"]], False)
                if got is None:
                    if groups is None:
                        groups = self._groups(row, reserved.meta)
                    got = self._kuryr_port(row, entry, groups, primary=index == 0)
                port, new = got
                if new and port.id not in made:
                    made.append(port.id)
                entry["port"] = port.id
                if entry["network"] not in attached:
                    self.docker.ensure(entry["network"], row.project_id, row.user_id)
                    self.docker.connect(container_id, entry["network"], *_addresses(port))
                    connected.append(entry["network"])
                ports.append(port)
            ports = self._wait_active(ports)
            names = _tx_offload_off(pid)
        except exc.BerthError as err:
            for name in connected:
                self._disconnect_quietly(container_id, name)
            if made:     # the create's own ports: its Docker container goes too
                for name in self._attached(container_id, quiet=True):
                    self._disconnect_quietly(container_id, name)
            self._undo(row, [], made)
            self._drop_group(row, reserved.meta)
            raise _failed(failing, err) from err
        addresses: Addresses = {}
        for entry, port in zip(entries, ports, strict=True):
            ifname = names.get(port.mac.lower(), entry["ifname"])
            addresses.setdefault(entry["network"], []).extend(
                of_port(port, entry, ifname))
        LOG.info("plugged by kuryr: %s", ", ".join(
            f"{a['ifname']} {a['addr']} ({a['port']})" for v in addresses.values() for a in v))
        return {"addresses": addresses,
                "cni_metadata": metadata.with_plug(reserved.meta, entries, pid)}

    def _attached(self, container_id: str, quiet: bool = False) -> list[str]:
        try:
            return self.docker.attached(container_id)
        except NetworkPlugFailed:
            if quiet:
                return []
            raise

    def _disconnect_quietly(self, container_id: str, name: str) -> None:
        try:
            self.docker.disconnect(container_id, name)
        except exc.BerthError as err:
            LOG.warning("could not disconnect from Docker network %s: %s", name, err.msg)

    def _wait_active(self, ports: list[Port]) -> list[Port]:
        """``ports`` once Neutron reports each ACTIVE (read again: kuryr bound them
        and may have set a MAC); one request a tick for the whole host."""
        deadline = self._clock() + self.active_timeout
        waiting = {p.id for p in ports}
        statuses: dict[str, str] = {}
        while waiting:
            try:
                statuses = self.neutron.port_statuses(self.host)
            except NeutronError as err:
                LOG.info("could not read the ports' statuses (%s); trying again", err.msg)
            waiting = {pid for pid in waiting if statuses.get(pid) != "ACTIVE"}
            if not waiting:
                break
            if self._clock() >= deadline:
                late = sorted(waiting)
                raise NetworkPlugFailed(
                    network="(all)",
                    reason=f"port(s) {', '.join(late)} did not become ACTIVE in Neutron "
                           f"within {self.active_timeout:.0f} s (last status: "
                           f"{', '.join(statuses.get(p) or 'not bound to ' + self.host for p in late)}); "
                           f"is Neutron's agent running on host {self.host}, and "
                           f"kuryr-libnetwork's hostname {self.host}?")
            self._sleep(self.TICK)
        return [self.neutron.port(p.id) for p in ports]

    def unplug(self, row: Container, entries: list[NetworkEntry] | None = None
               ) -> dict[str, Any]:
        """After a stop or an exit Docker has unplugged the container already; with
        ``entries`` (a detach) their Docker networks are disconnected."""
        self._drop_reserved(row)
        if entries is not None and row.container_id:
            for entry in entries:
                self.docker.disconnect(row.container_id, entry["network"])
        return {"cni_metadata": metadata.with_plug(row.cni_metadata, requested(row), 0)}

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
        meta = metadata.copied(row.cni_metadata)
        made: list[str] = []
        container_id = row.container_id or ""
        pid = plugged_pid(row)
        try:
            self.docker.ensure(network_uuid, row.project_id, row.user_id)
            got, new = self._kuryr_port(row, entry, self._groups(row, meta), primary=False)
            if new:
                made.append(got.id)
            entry["port"] = got.id
            self.docker.connect(container_id, network_uuid, *_addresses(got))
            if pid:
                try:
                    got = self._wait_active([got])[0]
                    names = _tx_offload_off(pid)
                except exc.BerthError:
                    self._disconnect_quietly(container_id, network_uuid)
                    raise
                entry_ifname = names.get(got.mac.lower(), entry["ifname"])
            else:
                entry_ifname = entry["ifname"]
        except exc.BerthError as err:
            self._undo(row, [], made)
            raise _failed(network_uuid, err) from err
        addresses = dict(row.addresses or {})
        addresses[network_uuid] = of_port(got, entry, entry_ifname) if pid else []
        return {"addresses": addresses,
                "cni_metadata": metadata.with_plug(meta, entries + [entry], pid)}


def _failed(network: str, err: exc.BerthError) -> NetworkPlugFailed:
    if isinstance(err, NetworkPlugFailed):
        return err
    return NetworkPlugFailed(network=network, reason=getattr(err, "msg", str(err)))


def _addresses(port: Port) -> tuple[str | None, str | None]:
    """The port's first IPv4 and first IPv6 address."""
    v4 = next((ip for ip, _ in port.fixed_ips if ipaddress.ip_address(ip).version == 4), None)
    v6 = next((ip for ip, _ in port.fixed_ips if ipaddress.ip_address(ip).version == 6), None)
    return v4, v6


def _tx_offload_off(pid: int) -> dict[str, str]:
    """Inside the process's namespace: TX checksum offload off on every interface but
    ``lo`` (TCP through Open vSwitch's userspace datapath; harmless on the kernel's).
    The interfaces' names by MAC."""
    netns = ["nsenter", "-t", str(pid), "-n"]
    try:
        out = subprocess.run([*netns, "ip", "-o", "link", "show"], check=True,
                             capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError) as err:
        raise NetworkPlugFailed(network="(all)", reason=f"could not read the container's "
                                                        f"interfaces: {err}") from err
    names: dict[str, str] = {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) < 2 or "link/ether" not in fields:
            continue
        name = fields[1].rstrip(":").split("@")[0]
        names[fields[fields.index("link/ether") + 1].lower()] = name
    if shutil.which("ethtool") is None:
        LOG.warning("ethtool is missing: TX checksum offload stays on in process %s (TCP "
                    "fails on Open vSwitch's userspace datapath)", pid)
        return names
    for name in names.values():
        subprocess.run([*netns, "ethtool", "-K", name, "tx", "off"], check=False,
                       capture_output=True, timeout=10)
    return names
