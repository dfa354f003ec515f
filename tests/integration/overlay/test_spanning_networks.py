"""Local networks that span nodes, through berth's API on a fleet of namespaced nodes
(see conftest): TCP between containers of one network on two nodes, none from another
network, exposed ports from the hosts of every node, a node's CNI daemon killed and restarted, and a deleted network leaving no
device or rule on any node."""

from __future__ import annotations

import subprocess
import time
from typing import Any

import pytest
from support.netns_tools import Netns, tcp_probe

from .conftest import FLEET_SCRIPT, Fleet, address, node_run

SERVER = "while true; do nc -l -p 7000 -e echo pong; done"
IDLE = "sleep 3600"


def connect(fleet: Fleet, client: dict[str, Any], server: str) -> str:
    """What the container ``client`` got from port 7000 of ``server`` (address)."""
    _code, output = fleet.execute(client["uuid"], f"nc -w 3 {server} 7000")
    return output.strip()


def test_one_network_spans_two_nodes_and_another_stays_apart(fleet: Fleet) -> None:
    first, second = fleet.hosts[:2]
    red, blue = fleet.network("red"), fleet.network("blue")
    made = []
    try:
        server = fleet.container("srv", first, red["uuid"], SERVER)
        made.append(server)
        client = fleet.container("cli", second, red["uuid"], IDLE)
        made.append(client)
        other = fleet.container("other", second, blue["uuid"], IDLE)
        made.append(other)
        assert address(server) != address(client)
        assert connect(fleet, client, address(server)) == "pong"
        assert connect(fleet, other, address(server)) != "pong"
        assert fleet.execute(client["uuid"], "cat /sys/class/net/eth0/mtu")[1].strip() == "1450"

        # The second node's CNI daemon killed and started again: the data path stays,
        # and a container made after it reaches the first node.
        subprocess.run(["bash", str(FLEET_SCRIPT), "restart-cni", second], check=True,
                       capture_output=True, timeout=120)
        assert connect(fleet, client, address(server)) == "pong"
        late = fleet.container("late", second, red["uuid"], IDLE)
        made.append(late)
        assert connect(fleet, late, address(server)) == "pong"
    finally:
        for row in made:
            fleet.delete(row["uuid"])
    for net in (red, blue):
        assert fleet.http.delete(f"/networks/{net['uuid']}").status_code == 204
    # The nodes' overlay passes (every second in the fleet) remove what a deleted
    # network kept for network_linger.
    bridges = [fleet_bridge(fleet, net) for net in (red, blue)]
    names = bridges + ["bvx" + b[3:] for b in bridges]
    deadline = time.monotonic() + 15
    while True:
        left = {host: [n for n in names if n in node_run(host, "ip", "-o", "link", "show")
                       or n in node_run(host, "iptables-save")] for host in fleet.hosts}
        if not any(left.values()) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert not any(left.values()), left


def fleet_bridge(fleet: Fleet, net: dict[str, Any]) -> str:
    """The bridge name berth derives for the network (``berth.db.networks.spec_of``)."""
    from berth.network.base import NetworkSpec

    return NetworkSpec.build(net["uuid"], net["subnet"]).bridge


def test_three_nodes_security_groups_and_exposed_ports(fleet: Fleet) -> None:
    if len(fleet.hosts) < 3:
        pytest.skip("needs a fleet of three nodes (BERTH_FLEET_NODES=3)")
    first, second, third = fleet.hosts[:3]
    net = fleet.network("sg")
    made = []
    try:
        # One group on all three nodes; another group and an exposed port on the third.
        srv = fleet.container("g-srv", first, net["uuid"], SERVER, security_groups=["g1"])
        made.append(srv)
        mates = [fleet.container(f"g-{h}", h, net["uuid"], IDLE, security_groups=["g1"])
                 for h in (second, third)]
        made += mates
        stranger = fleet.container("g2", third, net["uuid"], IDLE, security_groups=["g2"])
        made.append(stranger)
        web = fleet.container("web", third, net["uuid"], SERVER, exposed_ports={"7000/tcp": {}})
        made.append(web)
        for mate in mates:
            assert connect(fleet, mate, address(srv)) == "pong"
        assert connect(fleet, stranger, address(srv)) != "pong"
        # An exposed port: open to the network's other containers, on any node, and to
        # the host of any node where the network is laid; nothing else of the
        # container is.
        assert connect(fleet, stranger, address(web)) == "pong"
        assert connect(fleet, mates[0], address(web)) == "pong"
        for host in (third, first):
            node = Netns(f"berth-{host}")
            assert tcp_probe(node, address(web), 7000) == "pong", host
            # Dropped by the container's chain (a timeout), not refused by its kernel.
            assert "timed out" in tcp_probe(node, address(web), 7001, timeout=1.0), host
    finally:
        for row in made:
            fleet.delete(row["uuid"])
        fleet.http.delete(f"/networks/{net['uuid']}")


def test_an_evacuated_container_keeps_its_address_across_nodes(fleet: Fleet) -> None:
    if len(fleet.hosts) < 3:
        pytest.skip("needs a fleet of three nodes (BERTH_FLEET_NODES=3)")
    first, _second, third = fleet.hosts[:3]
    net = fleet.network("evac")
    made = []
    try:
        moving = fleet.container("moving", third, net["uuid"], SERVER)
        made.append(moving)
        client = fleet.container("client", first, net["uuid"], IDLE)
        made.append(client)
        assert connect(fleet, client, address(moving)) == "pong"
        # The third node forced down: the fleet's API (evacuate_on_host_down) recreates
        # the container on another node, where it keeps its address.
        force_down(fleet, third, True)
        deadline = time.monotonic() + 120
        while True:
            row = fleet.http.get(f"/containers/{moving['uuid']}").json()
            if row["host"] != third and row["status"] == "Running":
                break
            assert time.monotonic() < deadline, row
            time.sleep(1)
        assert address(row) == address(moving)
        assert _until_pong(fleet, client, address(row))
    finally:
        force_down(fleet, third, False)
        for made_row in made:
            fleet.delete(made_row["uuid"])
        fleet.http.delete(f"/networks/{net['uuid']}")


def force_down(fleet: Fleet, host: str, down: bool) -> None:
    got = fleet.http.put("/services/force_down", json={
        "host": host, "binary": "zun-compute", "forced_down": down})
    assert got.status_code == 200, got.text


def _until_pong(fleet: Fleet, client: dict[str, Any], server: str, within: float = 15) -> bool:
    """Whether the client gets its answer within ``within`` s (the nodes' overlay
    passes, every second in the fleet, follow a moved container)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if connect(fleet, client, server) == "pong":
            return True
        time.sleep(1)
    return False
