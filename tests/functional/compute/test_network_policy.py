"""Security groups and exposed ports enforced on berth's local networks, through the API
of a real ``berth serve`` (real Docker, bridges and iptables): an exposed port is
reachable from the host and from the network while a closed one is not; a security
group lets its members in and nobody else; adding and removing a group changes who
gets in while the container runs; a deleted container leaves no chain behind.

Every probe is a TCP connection to a container the test made, from the host or from
another of its containers (busybox ``nc``).
"""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Iterator

import pytest
from support.berth_proc import BerthProcess, wait_for
from support.local_net import SLEEP, Net, address_of

#: Two servers in one container: 8080 (exposed in the tests that expose one) and 8081.
TWO_PORTS = ["sh", "-c", ("echo hello-from-berth > /tmp/index.html && "
             "httpd -p 8081 -h /tmp && exec httpd -f -p 8080 -h /tmp")]


@pytest.fixture
def net(berth: BerthProcess) -> Iterator[Net]:
    made = Net(berth)
    yield made
    made.cleanup()


def from_host(ip: str, port: int, timeout: float = 1.5) -> bool:
    try:
        with socket.create_connection((ip, port), timeout=timeout):
            return True
    except OSError:
        return False


def from_container(net: Net, uuid: str, ip: str, port: int) -> bool:
    """Whether ``uuid`` gets the page from ``ip:port`` (nc gives up after 2 s)."""
    request = "printf 'GET /index.html HTTP/1.0\\r\\n\\r\\n'"
    code, out = net.exec(uuid, f'sh -c "{request} | nc -w 2 {ip} {port}"')
    return code == 0 and "hello-from-berth" in out


def policy_chains() -> set[str]:
    return {line.split()[1] for line in _listing().splitlines()
            if line.startswith(("-N BERTH-C-", "-N BERTH-G-"))}


def chain_of(ip: str) -> str | None:
    """The container chain a dispatch chain sends ``ip`` to (only this test's: other
    tests' berths may lay chains of their own meanwhile)."""
    for line in _listing().splitlines():
        words = line.split()
        if words[:2] and words[0] == "-A" and words[1].startswith("BERTH-D-") \
                and "-d" in words and words[words.index("-d") + 1] == f"{ip}/32":
            return words[-1]
    return None


def _listing() -> str:
    return subprocess.run(["iptables", "-w", "-S"], check=True, capture_output=True,
                          text=True).stdout


def test_an_exposed_port_is_reachable_and_a_closed_one_is_not(net: Net) -> None:
    a = net.network()
    server = net.create(TWO_PORTS, nets=[{"network": a["name"]}],
                        exposed_ports={"8080/tcp": {}})
    peer = net.create(SLEEP, nets=[{"network": a["name"]}])
    ip = address_of(server, a["uuid"])
    wait_for(lambda: from_host(ip, 8080), 10, what="the exposed port from the host")
    assert not from_host(ip, 8081)
    # A container of the same network: the exposed port only (the server is in no group).
    assert from_container(net, peer["uuid"], ip, 8080)
    assert not from_container(net, peer["uuid"], ip, 8081)
    # What the server opens itself is answered (replies come back in).
    code, _ = net.exec(server["uuid"], f"ping -c 1 -W 2 {a['gateway']}")
    assert code == 0


def test_containers_without_groups_share_default_and_the_host_is_kept_out(net: Net) -> None:
    a = net.network()
    server = net.create(TWO_PORTS, nets=[{"network": a["name"]}])
    peer = net.create(SLEEP, nets=[{"network": a["name"]}])
    ip = address_of(server, a["uuid"])
    assert from_container(net, peer["uuid"], ip, 8080)
    assert from_container(net, peer["uuid"], ip, 8081)
    assert not from_host(ip, 8080)        # nothing exposed


def test_a_security_group_lets_its_members_in_and_follows_add_and_remove(net: Net) -> None:
    a = net.network()
    server = net.create(TWO_PORTS, nets=[{"network": a["name"]}], security_groups=["back"])
    member = net.create(SLEEP, nets=[{"network": a["name"]}], security_groups=["back", "x"])
    other = net.create(SLEEP, nets=[{"network": a["name"]}])
    ip = address_of(server, a["uuid"])
    assert from_container(net, member["uuid"], ip, 8080)
    assert from_container(net, member["uuid"], ip, 8081)
    assert not from_container(net, other["uuid"], ip, 8080)

    old = net.proc.http(version="container 1.14")   # the actions end at 1.14, as in Zun
    resp = old.post(f"/v1/containers/{other['uuid']}/add_security_group",
                    json={"name": "back"})
    assert resp.status_code == 202, resp.text
    wait_for(lambda: "back" in net.show(other["uuid"])["security_groups"], 30,
             what="the group recorded")
    assert from_container(net, other["uuid"], ip, 8080)

    resp = old.post(f"/v1/containers/{other['uuid']}/remove_security_group",
                    json={"name": "back"})
    assert resp.status_code == 202, resp.text
    wait_for(lambda: "back" not in net.show(other["uuid"])["security_groups"], 30,
             what="the group removed")
    assert not from_container(net, other["uuid"], ip, 8080)


def test_the_policy_survives_a_reboot_and_a_delete_leaves_no_chain(net: Net) -> None:
    a = net.network()
    server = net.create(TWO_PORTS, nets=[{"network": a["name"]}],
                        exposed_ports={"8080/tcp": {}})
    chain = chain_of(address_of(net.wait(server["uuid"], "Running"), a["uuid"]))
    assert chain is not None and chain.startswith("BERTH-C-")   # its container chain
    resp = net.http.post(f"/v1/containers/{server['uuid']}/reboot", params={"timeout": 1})
    assert resp.status_code == 202, resp.text
    wait_for(lambda: net.show(server["uuid"])["task_state"] is None, 60, what="the reboot")
    ip = address_of(net.wait(server["uuid"], "Running"), a["uuid"])
    wait_for(lambda: from_host(ip, 8080), 10, what="the exposed port after the reboot")
    assert not from_host(ip, 8081)
    net.delete(server["uuid"])
    net.containers.remove((server["uuid"], "admin"))
    assert chain not in policy_chains() and chain_of(ip) is None
