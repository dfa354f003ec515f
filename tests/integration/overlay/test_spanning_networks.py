"""Local networks that span nodes, through berth's API on a fleet of namespaced nodes
(see conftest): TCP between containers of one network on two nodes, none from another
network, a node's CNI daemon killed and restarted, and a deleted network leaving no
device or rule on any node."""

from __future__ import annotations

import subprocess
import time
from typing import Any

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
