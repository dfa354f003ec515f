"""Real ``berth-cni-daemon`` processes, one per "node" (a network namespace of its
own on an underlay bridge of this host), sharing one database, with
``[network]local_overlay`` on: containers (namespaces) plugged through the real
``berth-cni`` plugin on different nodes talk over TCP, containers of another network
do not, a killed daemon leaves the data path up and reconciles when started again,
and deleting every attachment leaves no VXLAN device, bridge or rule on any node.

Namespaces ``ovl-<random>-...`` (the underlay bridge in ``ovl-<random>-wire``, reached
from the host by the veth ``ovl<random>``); all removed.
"""

from __future__ import annotations

import http.client
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from support.cni_proc import ROOT, _env, run_cni
from support.migrated_sqlite import migrated_url
from support.netns_tools import Netns, tcp_probe, tcp_server
from support.ports import free_port

from berth.cni.contract import POLICY_CAPABILITY
from berth.db import networks as db_networks
from berth.db import nodes
from berth.db.engine import Database
from berth.db.overlay import OverlayStore
from berth.network.overlay.plan import device_name
from berth.network.policy import Policy

UNDERLAY = "198.18.38"


@pytest.fixture(autouse=True)
def _requires_root() -> None:
    if os.geteuid() != 0 or shutil.which("ip") is None or shutil.which("iptables") is None:
        pytest.skip("needs root, iproute2 and iptables")


def sh(*args: str, check: bool = True) -> str:
    return subprocess.run(args, check=check, capture_output=True, text=True,
                          timeout=60).stdout


@dataclass
class NodeDaemon:
    host: str
    netns: Netns
    address: str
    port: int
    workdir: Path
    db_url: str
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://{self.address}:{self.port}"

    def start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        conf = self.workdir / "berth.conf"
        conf.write_text(
            f"[DEFAULT]\nhost = {self.host}\nmy_ip = {self.address}\n"
            f"state_path = {self.workdir}\nservice_down_time = 60\n"
            f"[database]\nconnection = {self.db_url}\n"
            f"[network]\nlocal_overlay = true\nlocal_overlay_interval = 1\n"
            f"[cni_daemon]\ncni_daemon_host = {self.address}\ncni_daemon_port = {self.port}\n"
            f"registry_file = {self.workdir / 'registry.json'}\nnetwork_linger = 0\n"
            f"vif_active_timeout = 10\nsweep_orphan_veths = true\n")
        log = open(self.workdir / "daemon.log", "ab")  # noqa: SIM115 - the child keeps it
        self.proc = subprocess.Popen(
            [*self.netns.prefix(), sys.executable, "-m", "berth.cmd.cni_daemon",
             "--config-file", str(conf)], stdout=log, stderr=log, env=_env(), cwd=ROOT)
        log.close()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"daemon of {self.host} exited:\n{self.log()}")
            try:
                conn = http.client.HTTPConnection(self.address, self.port, timeout=2)
                conn.request("GET", "/healthz")
                if conn.getresponse().status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"daemon of {self.host} did not answer:\n{self.log()}")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()

    def log(self) -> str:
        try:
            return (self.workdir / "daemon.log").read_text(errors="replace")[-4000:]
        except FileNotFoundError:
            return ""


@dataclass
class Fleet:
    tag: str
    tmp: Path
    db: Database
    db_url: str
    nodes: list[NodeDaemon] = field(default_factory=list)
    made: list[str] = field(default_factory=list)

    @property
    def bridge(self) -> str:
        return f"ovl{self.tag}"

    def netns(self, suffix: str) -> Netns:
        name = f"ovl-{self.tag}-{suffix}"
        sh("ip", "netns", "add", name)
        self.made.append(name)
        sh("ip", "netns", "exec", name, "ip", "link", "set", "lo", "up")
        return Netns(name)

    def start(self, count: int) -> None:
        # The underlay bridge lives in a namespace of its own: bridged in the host's,
        # the tunnels' packets would cross the host's FORWARD chain (Docker's DROP).
        wire = self.netns("wire")
        wire.run("ip", "link", "add", "uplay", "type", "bridge")
        wire.run("ip", "link", "set", "uplay", "up")
        sh("ip", "link", "add", self.bridge, "type", "veth", "peer", "name", "host",
           "netns", wire.name)
        wire.run("ip", "link", "set", "host", "master", "uplay", "up")
        sh("ip", "addr", "add", f"{UNDERLAY}.254/24", "dev", self.bridge)
        sh("ip", "link", "set", self.bridge, "up")
        for i in range(count):
            node = self.netns(f"n{i}")
            address = f"{UNDERLAY}.{i + 1}"
            sh("ip", "link", "add", f"n{i}", "netns", wire.name, "type", "veth", "peer",
               "name", "eth0", "netns", node.name)
            wire.run("ip", "link", "set", f"n{i}", "master", "uplay", "up")
            node.run("ip", "addr", "add", f"{address}/24", "dev", "eth0")
            node.run("ip", "link", "set", "eth0", "up")
            host = f"{self.tag}-node{i}"
            nodes.report_service_up(self.db, host, nodes.COMPUTE_BINARY, None)
            daemon = NodeDaemon(host, node, address, free_port(), self.tmp / host,
                                self.db_url)
            daemon.start()
            self.nodes.append(daemon)

    def network(self, name: str, pool: str) -> dict[str, object]:
        row = db_networks.create_local(self.db, db_networks.SubnetPool(pool, 24),
                                       {"name": name, "project_id": "p"})
        spec = db_networks.spec_of(row)
        return {"cniVersion": "1.0.0", "name": spec.name, "type": "berth-cni",
                "bridge": spec.bridge, "ipam": {"subnet": str(spec.cidr),
                                                "gateway": str(spec.gateway)}}

    def plug(self, node: NodeDaemon, config: dict[str, object], label: str,
             policy: Policy | None = None) -> tuple[Netns, str]:
        ctr = self.netns(label)
        extra: dict[str, object] = {"daemonUrl": node.url}
        if policy is not None:
            extra["runtimeConfig"] = {POLICY_CAPABILITY: policy.to_dict()}
        status, result = run_cni("ADD", {**config, **extra},
                                 container_id=f"{self.tag}{label}", netns=ctr.path)
        assert status == 0, (result, node.log())
        return ctr, result["ips"][0]["address"].split("/")[0]

    def unplug(self, node: NodeDaemon, config: dict[str, object], ctr: Netns,
               label: str) -> None:
        status, result = run_cni("DEL", {**config, "daemonUrl": node.url},
                                 container_id=f"{self.tag}{label}", netns=ctr.path)
        assert status == 0, (result, node.log())

    def state(self) -> str:
        """The nodes' links, tables and logs (for a failure's message)."""
        out = []
        for node in self.nodes:
            out.append(f"--- {node.host}\n" + node.netns.run("bridge", "fdb", "show")
                       + node.netns.run("ip", "neigh", "show")
                       + node.netns.run("iptables-save", "-c") + node.log()[-1500:])
        return "\n".join(out)

    def cleanup(self) -> None:
        for node in self.nodes:
            node.stop()
        for name in reversed(self.made):
            sh("ip", "netns", "del", name, check=False)
        sh("ip", "link", "del", self.bridge, check=False)


def _row(fleet: Fleet, config: dict[str, object]):  # type: ignore[no-untyped-def]
    row = db_networks.find_by_uuid(fleet.db, str(config["name"]))
    assert row is not None
    return row


def reach(src: Netns, dst: Netns, address: str, port: int, within: float = 10.0) -> str:
    """What a TCP client in ``src`` got from a server in ``dst``: retried until the
    overlay pass (every second here) has written the peers' entries."""
    with tcp_server(dst, address, port):
        deadline = time.monotonic() + within
        while True:
            got = tcp_probe(src, address, port, timeout=1.0)
            if got == "pong:ping" or time.monotonic() > deadline:
                return got


@pytest.fixture
def fleet(tmp_path: Path) -> Iterator[Fleet]:
    url = migrated_url(tmp_path)
    db = Database(url)
    fl = Fleet(uuid.uuid4().hex[:6], tmp_path, db, url)
    try:
        yield fl
    finally:
        fl.cleanup()
        db.dispose()


def test_spanning_networks_across_daemons_and_a_restarted_daemon(fleet: Fleet) -> None:
    fleet.start(2)
    a, b = fleet.nodes
    red = fleet.network("red", "10.252.0.0/24")
    blue = fleet.network("blue", "10.252.1.0/24")
    red_a, ip_a = fleet.plug(a, red, "ra")
    red_b, ip_b = fleet.plug(b, red, "rb")
    blue_a, _ = fleet.plug(a, blue, "ba")
    assert ip_a != ip_b
    assert reach(red_a, red_b, ip_b, 7101) == "pong:ping", fleet.state()
    assert reach(red_b, red_a, ip_a, 7102) == "pong:ping"
    assert tcp_probe(blue_a, ip_b, 7103, timeout=1.0).startswith("ERR")
    mtu = red_a.run("cat", "/sys/class/net/eth0/mtu").strip()
    assert mtu == "1450"
    # The host of a node reaches a container of another node (from its own address on
    # the network, which the other node's tables lead back to it), as its own.
    assert reach(a.netns, red_b, ip_b, 7106) == "pong:ping", fleet.state()
    assert reach(b.netns, red_a, ip_a, 7107) == "pong:ping", fleet.state()
    hosts = {m.host: m.address for m in OverlayStore(fleet.db).members(
        [str(red["name"])])[str(red["name"])] if m.owner.startswith("node:")}
    assert set(hosts) == {a.host, b.host} and ip_a not in hosts.values()

    # A daemon killed: the data path stays; started again, it reconciles and plugs.
    b.kill()
    assert reach(red_a, red_b, ip_b, 7104, within=2) == "pong:ping"
    b.start()
    red_b2, ip_b2 = fleet.plug(b, red, "rb2")
    assert ip_b2 not in (ip_a, ip_b)
    assert reach(red_a, red_b2, ip_b2, 7105) == "pong:ping"

    # Every attachment deleted: nothing of either network left on any node.
    fleet.unplug(a, red, red_a, "ra")
    fleet.unplug(a, blue, blue_a, "ba")
    fleet.unplug(b, red, red_b, "rb")
    fleet.unplug(b, red, red_b2, "rb2")
    assert OverlayStore(fleet.db).taken(str(red["name"])) == set()
    for node in fleet.nodes:
        links = node.netns.run("ip", "-o", "link", "show")
        rules = node.netns.run("iptables-save")
        for config in (red, blue):
            bridge = str(config["bridge"])
            assert bridge not in links
            assert device_name(db_networks.spec_of(_row(fleet, config))) not in links
            assert bridge not in rules


@pytest.mark.skipif(os.environ.get("BERTH_FLEET_TESTS") != "1",
                    reason="opt-in with the fleet's tests (BERTH_FLEET_TESTS=1): about 15 s, "
                           "and tests/integration/overlay covers security groups through "
                           "the API")
def test_security_groups_and_exposed_ports_hold_across_nodes(fleet: Fleet) -> None:
    fleet.start(2)
    a, b = fleet.nodes
    red = fleet.network("red", "10.252.2.0/24")
    g1_a, _ = fleet.plug(a, red, "g1a", Policy.build(["g1"], []))
    g1_b, ip_g1_b = fleet.plug(b, red, "g1b", Policy.build(["g1"], []))
    g2_b, ip_g2_b = fleet.plug(b, red, "g2b", Policy.build(["g2"], []))
    web_b, ip_web_b = fleet.plug(b, red, "web", Policy.build([], ["8080/tcp"]))
    # One group on two nodes: open on every port, both ways.
    assert reach(g1_a, g1_b, ip_g1_b, 7201) == "pong:ping"
    # Another group: closed; an exposed port: open to anyone of the network.
    assert reach(g1_a, web_b, ip_web_b, 8080) == "pong:ping"
    with tcp_server(g2_b, ip_g2_b, 7202):
        assert tcp_probe(g1_a, ip_g2_b, 7202, timeout=1.0).startswith("ERR")
    with tcp_server(web_b, ip_web_b, 7203):
        assert tcp_probe(g1_a, ip_web_b, 7203, timeout=1.0).startswith("ERR")
