"""The overlay on real kernels: two (and three) "nodes", each a network namespace of
its own joined by an underlay veth or bridge, each with a network's bridge and a
"container" namespace plugged into it; ``NodeOverlay`` per node on one real database
(SQLite at the migration head) allocates the addresses network-wide and writes the
VXLAN devices' tables from it. Then TCP between containers on different nodes, none
across networks, the MTU, a node that stops reporting and comes back, and removal.

Namespaces are ``ovl-<random>-...``; everything is removed with them.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from sqlalchemy import update
from support.migrated_sqlite import migrated_url
from support.netns_tools import Netns, tcp_probe, tcp_server

from berth.db import networks as db_networks
from berth.db import nodes
from berth.db.engine import Database
from berth.db.models import ZunService
from berth.db.overlay import OverlayStore
from berth.network import netns as ns
from berth.network.base import AttachmentKey, NetworkSpec, stable_mac
from berth.network.overlay.node import Attachment, NodeOverlay
from berth.network.overlay.plan import device_name, host_mac, host_owner
from berth.network.overlay.vxlan import VxlanLinks


@pytest.fixture(autouse=True)
def _requires_root() -> None:
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("needs root and iproute2 (network namespaces, VXLAN)")


def sh(*args: str) -> str:
    return subprocess.run(args, check=True, capture_output=True, text=True,
                          timeout=30).stdout


@dataclass
class Node:
    name: str
    netns: Netns
    tunnel_ip: str
    overlay: NodeOverlay
    #: What its registry would hold: network -> owner -> (address, MAC).
    attachments: dict[str, dict[str, Attachment]] = field(
        default_factory=dict)

    def reconcile(self, specs: list[NetworkSpec]) -> int:
        return sum(self.overlay.reconcile(spec, self.attachments.get(spec.name, {}))
                   for spec in specs)


@dataclass
class Fabric:
    """Nodes on an underlay, and the namespaces made (removed at the end)."""

    tag: str
    db: Database
    store: OverlayStore
    nodes: list[Node] = field(default_factory=list)
    made: list[str] = field(default_factory=list)

    def netns(self, suffix: str) -> Netns:
        name = f"ovl-{self.tag}-{suffix}"
        sh("ip", "netns", "add", name)
        self.made.append(name)
        sh("ip", "netns", "exec", name, "ip", "link", "set", "lo", "up")
        return Netns(name)

    def add_nodes(self, count: int) -> None:
        """``count`` nodes on an underlay bridge in a namespace of its own."""
        wire = self.netns("wire")
        wire.run("ip", "link", "add", "uplay", "type", "bridge")
        wire.run("ip", "link", "set", "uplay", "up")
        for i in range(count):
            node = self.netns(f"n{i}")
            tunnel_ip = f"192.0.2.{i + 1}"
            sh("ip", "link", "add", "eth0", "netns", node.name, "type", "veth", "peer",
               "name", f"up{i}", "netns", wire.name)
            wire.run("ip", "link", "set", f"up{i}", "master", "uplay", "up")
            node.run("ip", "addr", "add", f"{tunnel_ip}/24", "dev", "eth0")
            node.run("ip", "link", "set", "eth0", "up")
            host = f"{self.tag}-node{i}"
            nodes.report_service_up(self.db, host, nodes.COMPUTE_BINARY, None)
            links = VxlanLinks(open_ipr=lambda path=node.path: ns.iproute_in(path))
            overlay = NodeOverlay(self.store, host, tunnel_ip, links,
                                  mtu=_underlay_mtu(node) - 50)
            self.nodes.append(Node(host, node, tunnel_ip, overlay))

    def network(self, name: str, cidr: str) -> NetworkSpec:
        row = db_networks.create_local(self.db, db_networks.SubnetPool(cidr, 24),
                                       {"name": name, "project_id": "p"})
        spec = db_networks.spec_of(row)
        return self.nodes[0].overlay.fit(spec)

    def lay(self, node: Node, spec: NetworkSpec) -> None:
        """What the bridge driver does on a node, with ``ip``; then the overlay."""
        node.netns.run("ip", "link", "add", spec.bridge, "mtu", str(spec.mtu), "type",
                       "bridge")
        node.netns.run("ip", "addr", "add", f"{spec.gateway}/{spec.cidr.prefixlen}", "dev",
                       spec.bridge)
        node.netns.run("ip", "link", "set", spec.bridge, "up")
        node.overlay.ensure(spec)

    def container(self, node: Node, spec: NetworkSpec, label: str,
                  owner: str | None = None) -> tuple[Netns, str]:
        """A namespace plugged into ``spec``'s bridge on ``node``, with an address the
        node's overlay allocated; (namespace, address). ``owner``: the container's
        label when it is another namespace of the same container (moved)."""
        ctr = self.netns(label)
        key = AttachmentKey(spec.name, f"{self.tag}{owner or label}", "eth0")
        mac = stable_mac(key)
        address = node.overlay.allocate(spec, str(key), mac, None)
        node.attachments.setdefault(spec.name, {})[str(key)] = (address.ip, mac, None)
        host_end = key.host_ifname
        sh("ip", "link", "add", host_end, "netns", node.netns.name, "mtu", str(spec.mtu),
           "type", "veth", "peer", "name", "eth0", "netns", ctr.name, "address", mac,
           "mtu", str(spec.mtu))
        node.netns.run("ip", "link", "set", host_end, "master", spec.bridge, "up")
        ctr.run("ip", "addr", "add", str(address), "dev", "eth0")
        ctr.run("ip", "link", "set", "eth0", "up")
        return ctr, str(address.ip)

    def reconcile_all(self, specs: list[NetworkSpec]) -> None:
        for node in self.nodes:
            node.reconcile(specs)

    def cleanup(self) -> None:
        for name in reversed(self.made):
            subprocess.run(["ip", "netns", "del", name], check=False, capture_output=True)


def _underlay_mtu(node: Netns) -> int:
    return int(node.run("cat", "/sys/class/net/eth0/mtu").strip())


@pytest.fixture
def fabric(tmp_path: Path) -> Iterator[Fabric]:
    db = Database(migrated_url(tmp_path))
    fab = Fabric(uuid.uuid4().hex[:6], db, OverlayStore(db, service_down_time=60))
    try:
        yield fab
    finally:
        fab.cleanup()
        db.dispose()


def test_containers_of_one_network_talk_across_nodes_and_not_across_networks(
        fabric: Fabric) -> None:
    fabric.add_nodes(2)
    a, b = fabric.nodes
    red = fabric.network("red", "10.251.0.0/24")
    blue = fabric.network("blue", "10.251.1.0/24")
    for node in (a, b):
        fabric.lay(node, red)
    fabric.lay(b, blue)
    red_a, ip_red_a = fabric.container(a, red, "ra")
    red_b, ip_red_b = fabric.container(b, red, "rb")
    blue_b, _ = fabric.container(b, blue, "bb")
    assert ip_red_a != ip_red_b              # one allocation across the two nodes
    fabric.reconcile_all([red])
    b.reconcile([blue])

    with tcp_server(red_b, ip_red_b, 7001):
        assert tcp_probe(red_a, ip_red_b, 7001) == "pong:ping"
        # Another network's container on the same node as the server cannot reach it.
        assert tcp_probe(blue_b, ip_red_b, 7001, timeout=1.0).startswith("ERR")
    with tcp_server(red_a, ip_red_a, 7002):
        assert tcp_probe(red_b, ip_red_a, 7002) == "pong:ping"

    # The devices: VNI from the network's row, no learning, the tables from the DB.
    details = a.netns.run("ip", "-d", "link", "show", device_name(red))
    vni = fabric.store.vni(red.name)
    assert f"vxlan id {vni} " in details and "nolearning" in details and "proxy" in details
    fdb = a.netns.run("bridge", "fdb", "show", "dev", device_name(red))
    assert f"dst {b.tunnel_ip}" in fdb and "00:00:00:00:00:00" not in fdb  # no flooding


def test_a_node_s_host_reaches_the_containers_of_another_node(fabric: Fabric) -> None:
    fabric.add_nodes(2)
    a, b = fabric.nodes
    red = fabric.network("red", "10.251.7.0/24")
    for node in (a, b):
        fabric.lay(node, red)
    red_b, ip_b = fabric.container(b, red, "rb")
    fabric.reconcile_all([red])
    with tcp_server(red_b, ip_b, 7008):
        assert tcp_probe(a.netns, ip_b, 7008) == "pong:ping"
    # From the node's own address (not the gateway's, which b's bridge holds too),
    # on a bridge whose MAC is its own; laid once, then left alone.
    own = {m.host: m.address for m in fabric.store.members([red.name])[red.name]
           if m.owner == host_owner(m.host)}
    assert set(own) == {a.name, b.name} and own[a.name] != own[b.name]
    route = a.netns.run("ip", "-4", "route", "show", str(red.cidr))
    assert f"src {own[a.name]}" in route
    link = a.netns.run("ip", "link", "show", red.bridge)
    assert host_mac(red.name, a.name) in link
    assert not a.overlay.links.set_host_address(red, own[a.name], host_mac(red.name, a.name))
    assert a.reconcile([red]) == 0


def test_the_mtu_leaves_room_for_vxlan_and_full_frames_cross_whole(fabric: Fabric) -> None:
    fabric.add_nodes(2)
    a, b = fabric.nodes
    red = fabric.network("red", "10.251.2.0/24")
    assert red.mtu == 1450
    for node in (a, b):
        fabric.lay(node, red)
    red_a, _ = fabric.container(a, red, "ra")
    red_b, ip_b = fabric.container(b, red, "rb")
    fabric.reconcile_all([red])
    # A datagram filling the interface's MTU with "don't fragment" set crosses; the
    # underlay's interfaces would refuse it (EMSGSIZE) were the overlay's MTU wrong.
    payload = red.mtu - 28
    receiver = subprocess.Popen(
        [*red_b.prefix(), sys.executable, "-c", _UDP_RECEIVER, ip_b], stdout=subprocess.PIPE,
        text=True)
    try:
        assert receiver.stdout is not None and receiver.stdout.readline().strip() == "ready"
        red_a.run(sys.executable, "-c", _UDP_SENDER, ip_b, str(payload))
        assert receiver.stdout.readline().strip() == str(payload)
    finally:
        receiver.kill()
        receiver.wait(timeout=10)
    assert a.netns.run("cat", f"/sys/class/net/{device_name(red)}/mtu").strip() == "1450"


def test_a_node_that_stops_reporting_is_withdrawn_and_restored_when_back(
        fabric: Fabric) -> None:
    fabric.add_nodes(3)
    a, b, c = fabric.nodes
    red = fabric.network("red", "10.251.3.0/24")
    for node in fabric.nodes:
        fabric.lay(node, red)
    ctrs = [fabric.container(node, red, f"r{i}") for i, node in enumerate(fabric.nodes)]
    fabric.reconcile_all([red])
    (ns_a, _), (ns_b, _), (ns_c, ip_c) = ctrs
    with tcp_server(ns_c, ip_c, 7003):
        assert tcp_probe(ns_a, ip_c, 7003) == "pong:ping"
        assert tcp_probe(ns_b, ip_c, 7003) == "pong:ping"

    long_ago = dt.datetime.now(dt.UTC).replace(tzinfo=None) - dt.timedelta(seconds=61)
    with fabric.db.writer() as s:
        s.execute(update(ZunService).where(ZunService.host == c.name)
                  .values(last_seen_up=long_ago))
    fabric.reconcile_all([red])
    fdb_a = a.netns.run("bridge", "fdb", "show", "dev", device_name(red))
    assert c.tunnel_ip not in fdb_a and b.tunnel_ip in fdb_a
    assert ip_c not in a.netns.run("ip", "neigh", "show", "dev", device_name(red))

    nodes.report_service_up(fabric.db, c.name, nodes.COMPUTE_BINARY, None)
    fabric.reconcile_all([red])
    with tcp_server(ns_c, ip_c, 7004):
        assert tcp_probe(ns_a, ip_c, 7004) == "pong:ping"


def test_released_addresses_leave_the_tables_and_removal_leaves_no_device(
        fabric: Fabric) -> None:
    fabric.add_nodes(2)
    a, b = fabric.nodes
    red = fabric.network("red", "10.251.4.0/24")
    for node in (a, b):
        fabric.lay(node, red)
    _ctr, ip_b = fabric.container(b, red, "rb")
    fabric.reconcile_all([red])
    assert ip_b in a.netns.run("ip", "neigh", "show", "dev", device_name(red))
    owner = str(AttachmentKey(red.name, f"{fabric.tag}rb", "eth0"))
    b.overlay.release(red, owner)
    del b.attachments[red.name][owner]
    fabric.reconcile_all([red])
    assert ip_b not in a.netns.run("ip", "neigh", "show", "dev", device_name(red))
    fdb = a.netns.run("bridge", "fdb", "show", "dev", device_name(red))
    assert stable_mac(AttachmentKey(red.name, f"{fabric.tag}rb", "eth0")) not in fdb
    # What stays is b's own address (its host's), until b removes the network.
    assert fdb.count("dst") == 1 and host_mac(red.name, b.name) in fdb
    for node in (a, b):
        node.overlay.remove(red)
        assert device_name(red) not in node.netns.run("ip", "-o", "link", "show")
    assert fabric.store.taken(red.name) == set()


def test_a_restarted_node_reclaims_and_releases_from_its_attachments(fabric: Fabric) -> None:
    fabric.add_nodes(2)
    a, b = fabric.nodes
    red = fabric.network("red", "10.251.5.0/24")
    for node in (a, b):
        fabric.lay(node, red)
    ns_b, ip_b = fabric.container(b, red, "rb")
    kept = str(AttachmentKey(red.name, f"{fabric.tag}rb", "eth0"))
    _gone_ns, gone_ip = fabric.container(b, red, "gone")
    # The database lost b's claim of the container that still runs (restored from a
    # backup, say), and still holds the claim of one whose attachment is gone.
    b.overlay.release(red, kept)
    gone = str(AttachmentKey(red.name, f"{fabric.tag}gone", "eth0"))
    del b.attachments[red.name][gone]
    assert b.reconcile([red]) >= 2
    assert fabric.store.owners_on(b.name) == {red.name: {kept, host_owner(b.name)}}
    hosts = {m.address for m in fabric.store.members([red.name])[red.name]
             if m.owner.startswith("node:")}
    assert fabric.store.taken(red.name) - hosts == {ipaddress.IPv4Address(ip_b)}
    assert ipaddress.IPv4Address(gone_ip) not in fabric.store.taken(red.name)
    ns_a, _ = fabric.container(a, red, "ra")
    fabric.reconcile_all([red])
    with tcp_server(ns_b, ip_b, 7005):
        assert tcp_probe(ns_a, ip_b, 7005) == "pong:ping"


def test_an_evacuated_container_keeps_its_address_and_is_reached_on_its_new_node(
        fabric: Fabric) -> None:
    fabric.add_nodes(3)
    a, b, c = fabric.nodes
    red = fabric.network("red", "10.251.6.0/24")
    for node in fabric.nodes:
        fabric.lay(node, red)
    ns_a, _ = fabric.container(a, red, "ra")
    _old, ip_old = fabric.container(c, red, "rc")
    fabric.reconcile_all([red])
    # c stops reporting; its container is made again on b (evacuation): same owner.
    long_ago = dt.datetime.now(dt.UTC).replace(tzinfo=None) - dt.timedelta(seconds=61)
    with fabric.db.writer() as s:
        s.execute(update(ZunService).where(ZunService.host == c.name)
                  .values(last_seen_up=long_ago))
    ns_new, ip_new = fabric.container(b, red, "rc-moved", owner="rc")
    assert ip_new == ip_old
    for node in (a, b):
        node.reconcile([red])
    with tcp_server(ns_new, ip_new, 7006):
        assert tcp_probe(ns_a, ip_new, 7006) == "pong:ping"
    # c comes back with the stale attachment still in its registry: it neither claims
    # the address back nor releases b's claim, and a still reaches the container on b.
    nodes.report_service_up(fabric.db, c.name, nodes.COMPUTE_BINARY, None)
    fabric.reconcile_all([red])
    owner = str(AttachmentKey(red.name, f"{fabric.tag}rc", "eth0"))
    held = fabric.store.held(red.name, owner)
    assert held is not None and held.host == b.name
    assert not c.overlay.allocator.release(red, owner)
    with tcp_server(ns_new, ip_new, 7007):
        assert tcp_probe(ns_a, ip_new, 7007) == "pong:ping"


_UDP_RECEIVER = """
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 7009))
s.settimeout(10)
print("ready", flush=True)
data, _ = s.recvfrom(65535)
print(len(data), flush=True)
"""

_UDP_SENDER = """
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, 10, 2)     # IP_MTU_DISCOVER = IP_PMTUDISC_DO
s.sendto(b"x" * int(sys.argv[2]), (sys.argv[1], 7009))
"""
