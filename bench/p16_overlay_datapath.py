"""P16: the datapath of a local network that spans nodes (``[network]local_overlay``):
TCP connect latency and throughput between two containers on two nodes (through the
VXLAN devices) against two on one node (through one bridge), as ratios.

Two "nodes" are network namespaces on an underlay bridge of their own namespace, each
with the network's bridge and ``NodeOverlay`` writing its VXLAN tables from a SQLite
database at the migration head (what the CNI daemon does); the "containers" are
namespaces with a veth on the bridge. No Docker: the figure is the kernel's path.
Needs root. Namespaces ``ovl-bench-*``, addresses 10.253.0.0/24; all removed.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

from bench.common import Result, ratio

SERVER = r"""
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 7300)); s.listen(128); print("ready", flush=True)
while True:
    c, _ = s.accept()
    if c.recv(1) == b"T":
        while c.recv(1 << 20):
            pass
    c.close()
"""

CLIENT = r"""
import socket, sys, time
host, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
lat = []
for _ in range(n):
    t0 = time.perf_counter(); c = socket.create_connection((host, 7300)); lat.append(time.perf_counter() - t0)
    c.sendall(b"L"); c.close()
lat.sort()
c = socket.create_connection((host, 7300)); c.sendall(b"T")
chunk = b"x" * (1 << 20); t0 = time.perf_counter()
for _ in range(size):
    c.sendall(chunk)
c.shutdown(socket.SHUT_WR); c.recv(1); elapsed = time.perf_counter() - t0
print(lat[len(lat) // 2] * 1e6, size / elapsed)
"""


def _sh(*args: str) -> str:
    return subprocess.run(args, check=True, capture_output=True, text=True, timeout=180).stdout


def p16(connects: int = 300, mebibytes: int = 64) -> Result:
    from berth.db import migrate, nodes
    from berth.db import networks as db_networks
    from berth.db.engine import Database
    from berth.db.overlay import OverlayStore
    from berth.network import netns as ns
    from berth.network.base import AttachmentKey, stable_mac
    from berth.network.overlay.node import NodeOverlay
    from berth.network.overlay.vxlan import VxlanLinks

    tag = uuid.uuid4().hex[:4]
    made: list[str] = []

    def netns(name: str) -> str:
        full = f"ovl-bench-{tag}-{name}"
        _sh("ip", "netns", "add", full)
        made.append(full)
        _sh("ip", "netns", "exec", full, "ip", "link", "set", "lo", "up")
        return full

    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'bench.sqlite'}"
        migrate.upgrade(url)
        db = Database(url)
        try:
            wire = netns("wire")
            _sh("ip", "netns", "exec", wire, "ip", "link", "add", "ul", "type", "bridge")
            _sh("ip", "netns", "exec", wire, "ip", "link", "set", "ul", "up")
            store = OverlayStore(db)
            row = db_networks.create_local(db, db_networks.SubnetPool("10.253.0.0/24", 24),
                                           {"name": "bench"})
            overlays = []
            for i in range(2):
                node = netns(f"n{i}")
                _sh("ip", "link", "add", "eth0", "netns", node, "type", "veth", "peer", "name",
                    f"p{i}", "netns", wire)
                _sh("ip", "netns", "exec", wire, "ip", "link", "set", f"p{i}", "master", "ul",
                    "up")
                _sh("ip", "netns", "exec", node, "ip", "addr", "add", f"192.0.2.{i + 1}/24",
                    "dev", "eth0")
                _sh("ip", "netns", "exec", node, "ip", "link", "set", "eth0", "up")
                nodes.report_service_up(db, f"bench{i}", nodes.COMPUTE_BINARY, None)
                overlay = NodeOverlay(store, f"bench{i}", f"192.0.2.{i + 1}", VxlanLinks(
                    open_ipr=lambda path=f"/var/run/netns/{node}": ns.iproute_in(path)), mtu=1450)
                spec = overlay.fit(db_networks.spec_of(row))
                _sh("ip", "netns", "exec", node, "ip", "link", "add", spec.bridge, "mtu", "1450",
                    "type", "bridge")
                _sh("ip", "netns", "exec", node, "ip", "addr", "add",
                    f"{spec.gateway}/24", "dev", spec.bridge)
                _sh("ip", "netns", "exec", node, "ip", "link", "set", spec.bridge, "up")
                overlay.ensure(spec)
                overlays.append((node, overlay, spec))
            ctrs = {}
            held: list[dict[str, tuple]] = [{}, {}]   # per node: owner -> (address, MAC, policy)
            for label, index in (("client", 0), ("near", 0), ("far", 1)):
                node, overlay, spec = overlays[index]
                ctr = netns(label)
                key = AttachmentKey(spec.name, f"bench{tag}{label}", "eth0")
                address = overlay.allocate(spec, str(key), stable_mac(key), None)
                held[index][str(key)] = (address.ip, stable_mac(key), None)
                _sh("ip", "link", "add", key.host_ifname, "netns", node, "mtu", "1450", "type",
                    "veth", "peer", "name", "eth0", "netns", ctr, "address", stable_mac(key),
                    "mtu", "1450")
                _sh("ip", "netns", "exec", node, "ip", "link", "set", key.host_ifname,
                    "master", spec.bridge, "up")
                _sh("ip", "netns", "exec", ctr, "ip", "addr", "add", str(address), "dev", "eth0")
                _sh("ip", "netns", "exec", ctr, "ip", "link", "set", "eth0", "up")
                ctrs[label] = (ctr, str(address.ip))
            for (_node, overlay, spec), attachments in zip(overlays, held, strict=True):
                overlay.reconcile(spec, attachments)
            figures = {}
            for label in ("near", "far"):
                ctr, address = ctrs[label]
                server = subprocess.Popen(["ip", "netns", "exec", ctr, sys.executable, "-c",
                                           SERVER, address], stdout=subprocess.PIPE, text=True)
                try:
                    assert server.stdout is not None and server.stdout.readline().strip() == "ready"
                    out = _sh("ip", "netns", "exec", ctrs["client"][0], sys.executable, "-c",
                              CLIENT, address, str(connects), str(mebibytes))
                    latency, throughput = (float(v) for v in out.split())
                    figures[label] = {"connect_us": latency, "MiB_per_s": throughput}
                finally:
                    server.kill()
                    server.wait(timeout=10)
        finally:
            for name in reversed(made):
                subprocess.run(["ip", "netns", "del", name], check=False, capture_output=True)
            db.dispose()
    far, near = figures["far"], figures["near"]
    return Result(
        "P16", "TCP connect, two nodes over VXLAN vs one node (median)",
        far["connect_us"], near["connect_us"], "us", "measured (no goal)", None,
        ratio=ratio(far["connect_us"], near["connect_us"]),
        detail={"cross_node": far, "same_node": near,
                "throughput_ratio": ratio(far["MiB_per_s"], near["MiB_per_s"]),
                "connects": connects, "mebibytes": mebibytes})
