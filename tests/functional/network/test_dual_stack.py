"""Dual-stack local networks on real namespaces, bridges and ip6tables, through the
real ``berth-cni`` and ``berth-cni-daemon``: each interface gets the IPv6 twin of its
IPv4 address and an IPv6 default route, namespaces of one network talk over IPv6
(TCP), another network cannot reach them even when the host forwards IPv6, security
groups and exposed ports hold over IPv6 as over IPv4 (and across a SIGKILL of the
daemon), and a DEL leaves no address, rule or chain in ip6tables."""

from __future__ import annotations

import ipaddress
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from support.cni_proc import run_cni
from support.netns_tools import tcp_server
from test_cni_policy import reaches, with_policy

from berth.network.policy import container_chain

FORWARDING = Path("/proc/sys/net/ipv6/conf/all/forwarding")


def addresses(result: dict[str, Any]) -> tuple[str, str]:
    v4, v6 = (str(ip["address"]).split("/")[0] for ip in result["ips"])
    return v4, v6


def ip6tables() -> str:
    return subprocess.run(["ip6tables", "-w", "-S"], check=True, capture_output=True,
                          text=True).stdout


@contextmanager
def ipv6_forwarding() -> Iterator[None]:
    """The host routes IPv6 between its interfaces for the block (as it must for a
    masquerading network's egress): isolation must not rest on its not routing."""
    before = FORWARDING.read_text().strip()
    FORWARDING.write_text("1")
    try:
        yield
    finally:
        FORWARDING.write_text(before)


def test_a_dual_stack_network_talks_over_ipv6_and_another_cannot_reach_it(  # type: ignore[no-untyped-def]
        daemon, networks, netns) -> None:
    a, b = networks.config(daemon, dual_stack=True), networks.config(daemon, dual_stack=True)
    server, client, stranger = netns(), netns(), netns()
    results = {}
    for cid, config, ns in (("server", a, server), ("client", a, client),
                            ("stranger", b, stranger)):
        networks.track(config["name"], cid)
        rc, results[cid] = run_cni("ADD", config, container_id=cid, netns=ns.path)
        assert rc == 0, results[cid]
    v4, v6 = addresses(results["server"])
    subnet, subnet6 = (ipaddress.ip_network(a["ipam"][k]) for k in ("subnet", "subnet6"))
    assert int(ipaddress.IPv6Address(v6)) - int(subnet6.network_address) == \
        int(ipaddress.IPv4Address(v4)) - int(subnet.network_address)
    assert {"dst": "::/0", "gw": str(subnet6.network_address + 1)} in \
        results["server"]["routes"]
    shown = server.run("ip", "-6", "addr", "show", "eth0")
    assert f"{v6}/64" in shown and "tentative" not in shown.split(v6)[1].splitlines()[0]
    assert f"default via {subnet6.network_address + 1}" in server.run("ip", "-6", "route")
    assert run_cni("CHECK", {**a, "prevResult": results["server"]}, container_id="server",
                   netns=server.path) == (0, None)

    with ipv6_forwarding(), tcp_server(server, v6, 8080):
        assert reaches(client, v6, 8080)
        assert reaches(None, v6, 8080)                  # the host, from the bridge's gateway
        assert not reaches(stranger, v6, 8080)
        assert not reaches(stranger, v4, 8080)

    for cid, config, ns in (("server", a, server), ("client", a, client),
                            ("stranger", b, stranger)):
        assert run_cni("DEL", config, container_id=cid, netns=ns.path) == (0, None)
    left = ip6tables().splitlines()
    assert not [line for line in left if any(
        f"berth:{spec.bridge}" in line for spec in networks.specs)]
    assert v6 not in subprocess.run(["ip", "-6", "addr"], capture_output=True, text=True,
                                    check=True).stdout


def test_groups_and_exposed_ports_hold_over_ipv6(  # type: ignore[no-untyped-def]
        daemon, networks, netns) -> None:
    config = networks.config(daemon, dual_stack=True)
    server, friend, stranger = netns(), netns(), netns()
    keys = [networks.track(config["name"], cid) for cid in ("server", "friend", "stranger")]
    # Only this network's rules and chains: other tests' berths may run beside this one.
    tag, own_chains = f"berth:{networks.specs[-1].bridge}", {container_chain(k) for k in keys}
    rc, res = run_cni("ADD", with_policy(config, ["back"], ["8080/tcp"]),
                      container_id="server", netns=server.path)
    assert rc == 0, res
    _, v6 = addresses(res)
    assert run_cni("ADD", with_policy(config, ["back"], []), container_id="friend",
                   netns=friend.path)[0] == 0
    assert run_cni("ADD", with_policy(config, ["default"], []), container_id="stranger",
                   netns=stranger.path)[0] == 0
    assert f"-d {v6}/128" in ip6tables()
    with tcp_server(server, v6, 8080), tcp_server(server, v6, 9090):
        assert reaches(friend, v6, 9090) and reaches(friend, v6, 8080)   # a member
        assert reaches(stranger, v6, 8080) and not reaches(stranger, v6, 9090)
        assert reaches(None, v6, 8080) and not reaches(None, v6, 9090)   # the host
        # A killed daemon's successor reads the IPv6 subnet back from its registry
        # and lays the ip6tables rules again (the same ones: nothing opens meanwhile).
        before = {line for line in ip6tables().splitlines() if tag in line}
        daemon.kill()
        daemon.start()
        assert {line for line in ip6tables().splitlines() if tag in line} == before
        assert reaches(friend, v6, 9090) and not reaches(stranger, v6, 9090)
    for cid, ns in (("server", server), ("friend", friend), ("stranger", stranger)):
        assert run_cni("DEL", config, container_id=cid, netns=ns.path) == (0, None)
    assert not [line for line in ip6tables().splitlines()
                if line.split()[:2] in (["-N", c] for c in own_chains) or v6 in line]
