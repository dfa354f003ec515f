"""The agent's network step: plug a container into berth's local networks, and
unplug it.

With the ``local`` driver (``[network]driver``) a container is created with Docker's
``network_mode=none`` (a namespace with only ``lo``) and, once Docker has started
it, plugged by the CNI daemon: one veth per network, ``eth0``, ``eth1``, ... in the
order asked for. The row keeps two things::

    cni_metadata = its networks (``network``: the berth network's uuid, ``ifname``,
                   ``fixed_ip``) and the plugged ``pid`` (0: unplugged), nothing else:
                   ``berth.network.metadata.CniMetadata``
    addresses    = per network uuid, its interface's addresses (Zun's shape):
                   ``berth.network.addresses.Addresses``

Each plug carries the container's policy (``policy_of``): its security groups, as
memberships, and its exposed ports; the daemon's firewall lets nothing else in.

A container's namespace lives and dies with its process, so the plug follows the
process (``follow``)::

    docker start / restart / a restart by Docker ──► pid P, netns of P ──► plug (add)
    docker stop / kill / the process exits       ──► unplug (delete; address freed)

The address a container had is asked for again when it is plugged again (its
``fixed_ip`` when the user gave one, else the one it held); when another container
took it meanwhile, a user's fixed IP is an error and any other gets a new address.

Between ``docker start`` and the plug (a few milliseconds to tens of them), the
container's process runs with only ``lo``: berth does not make its entrypoint wait
(as Zun's cni driver does with ``/zun-init-network-ready``, which needs ``/bin/sh``
in the image). A program that needs the network at its first instruction should
retry; servers that bind 0.0.0.0 are unaffected.
"""

from __future__ import annotations

import functools
import ipaddress
import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar

from berth.cni.client import DaemonClient
from berth.cni.contract import CniError, Code
from berth.common import exceptions as exc
from berth.db import networks as db_networks
from berth.db.engine import Database
from berth.db.models import Container
from berth.network import metadata
from berth.network.addresses import AddressEntry, Addresses, of_vif
from berth.network.base import VIF, NetworkSpec
from berth.network.metadata import NetworkEntry
from berth.network.policy import Policy
from berth.runtime import base as rt

LOG = logging.getLogger(__name__)


NetworkPlugFailed = exc.NetworkPlugFailed
T = TypeVar("T")


def requested(row: Container) -> list[NetworkEntry]:
    """The row's networks, in interface order (copies)."""
    return metadata.networks_of(row.cni_metadata)


def plugged_pid(row: Container) -> int:
    return metadata.pid_of(row.cni_metadata)


def next_ifname(entries: list[NetworkEntry]) -> str:
    taken = {e.get("ifname") for e in entries}
    return next(f"eth{i}" for i in range(len(entries) + 1) if f"eth{i}" not in taken)


class ContainerNetworks:
    """Plugs and unplugs containers through ``berth-cni-daemon``. Thread-safe for
    different containers; the caller holds the container's task (or is its state
    sync worker) so that one container is not plugged twice at once."""

    #: Seconds a network's spec read from the database serves again: a create's
    #: plug reuses the read of its reservation, made a start earlier.
    SPEC_TTL = 10.0

    def __init__(self, db: Database, client: DaemonClient, masquerade: bool = False) -> None:
        self.db, self.client, self.masquerade = db, client, masquerade
        self._specs: dict[str, tuple[float, NetworkSpec]] = {}

    def network_mode(self, row: Container) -> str | None:
        """Docker's network mode for the row: ``none`` when berth plugs it."""
        return "none" if requested(row) else None

    def engine_networking(self, row: Container
                          ) -> tuple[str | None, rt.NetworkEndpoint | None]:
        """What ``docker create`` is given: the network mode and the container's
        endpoint on it (the kuryr driver's; None here: plugged after the start)."""
        return self.network_mode(row), None

    def spec(self, network_uuid: str) -> NetworkSpec:
        """What the daemon is told of the network. Its fields never change once the
        network exists (its subnets, gateway and bridge are fixed at its creation), so
        a read serves for ``SPEC_TTL``; a network deleted meanwhile is seen after."""
        now = time.monotonic()
        cached = self._specs.get(network_uuid)
        if cached is not None and now - cached[0] < self.SPEC_TTL:
            return cached[1]
        network = db_networks.find_by_uuid(self.db, network_uuid)
        if network is None:
            self._specs.pop(network_uuid, None)
            raise exc.NetworkNotFound(network=network_uuid)
        spec = db_networks.spec_of(network, self.masquerade)
        if len(self._specs) > 1024:       # networks come and go: keep it small
            self._specs.clear()
        self._specs[network_uuid] = (now, spec)
        return spec

    # -- following the container's process --

    def follow(self, row: Container, seen: rt.RuntimeContainer) -> dict[str, Any]:
        """The row values after bringing the plug in line with ``seen``: plugged into
        the running process's namespace, unplugged when no process runs. ``{}`` when
        nothing changed. ``NetworkPlugFailed`` when a plug failed (nothing left)."""
        entries = requested(row)
        if not entries or seen.state is None:
            return {}
        pid = seen.state.pid if seen.state.running else 0
        if pid == plugged_pid(row):
            return {}
        if pid:
            return self.plug(row, pid)
        return self.unplug(row)

    def plug(self, row: Container, pid: int) -> dict[str, Any]:
        netns = f"/proc/{pid}/ns/net"
        entries = requested(row)
        old = dict(row.addresses or {})
        addresses: Addresses = {}
        done: list[tuple[NetworkSpec, str]] = []
        try:
            for entry in entries:
                spec = self.spec(entry["network"])
                vif = self._add(row, spec, netns, entry, old.get(entry["network"]) or [])
                done.append((spec, entry["ifname"]))
                addresses.setdefault(entry["network"], []).extend(of_vif(vif))
        except (CniError, exc.BerthError) as err:
            for spec, ifname in done:
                self._delete_quietly(spec, row.uuid, ifname, netns)
            self._drop_reservations(row, entries[len(done):], netns)
            name = entry["network"]
            raise NetworkPlugFailed(network=name, reason=getattr(err, "msg", str(err))) from err
        LOG.info("plugged into %s", ", ".join(
            f"{a['ifname']} {a['addr']}" for v in addresses.values() for a in v))
        return {"addresses": addresses,
                "cni_metadata": metadata.fresh(entries, pid)}

    def reserve(self, row: Container) -> None:
        """Ahead of the plug, while the engine starts the container: each network's
        address taken and its rules laid (``CniService.reserve``), so that the plug
        after the start only makes the interfaces. Best effort: a reservation that
        fails is logged, and the plug that follows meets the same cause and reports
        it; a reservation no plug claims is dropped by the unplug (or by the daemon's
        sync pass)."""
        old = dict(row.addresses or {})
        policy = policy_of(row)
        for entry in requested(row):
            try:
                spec = self.spec(entry["network"])
                _asking_held_first(entry, old.get(entry["network"]) or [], functools.partial(
                    self.client.reserve, spec, row.uuid, entry["ifname"], policy=policy))
            except (CniError, exc.BerthError) as err:
                LOG.info("could not reserve an address on network %s ahead of the plug "
                         "(%s); the plug tries again", entry["network"],
                         getattr(err, "msg", err))
                return

    def _add(self, row: Container, spec: NetworkSpec, netns: str, entry: NetworkEntry,
             held: list[AddressEntry]) -> VIF:
        policy = policy_of(row)
        return _asking_held_first(entry, held, functools.partial(
            self.client.add, spec, row.uuid, netns, entry["ifname"], policy=policy))

    def apply_security_groups(self, row: Container) -> None:
        """The plugged interfaces of the row take its policy with the row's (changed)
        ``security_groups`` (add/remove_security_group): at once, before the row records
        the change. Nothing to do while it is unplugged: its next plug carries them.
        ``NetworkPlugFailed`` when the daemon refuses or cannot be reached."""
        if not requested(row) or not plugged_pid(row):
            return
        policy = policy_of(row)
        try:
            self.client.set_policy(row.uuid, policy)
        except CniError as err:
            raise NetworkPlugFailed(network="(all)", reason=err.msg) from err

    def unplug(self, row: Container, entries: list[NetworkEntry] | None = None
               ) -> dict[str, Any]:
        """Every attachment of the row is gone (idempotent). The addresses stay in the
        row (Zun shows a stopped container's addresses) and are asked for again at the
        next plug. Raises ``NetworkPlugFailed`` when the daemon cannot be reached."""
        entries = requested(row) if entries is None else entries
        pid = plugged_pid(row)
        netns = f"/proc/{pid}/ns/net" if pid else None
        for entry in entries:
            try:
                spec = self.spec(entry["network"])
                self.client.delete(spec, row.uuid, entry["ifname"], netns)
            except exc.NetworkNotFound:
                continue     # deleted with its attachments gone (409 while in use)
            except CniError as err:
                raise NetworkPlugFailed(network=entry["network"], reason=err.msg) from err
        if entries:
            LOG.info("unplugged from %d network(s)", len(entries))
        return {"cni_metadata": metadata.fresh(requested(row), 0)}

    def _drop_reservations(self, row: Container, entries: list[NetworkEntry],
                           netns: str) -> None:
        """After a failed plug: the reservations (``reserve``) of the interfaces it did
        not make are dropped (a DEL of nothing is nothing)."""
        for entry in entries:
            try:
                self._delete_quietly(self.spec(entry["network"]), row.uuid, entry["ifname"],
                                     netns)
            except exc.NetworkNotFound:
                continue

    def _delete_quietly(self, spec: NetworkSpec, uuid: str, ifname: str, netns: str) -> None:
        try:
            self.client.delete(spec, uuid, ifname, netns)
        except CniError as err:
            LOG.warning("could not undo the attachment %s/%s (%s); the daemon's sync pass "
                        "removes it once the container's namespace is gone", spec.name,
                        ifname, err.msg)

    # -- attach and detach while the container lives --

    def attach(self, row: Container, network_uuid: str, fixed_ip: str | None,
               port: str | None = None) -> dict[str, Any]:
        """One more network (the next ethN); plugged at once when the container runs.
        ``port`` (a Neutron port) is for the Neutron driver's subclass only."""
        entries = requested(row)
        if any(e["network"] == network_uuid for e in entries):
            raise exc.Conflict(f"Container {row.uuid} is already attached to network "
                               f"{network_uuid}.")
        entry: NetworkEntry = {"network": network_uuid, "ifname": next_ifname(entries),
                               "fixed_ip": fixed_ip or None}
        addresses = dict(row.addresses or {})
        pid = plugged_pid(row)
        if pid:
            spec = self.spec(network_uuid)
            try:
                vif = self._add(row, spec, f"/proc/{pid}/ns/net", entry, [])
            except CniError as err:
                raise NetworkPlugFailed(network=network_uuid, reason=err.msg) from err
            addresses[network_uuid] = of_vif(vif)
        else:
            addresses.setdefault(network_uuid, [])
        return {"addresses": addresses,
                "cni_metadata": metadata.fresh(entries + [entry], pid)}

    def detach(self, row: Container, network_uuid: str) -> dict[str, Any]:
        entries = requested(row)
        gone = [e for e in entries if e["network"] == network_uuid]
        if not gone:
            raise exc.Conflict(f"Container {row.uuid} is not attached to network "
                               f"{network_uuid}.")
        self.unplug(row, gone)
        addresses = {k: v for k, v in (row.addresses or {}).items() if k != network_uuid}
        return {"addresses": addresses,
                "cni_metadata": metadata.fresh([e for e in entries if e not in gone],
                                               plugged_pid(row))}

    def sweep_orphans(self, rows_of: Callable[[], dict[str, Container]]) -> int:
        """At start-up: remove what the driver holds for containers whose rows do not
        record it; how many things it removed. ``rows_of``: this host's rows by uuid,
        read only after the driver listed what it holds (so that a thing made
        meanwhile has its row). Local networks hold nothing outside the CNI daemon,
        whose sync pass removes attachments whose namespace is gone: 0."""
        return 0


def policy_of(row: Container) -> Policy:
    """Who may reach the row's container (``berth.network.policy``: its security
    groups as memberships, its exposed ports open to all)."""
    return Policy.of_container(row.security_groups, row.exposed_ports)


def _wanted_address(entry: NetworkEntry, held: list[AddressEntry]
                    ) -> tuple[str | None, str | None]:
    """The interface's fixed IP (the user's), and the address to ask for: that one,
    else the one it held before (``held``: the row's addresses on its network)."""
    fixed = entry.get("fixed_ip")
    previous = next((a.get("addr") for a in held
                     if a.get("ifname", entry["ifname"]) == entry["ifname"]
                     and a.get("version", 4) == 4), None)
    return fixed, fixed or previous


def _asking_held_first(entry: NetworkEntry, held: list[AddressEntry],
                       ask: Callable[[ipaddress.IPv4Address | None], T]) -> T:
    """``ask`` the daemon (an ADD or a reservation) for the interface's fixed IP, else
    the address it held; when that one was taken meanwhile (not a user's fixed IP),
    for any."""
    fixed, wanted = _wanted_address(entry, held)
    try:
        return ask(ipaddress.IPv4Address(wanted) if wanted else None)
    except CniError as err:
        if fixed or not wanted or err.code != Code.ADDRESS_UNAVAILABLE:
            raise
        LOG.info("address %s was taken meanwhile (%s); taking another", wanted, err.msg)
        return ask(None)


def reserve(networks: ContainerNetworks | None, row: Container) -> None:
    """``ContainerNetworks.reserve``, or nothing without local networks."""
    if networks is not None and requested(row):
        networks.reserve(row)


def follow(networks: ContainerNetworks | None, row: Container,
           seen: rt.RuntimeContainer) -> dict[str, Any]:
    """``ContainerNetworks.follow``, or nothing without local networks."""
    return networks.follow(row, seen) if networks is not None else {}


def unplug(networks: ContainerNetworks | None, row: Container) -> dict[str, Any]:
    """``ContainerNetworks.unplug``, or nothing without local networks."""
    return networks.unplug(row) if networks is not None else {}


def apply_security_groups(networks: ContainerNetworks | None, row: Container) -> None:
    """The row's security groups enforced where it is plugged: the daemon's rules on
    local networks, the ports' groups with Neutron; nothing with Docker's driver."""
    if networks is not None:
        networks.apply_security_groups(row)


def release(networks: ContainerNetworks | None, row: Container) -> None:
    """After a delete's unplug: what the driver made for the container goes (the
    Neutron driver's ports and security group); nothing for local networks."""
    hook = getattr(networks, "release", None)
    if hook is not None:
        hook(row)
