"""Dual-stack local networks through the API of a real ``berth serve`` whose
``[network]local_subnet_pool_v6`` is set (real Docker, bridges, veths, ip6tables):
each network gets an IPv6 /64, each container the twin of its IPv4 address; two
containers of one network talk over IPv6 (TCP), a container of another network
cannot reach them, the host reaches an exposed port over IPv6, ``addresses`` and
``network_list`` show both versions, a ``v6-fixed-ip`` asks for its IPv4 twin (and a
mismatched pair is a 400 that makes nothing), and a delete leaves no IPv6 address.
"""

from __future__ import annotations

import ipaddress
import subprocess
import uuid as uuidlib
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from support.berth_proc import TEST_IMAGE, BerthProcess
from support.local_net import HTTPD, SLEEP, Net, fetch, link_exists


@pytest.fixture(scope="module")
def pool6() -> str:
    return f"fd00:b47:{uuidlib.uuid4().hex[:4]}::/48"


@pytest.fixture
def net(berth_factory: Callable[..., BerthProcess], pool6: str) -> Iterator[Net]:
    proc = berth_factory(f"local_subnet_pool_v6 = {pool6}\n").start()
    made = Net(proc)
    yield made
    made.cleanup()


def v6_of(container: dict[str, Any], network: str) -> str:
    found = [a["addr"] for a in container["addresses"][network] if a["version"] == 6]
    assert len(found) == 1, container["addresses"]
    return str(found[0])


def test_containers_talk_over_ipv6_and_another_network_cannot_reach_them(
        net: Net, pool6: str) -> None:
    a, b = net.network(), net.network()
    assert ipaddress.IPv6Network(a["subnet_v6"]).subnet_of(ipaddress.IPv6Network(pool6))
    assert a["gateway_v6"] == str(ipaddress.IPv6Network(a["subnet_v6"]).network_address + 1)
    server = net.create(HTTPD, nets=[{"network": a["name"]}], exposed_ports={"8080/tcp": {}})
    client = net.create(SLEEP, nets=[{"network": a["uuid"]}])
    stranger = net.create(SLEEP, nets=[{"network": b["name"]}])
    v4 = next(x["addr"] for x in server["addresses"][a["uuid"]] if x["version"] == 4)
    v6 = v6_of(server, a["uuid"])
    offset = int(ipaddress.IPv4Address(v4)) - int(ipaddress.IPv4Network(a["subnet"])
                                                   .network_address)
    assert ipaddress.IPv6Address(v6) == \
        ipaddress.IPv6Network(a["subnet_v6"]).network_address + offset
    code, out = net.exec(server["uuid"], "ip -6 route")
    assert code == 0 and f"default via {a['gateway_v6']}" in out, out
    code, out = fetch(net, client["uuid"], v6)
    assert code == 0 and out.strip().endswith("hello-from-berth"), out
    code, out = fetch(net, stranger["uuid"], v6, timeout=2)
    assert code != 0 and "hello-from-berth" not in out
    assert httpx.get(f"http://[{v6}]:8080/index.html", timeout=5).text.strip() == \
        "hello-from-berth"
    listed = net.http.get(f"/v1/containers/{server['uuid']}/network_list").json()
    assert [sorted(ip["version"] for ip in n["fixed_ips"]) for n in listed["networks"]] == \
        [[4, 6]]


def test_a_v6_fixed_ip_asks_for_its_ipv4_twin_and_a_delete_leaves_no_ipv6_address(
        net: Net) -> None:
    a = net.network()
    subnet, subnet6 = ipaddress.IPv4Network(a["subnet"]), ipaddress.IPv6Network(a["subnet_v6"])
    wanted = subnet6.network_address + 77
    c = net.create(SLEEP, nets=[{"network": a["name"], "v6-fixed-ip": str(wanted)}])
    assert v6_of(c, a["uuid"]) == str(wanted)
    assert {x["addr"] for x in c["addresses"][a["uuid"]]} == \
        {str(subnet.network_address + 77), str(wanted)}
    before = net.http.get("/v1/containers").json()["containers"]
    bad = net.http.post("/v1/containers", params={"run": "true"}, json={
        "image": TEST_IMAGE, "command": SLEEP, "nets": [{
            "network": a["name"], "v4-fixed-ip": str(subnet.network_address + 78),
            "v6-fixed-ip": str(wanted)}]})
    assert bad.status_code == 400 and "give one of the two" in bad.text, bad.text
    assert len(net.http.get("/v1/containers").json()["containers"]) == len(before)
    port = c["addresses"][a["uuid"]][0]["port"]
    net.delete(c["uuid"])
    assert not link_exists(port)
    shown = subprocess.run(["ip", "-6", "addr"], capture_output=True, text=True,
                           check=True).stdout
    assert str(wanted) not in shown
