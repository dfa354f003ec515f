"""What ``berth-cni-daemon`` does: add, delete and check attachments on local networks,
recover at start-up, and the sync pass.

Concurrency: one lock per network orders everything that touches a network (its IPAM,
its bridge, its attachments), so adds on different networks run in parallel on the
daemon's workers while two adds on one network cannot hand out one address or race
the last delete that removes the bridge. The registry has its own lock for its file.

A network exists on the host while it has attachments: the first add makes its bridge
and firewall rules, the last delete takes them away, so a host where every container
was deleted holds nothing of berth but its (empty) iptables chains. With
``network_linger`` (seconds) a network left without attachments keeps its bridge and
rules that long (removed by the sync pass), so that the next container's add does not
lay them again: about 100 ms of bridge and iptables work on the path of every create
of a container alone on its network (bench P1).

With an overlay (``[network]local_overlay``, ``berth.network.overlay``) the networks
span nodes: addresses come from the network-wide IPAM in the database instead of the
per-network ``SubnetAllocator``, the MTU is the overlay's, laying a network lays its
VXLAN device too, and ``reconcile_overlay`` (on a timer of its own) keeps the
device's tables and this node's claims in step with the database.

Failures raise ``NetworkDriverError`` subclasses, or ``CniError`` for a configuration
that contradicts the network as it is in use; ``berth.cni.server`` maps both to HTTP.
"""

from __future__ import annotations

import ipaddress
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Protocol

from berth.cni.contract import CniError, CniRequest, Code, network_spec
from berth.cni.registry import Entry, Registry, State
from berth.network import netns as ns
from berth.network.base import (
    VIF,
    AttachmentKey,
    AttachmentMismatch,
    NetnsNotFound,
    NetworkDriver,
    NetworkDriverError,
    NetworkSpec,
    VIFNotReady,
    stable_mac,
)
from berth.network.ipam import SubnetAllocator
from berth.network.overlay.node import NodeOverlay
from berth.network.policy import Member, Policy, network_chains

LOG = logging.getLogger(__name__)

#: Seconds a reservation (``CniService.reserve``) waits for its ADD before the sync
#: pass drops it: longer than any engine start; its agent died, or gave up.
RESERVATION_TTL = 600


class FirewallRules(Protocol):
    def ensure_network(self, spec: NetworkSpec) -> None: ...
    def remove_network(self, spec: NetworkSpec) -> None: ...
    def has_network(self, spec: NetworkSpec) -> bool: ...
    def apply_policy(self, spec: NetworkSpec, members: list[Member],
                     whole: bool = False) -> None: ...
    def collect_policy_chains(self, keep: set[str]) -> int: ...


class CniService:
    def __init__(self, driver: NetworkDriver, firewall: FirewallRules, registry: Registry,
                 vif_active_timeout: float = 60.0, poll_interval: float = 0.005,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep,
                 sweep_orphan_veths: bool = True, network_linger: float = 0.0,
                 overlay: NodeOverlay | None = None) -> None:
        self.driver, self.firewall, self.registry = driver, firewall, registry
        #: Local networks span nodes (None: each node's networks are its own).
        self.overlay = overlay
        #: Whether the sync pass removes ``vth*`` links no entry records: right for the
        #: one daemon of a host, wrong where several run (test machines running several
        #: ``berth serve``), which would take each other's veths.
        self.sweep_orphan_veths = sweep_orphan_veths
        self.network_linger = network_linger
        # Networks without attachments kept for network_linger: since when (clock).
        self._idle: dict[str, float] = {}
        self.vif_active_timeout = vif_active_timeout
        self._poll, self._clock, self._sleep = poll_interval, clock, sleep
        self._guard = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}
        self._allocators: dict[str, SubnetAllocator] = {}
        # The networks whose bridge and rules this process laid, as it laid them.
        self._ready: dict[str, NetworkSpec] = {}
        # The networks where some attachment has had a policy (their chains need laying).
        self._policied: set[str] = set()

    # -- start-up --

    def recover(self) -> None:
        """Load the registry and make the host agree with it: undo what was half done
        when the last daemon stopped, rebuild IPAM, lay the bridges and rules of the
        networks in use, then one sync pass."""
        self.registry.load()
        for entry in self.registry.entries():
            if entry.state is not State.ACTIVE:
                LOG.warning("undoing %s, left %s by the previous daemon", entry.key,
                            entry.state)
                self.driver.detach(entry.key, entry.vif.netns)
                self.registry.remove(entry.key)
        for spec in self.registry.networks():
            with self._network_lock(spec.name):
                if not self.registry.entries(spec.name):
                    self._drop_network(spec)
                else:
                    self._allocator(spec)
                    self._ensure_network(spec)
                    if self._members(spec):
                        self._policied.add(spec.name)
                    self._lay_policy(spec)
        self.sync()

    # -- the three CNI commands --

    def add(self, request: CniRequest) -> VIF:
        if request.netns is None:
            raise CniError(Code.INVALID_ENVIRONMENT, "ADD needs CNI_NETNS", version=request.version)
        spec, key, netns = self._fit(network_spec(request)), request.key, request.netns
        with self._network_lock(spec.name):
            spec = self._admit(spec, request)
            self._idle.pop(spec.name, None)
            identity = ns.identity(netns)
            if identity is None:
                raise NetnsNotFound(netns=netns)
            if identity == ns.identity("/proc/self/ns/net"):
                # The daemon is root and listens without authentication (as Zun's): never
                # let a request put an interface, an address and routes on the host itself.
                raise CniError(Code.INVALID_ENVIRONMENT,
                               f"CNI_NETNS {netns} is the host's own network namespace",
                               version=request.version)
            existing = self.registry.get(key)
            reserved = existing if _claims(existing, request) else None
            if existing is not None and reserved is None:
                same = (existing.state is State.ACTIVE and existing.vif.netns == netns
                        and existing.netns_id == str(identity))
                if same and self._intact(existing.vif):
                    LOG.info("%s is already attached as asked; answering again", key)
                    if existing.policy != request.policy:
                        self._set_policy(spec, key, request.policy)
                        self._lay_policy(spec)
                    return existing.vif
                LOG.info("%s: replacing the earlier attachment (%s)", key, existing.state)
                self._undo(existing)
            mac = (request.mac or stable_mac(key)).lower()
            address = (reserved.vif.address if reserved is not None
                       else self._allocate(spec, key, mac, request.fixed_ip, request.policy))
            planned = VIF.planned(spec, key, netns, mac, address)
            try:
                self.registry.put(Entry(planned, State.PLUGGING, str(identity),
                                        request.policy), spec)
            except BaseException:
                self._release(spec.name, key, address)
                raise
            try:
                self._ensure_network(spec)
                # The policy is in place before the interface exists: no moment open.
                # A reservation laid it already, unless the policy changed since.
                if reserved is None or reserved.policy != request.policy:
                    self._lay_policy(spec)
                vif = self.driver.attach(spec, key, netns, address, mac)
                self._wait_ready(vif)
                self.registry.set_state(key, State.ACTIVE, vif)
            except BaseException as exc:
                try:
                    entry = self.registry.get(key)
                    if entry is not None:
                        self._undo(entry)
                    self._drop_network_if_unused(spec)
                except NetworkDriverError as undo:  # the next start or DEL finishes it
                    LOG.error("%s: could not undo the failed add (%s): %s", key, exc, undo)
                raise
        LOG.info("attached %s: %s on %s in %s", key, address, spec.bridge, netns)
        return vif

    def reserve(self, request: CniRequest) -> None:
        """Make ready for an ADD whose namespace does not exist yet (berth's own, asked
        by the compute agent while the engine starts the container): the address taken,
        the network's bridge and rules laid, and the policy's rules laid with the
        address in them, so that the ADD which follows only makes the interface. An
        ADD of the same key claims the reservation (when it asks for no other
        address); a DEL drops it, and so does the sync pass once it is older than
        ``RESERVATION_TTL``. Asking again while reserved changes nothing."""
        spec, key = self._fit(network_spec(request)), request.key
        with self._network_lock(spec.name):
            spec = self._admit(spec, request)
            self._idle.pop(spec.name, None)
            existing = self.registry.get(key)
            if existing is not None:
                if existing.state is not State.RESERVED or _claims(existing, request):
                    if existing.state is State.RESERVED and existing.policy != request.policy:
                        self._set_policy(spec, key, request.policy)
                        self._lay_policy(spec)
                    return         # attached already, or reserved as asked: the ADD decides
                self._undo(existing)
            mac = (request.mac or stable_mac(key)).lower()
            address = self._allocate(spec, key, mac, request.fixed_ip, request.policy)
            planned = VIF.planned(spec, key, "", mac, address)
            try:
                self.registry.put(Entry(planned, State.RESERVED, "", request.policy,
                                        reserved_at=time.time()), spec)
            except BaseException:
                self._release(spec.name, key, address)
                raise
            try:
                self._ensure_network(spec)
                self._lay_policy(spec)
            except BaseException:
                self._undo(self.registry.get(key) or Entry(planned, State.RESERVED))
                self._drop_network_if_unused(spec)
                raise
        LOG.info("reserved %s for %s", address, key)

    def delete(self, request: CniRequest) -> None:
        """Idempotent: what is not there is not an error (the spec asks DEL to succeed
        when the namespace or the attachment is already gone)."""
        key = request.key
        with self._network_lock(key.network):
            entry = self.registry.get(key)
            if entry is None:
                self.driver.detach(key, request.netns)  # whatever a lost registry left
                return
            self._undo(entry, mark=True)
            spec = self.registry.network(key.network)
            if spec is not None:
                self._drop_network_if_unused(spec)
        LOG.info("detached %s", key)

    def set_policy(self, container_id: str, policy: Policy | None) -> int:
        """Every attachment of ``container_id`` takes ``policy`` (its security groups
        changed); the rules of their networks follow at once. Returns how many
        attachments it changed (none when the container is not plugged: its next add
        carries the policy)."""
        changed = 0
        for entry in self.registry.entries():
            if entry.key.container_id != container_id:
                continue
            with self._network_lock(entry.key.network):
                current = self.registry.get(entry.key)
                spec = self.registry.network(entry.key.network)
                if current is None or spec is None or current.policy == policy:
                    continue
                self._set_policy(spec, entry.key, policy)
                self._lay_policy(spec)
                changed += 1
        if changed:
            LOG.info("container %s: policy %s applied to %d attachment(s)", container_id,
                     policy.to_dict() if policy else None, changed)
        return changed

    def check(self, request: CniRequest) -> None:
        key = request.key
        entry = self.registry.get(key)
        if entry is None or entry.state is not State.ACTIVE:
            raise AttachmentMismatch(key=str(key), reason="berth has no such attachment")
        self.driver.check(entry.vif)
        spec = self.registry.network(key.network)
        if spec is None or not self.firewall.has_network(spec):
            raise AttachmentMismatch(key=str(key), reason="the network's firewall rules are missing")
        prev = request.config.get("prevResult")
        if isinstance(prev, dict):
            addresses = {ip.get("address") for ip in prev.get("ips") or [] if isinstance(ip, dict)}
            if addresses and str(entry.vif.address) not in addresses:
                raise AttachmentMismatch(
                    key=str(key), reason=f"has {entry.vif.address}, prevResult says {addresses}")

    # -- the sync pass --

    def sync(self) -> int:
        """Remove attachments whose namespace is gone (or is now another namespace at the
        same path), finish deletes that failed half-way, remove host veths that no entry
        accounts for; lay missing bridges and
        rules again. Returns how many things it removed.

        The veths it takes for orphans are the ``vth*`` links no entry records that are
        on one of its networks' bridges or on none: another daemon's veths on its own
        bridges (a second berth on the host, as in tests) are left alone."""
        removed = 0
        # Interfaces first, entries second: an add writes its entry before it makes its
        # veth, so any veth seen here that is in flight has its entry in the snapshot.
        bridges = [spec.bridge for spec in self.registry.networks()]
        interfaces = self.driver.host_interfaces(bridges) if self.sweep_orphan_veths else set()
        entries = self.registry.entries()
        known = {e.key.host_ifname for e in entries}
        for name in sorted(interfaces - known):
            LOG.warning("removing orphan veth %s (no attachment records it)", name)
            self.driver.remove_host_interface(name)
            removed += 1
        for entry in entries:
            if entry.state is State.PLUGGING:  # an add in flight (or undone at start-up)
                continue
            if entry.state is State.RESERVED and \
                    time.time() - entry.reserved_at < RESERVATION_TTL:
                continue                        # its ADD is still to come
            if entry.state is State.ACTIVE:
                try:
                    identity = ns.identity(entry.vif.netns)
                except NetworkDriverError as exc:  # unreadable is not gone: keep it
                    LOG.warning("%s: %s; keeping the attachment", entry.key, exc)
                    continue
                if identity is not None and str(identity) == entry.netns_id:
                    continue
            with self._network_lock(entry.key.network):
                current = self.registry.get(entry.key)
                if current != entry:  # changed under us: a later pass will see it
                    continue
                if entry.state is State.DELETING:  # a delete that failed half-way
                    LOG.warning("%s: finishing an interrupted delete", entry.key)
                elif entry.state is State.RESERVED:
                    LOG.warning("%s: no ADD claimed the reservation of %s in %d s; "
                                "dropping it", entry.key, entry.vif.address, RESERVATION_TTL)
                else:
                    LOG.warning("%s: namespace %s is gone; removing the attachment",
                                entry.key, entry.vif.netns)
                try:
                    self._undo(entry, mark=True)
                    spec = self.registry.network(entry.key.network)
                    if spec is not None:
                        self._drop_network_if_unused(spec)
                except NetworkDriverError as exc:  # one stuck entry must not stop the pass
                    LOG.error("%s: could not remove the attachment: %s", entry.key, exc)
                    continue
                removed += 1
        for spec in self.registry.networks():
            with self._network_lock(spec.name):
                if not self.registry.entries(spec.name):
                    idle = self._idle.setdefault(spec.name, self._clock())
                    if self._clock() - idle >= self.network_linger:
                        self._drop_network(spec)
                    continue
                # A bridge someone removed by hand comes back (its veths do not: CHECK
                # reports those attachments, and the runtime's DEL and ADD repair them).
                self.driver.ensure_network(spec)
                if not self.firewall.has_network(spec):
                    LOG.warning("firewall rules of network %s were missing; laying them again",
                                spec.name)
                    self.firewall.ensure_network(spec)
                self._lay_policy(spec, whole=True)  # atomic: whatever was edited by hand
        if self.sweep_orphan_veths:      # the one daemon of the host owns BERTH-D/C/G-*
            keep: set[str] = set()
            for spec in self.registry.networks():
                keep |= network_chains(spec, self._members(spec))
            removed += self.firewall.collect_policy_chains(keep)
        return removed

    def reconcile_overlay(self) -> int:
        """The overlay's pass (``[network]local_overlay``): for each network laid here,
        its VXLAN tables from the database and this node's claims from the registry
        (network lock held: no add is half-way); then the claims this node holds on
        networks it no longer has are released. Returns how many things changed."""
        if self.overlay is None:
            return 0
        changed, known = 0, set()
        live = self.overlay.store.live_hosts()
        for spec in self.registry.networks():
            known.add(spec.name)
            with self._network_lock(spec.name):
                entries = self.registry.entries(spec.name)
                if not entries and spec.name in self._idle and \
                        self.overlay.store.vni(spec.name) is None:
                    # Kept for network_linger, but deleted from the database: no
                    # container can come to it any more, so its device and rules go now.
                    LOG.info("network %s was deleted; removing it before its linger ends",
                             spec.name)
                    self._drop_network(spec)
                    changed += 1
                    continue
                if not entries or self._ready.get(spec.name) is None:
                    continue       # idle, or not laid by this process yet (recovery does)
                attachments = {str(e.key): (e.vif.address.ip, e.vif.mac, e.policy)
                               for e in entries}
                before = self.overlay.remote_members(spec.name)
                try:
                    changed += self.overlay.reconcile(spec, attachments, live)
                    if self.overlay.remote_members(spec.name) != before:
                        self._lay_policy(spec)     # the groups' members on other nodes
                except NetworkDriverError as exc:   # the other networks still converge
                    LOG.error("network %s: could not reconcile its overlay: %s", spec.name,
                              exc)
        for network, owners in self.overlay.claims_here().items():
            if network in known:
                continue
            with self._network_lock(network):
                if self.registry.entries(network):
                    continue                        # an add laid it meanwhile
                for owner in sorted(owners):
                    LOG.warning("network %s: releasing the address %s held here without "
                                "an attachment", network, owner)
                    changed += self.overlay.release_owner(network, owner)
        return changed

    def drop_idle_networks(self) -> None:
        """Remove the networks kept without attachments (``network_linger``): the
        daemon stops, and a stopped daemon would leave them on the host for good."""
        for spec in self.registry.networks():
            with self._network_lock(spec.name):
                if not self.registry.entries(spec.name):
                    self._drop_network(spec)

    # -- helpers --

    @contextmanager
    def _network_lock(self, name: str) -> Iterator[None]:
        with self._guard:
            lock = self._locks.setdefault(name, threading.Lock())
        with lock:
            yield

    def _admit(self, spec: NetworkSpec, request: CniRequest) -> NetworkSpec:
        """The network as in use, or ``spec`` when it is new and fits beside the others."""
        known = self.registry.network(spec.name)
        if known is not None:
            if (known.cidr, known.gateway, known.bridge, known.cidr6) != \
                    (spec.cidr, spec.gateway, spec.bridge, spec.cidr6):
                raise CniError(Code.INVALID_NETWORK_CONFIG,
                               f"network {spec.name} is in use with subnet {known.cidr}, gateway "
                               f"{known.gateway}, bridge {known.bridge}, IPv6 subnet "
                               f"{known.cidr6 or 'none'}; this configuration says {spec.cidr}, "
                               f"{spec.gateway}, {spec.bridge}, {spec.cidr6 or 'none'}",
                               version=request.version)
            if (known.masquerade, known.mtu) == (spec.masquerade, spec.mtu):
                return known
            return spec  # an operator changed ipMasq or mtu: the new rules apply
        for other in self.registry.networks():
            if other.cidr.overlaps(spec.cidr) or other.bridge == spec.bridge or (
                    other.cidr6 is not None and spec.cidr6 is not None
                    and other.cidr6.overlaps(spec.cidr6)):
                if not self.registry.entries(other.name):
                    # Idle (kept for network_linger): the subnet was given to a new
                    # network since; the old one goes now.
                    LOG.info("network %s (%s) is idle and clashes with %s; removing it",
                             other.name, other.cidr, spec.name)
                    with self._network_lock(other.name):
                        if not self.registry.entries(other.name):
                            self._drop_network(other)
                            continue
                raise CniError(Code.INVALID_NETWORK_CONFIG,
                               f"network {spec.name} ({spec.cidr}, bridge {spec.bridge}) "
                               f"clashes with network {other.name} ({other.cidr}, bridge "
                               f"{other.bridge}) already in use", version=request.version)
        return spec

    def _fit(self, spec: NetworkSpec) -> NetworkSpec:
        """With an overlay, the network's MTU leaves room for VXLAN."""
        return spec if self.overlay is None else self.overlay.fit(spec)

    def _allocate(self, spec: NetworkSpec, key: AttachmentKey, mac: str,
                  fixed_ip: ipaddress.IPv4Address | None,
                  policy: Policy | None) -> ipaddress.IPv4Interface:
        if self.overlay is not None:
            return self.overlay.allocate(spec, str(key), mac, fixed_ip, policy)
        return self._allocator(spec).allocate(fixed_ip)

    def _set_policy(self, spec: NetworkSpec, key: AttachmentKey, policy: Policy | None) -> None:
        """The entry's policy, and its claim's with an overlay (network lock held)."""
        self.registry.set_policy(key, policy)
        if self.overlay is not None:
            self.overlay.set_policy(spec, str(key), policy)

    def _release(self, network: str, key: AttachmentKey,
                 address: ipaddress.IPv4Interface) -> None:
        if self.overlay is not None:
            spec = self.registry.network(network)
            if spec is not None:
                self.overlay.release(spec, str(key))
            else:
                self.overlay.release_owner(network, str(key))
            return
        allocator = self._allocators.get(network)
        if allocator is not None:
            allocator.release(address)

    def _allocator(self, spec: NetworkSpec) -> SubnetAllocator:
        allocator = self._allocators.get(spec.name)
        if allocator is None or allocator.spec.cidr != spec.cidr:
            in_use = [e.vif.address.ip for e in self.registry.entries(spec.name)]
            allocator = SubnetAllocator(spec, in_use)
            self._allocators[spec.name] = allocator
        return allocator

    def _ensure_network(self, spec: NetworkSpec) -> None:
        if self._ready.get(spec.name) == spec:
            return
        self.driver.ensure_network(spec)
        self.firewall.ensure_network(spec)
        if self.overlay is not None:
            self.overlay.ensure(spec)
        self._ready[spec.name] = spec

    def _members(self, spec: NetworkSpec) -> list[Member]:
        """The attachments with a policy: this node's, and with an overlay the other
        live nodes' (their groups hold across nodes)."""
        members = [Member(e.key, e.vif.address.ip, e.policy, spec.mirror6(e.vif.address.ip))
                   for e in self.registry.entries(spec.name) if e.policy is not None]
        if self.overlay is not None and members:    # none here: no chains to fill
            mine = {m.key for m in members}
            members += [m for m in self.overlay.remote_members(spec.name) if m.key not in mine]
        return members

    def _lay_policy(self, spec: NetworkSpec, whole: bool = False) -> None:
        """The network's policy chains match its attachments' policies (network lock
        held): what changed since the last call, or everything again with ``whole``.
        Free for a network where no attachment ever had one."""
        members = self._members(spec)
        if not members and spec.name not in self._policied:
            return
        self.firewall.apply_policy(spec, members, whole)
        if members:
            self._policied.add(spec.name)

    def _intact(self, vif: VIF) -> bool:
        try:
            self.driver.check(vif)
        except NetworkDriverError:
            return False
        return True

    def _wait_ready(self, vif: VIF) -> None:
        deadline = self._clock() + self.vif_active_timeout
        while not self.driver.is_ready(vif):
            if self._clock() >= deadline:
                raise VIFNotReady(key=str(vif.key), timeout=self.vif_active_timeout)
            self._sleep(self._poll)

    def _undo(self, entry: Entry, mark: bool = False) -> None:
        """Take one attachment away: veth, address, entry (network lock held)."""
        if mark and entry.state is not State.DELETING:
            self.registry.set_state(entry.key, State.DELETING)
        self.driver.detach(entry.key, entry.vif.netns)
        self._release(entry.key.network, entry.key, entry.vif.address)
        self.registry.remove(entry.key)
        spec = self.registry.network(entry.key.network)
        if entry.policy is not None and spec is not None:
            self._lay_policy(spec)   # its address may go to another container next

    def _drop_network_if_unused(self, spec: NetworkSpec) -> None:
        if self.registry.entries(spec.name):
            return
        if self.network_linger > 0:
            self._idle.setdefault(spec.name, self._clock())   # the sync pass drops it
            return
        self._drop_network(spec)

    def _drop_network(self, spec: NetworkSpec) -> None:
        self.firewall.remove_network(spec)
        if self.overlay is not None:
            self.overlay.remove(spec)
        self.driver.delete_network(spec)
        self.registry.drop_network(spec.name)
        self._allocators.pop(spec.name, None)
        self._ready.pop(spec.name, None)
        self._policied.discard(spec.name)
        self._idle.pop(spec.name, None)
        LOG.info("network %s has no attachment left: bridge %s and its rules removed",
                 spec.name, spec.bridge)


def _claims(entry: Entry | None, request: CniRequest) -> bool:
    """Whether ``request`` (an ADD or a reservation) takes up ``entry``'s reservation:
    it is one, and the request asks for its address or for none in particular."""
    return (entry is not None and entry.state is State.RESERVED
            and request.fixed_ip in (None, entry.vif.address.ip))
