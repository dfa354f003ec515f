"""A Neutron port plugged again into a new namespace (its container's process
restarted: the old namespace and veth went, the OVS port stayed), through the CNI
daemon's own plug code against the real Neutron and Open vSwitch's userspace datapath.

Before the fix the second plug put a new veth behind the kept OVS port: ovs-vswitchd
kept reading the first veth's socket, Neutron kept the port ACTIVE, the plug returned
at once, and TCP to the namespace was dead for as long as anyone waited (the symptom
of the clean-clone runs). Now the OVS port is replaced and the plug waits for the OVS
agent to bind the new one before it waits for ACTIVE."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid as uuidlib
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from integration.network.conftest import NEUTRON_HOST, PROJECT, Networks

from berth.network.neutron.ovs import NeutronVIF, OvsPlugger, tap_name
from berth.network.neutron.status import PortStatusPoller
from berth.network.neutron.vifs import NeutronVifService

pytestmark = pytest.mark.integration

SERVER = ("import socket\n"
          "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
          "s.bind(('0.0.0.0', 8080)); s.listen(16)\n"
          "while True:\n"
          "    c, _ = s.accept(); c.sendall(b'ok'); c.close()\n")


def ip_netns(*args: str) -> None:
    subprocess.run(["ip", "netns", *args], check=True, capture_output=True)


def tcp_ok(netns: str, address: str, within: float) -> bool:
    probe = (f"import socket; s = socket.create_connection(('{address}', 8080), timeout=1); "
             f"print(s.recv(2).decode())")
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        out = subprocess.run(["ip", "netns", "exec", netns, sys.executable, "-c", probe],
                             check=False, capture_output=True, text=True).stdout
        if "ok" in out:
            return True
        time.sleep(0.5)
    return False


@pytest.fixture
def namespaces() -> Iterator[dict[str, str]]:
    names = {n: f"it-replug-{n}-{uuidlib.uuid4().hex[:6]}" for n in ("a", "b")}
    for name in names.values():
        ip_netns("add", name)
    yield names
    for name in names.values():
        subprocess.run(["ip", "netns", "del", name], check=False, capture_output=True)


def test_a_port_plugged_again_into_a_new_namespace_carries_tcp(
        neutron_raw: httpx.Client, networks: Networks, namespaces: dict[str, str]) -> None:
    net = networks.make("10.231.7.0/24")
    ports: dict[str, dict[str, Any]] = {}
    for n in ("a", "b"):
        made = neutron_raw.post("/ports", json={"port": {
            "network_id": net["id"], "binding:host_id": NEUTRON_HOST, "project_id": PROJECT,
            "device_owner": "compute:berth-it", "device_id": f"replug-{n}"}})
        assert made.status_code == 201, made.text
        ports[n] = made.json()["port"]

    def statuses() -> dict[str, str]:
        listed = neutron_raw.get("/ports", params={"binding:host_id": NEUTRON_HOST})
        return {p["id"]: p["status"] for p in listed.json()["ports"]}

    def vif(n: str) -> NeutronVIF:
        port = ports[n]
        return NeutronVIF(container_id=f"replug-{n}", ifname="eth0",
                          netns=f"/var/run/netns/{namespaces[n]}", port_id=port["id"],
                          mac=port["mac_address"], gateways=(),
                          addresses=(f"{port['fixed_ips'][0]['ip_address']}/24",))

    plugger = OvsPlugger()
    poller = PortStatusPoller(statuses, interval=1.0)
    service = NeutronVifService(plugger, poller, vif_active_timeout=90)
    server = None
    try:
        for n in ("a", "b"):
            service.add(vif(n))
        server = subprocess.Popen(["ip", "netns", "exec", namespaces["a"], sys.executable,
                                   "-c", SERVER])
        address = ports["a"]["fixed_ips"][0]["ip_address"]
        assert tcp_ok(namespaces["b"], address, 60)

        # b's process restarts: a new namespace; the OVS port stays until a sync
        ip_netns("del", namespaces["b"])
        ip_netns("add", namespaces["b"])
        tap = tap_name(ports["b"]["id"])
        assert subprocess.run(["ovs-vsctl", "--if-exists", "get", "Port", tap, "name"],
                              check=True, capture_output=True, text=True).stdout.strip()
        service.add(vif("b"))
        assert tcp_ok(namespaces["b"], address, 30), \
            "TCP dead after a re-plug: the new veth sits behind a kept OVS port"
    finally:
        poller.stop()
        if server is not None:
            server.kill()
            server.wait()
        for n in ("a", "b"):
            if n in ports:
                plugger.unplug(ports[n]["id"])
