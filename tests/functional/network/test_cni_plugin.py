"""The real ``berth-cni`` executable, driven as a runtime drives it, against the real
``berth-cni-daemon`` on a loopback port, plugging namespaces of the test's own."""

from __future__ import annotations

import json

import pytest
from support.cni_proc import run_cni
from support.netns_tools import (
    dropped_packets,
    forward_rules_of,
    host_addresses,
    link_names,
    tcp_probe,
    tcp_server,
)


def add(daemon, config, ns, container_id, ifname="eth0", args=""):  # type: ignore[no-untyped-def]
    rc, result = run_cni("ADD", config, container_id=container_id, netns=ns.path,
                         ifname=ifname, args=args)
    assert rc == 0, (result, daemon.log())
    return result


def address_of(result) -> str:  # type: ignore[no-untyped-def]
    return str(result["ips"][0]["address"]).split("/")[0]


def test_version_lists_the_supported_versions() -> None:
    assert run_cni("VERSION", b"") == (0, {"cniVersion": "1.0.0", "supportedVersions": [
        "0.3.0", "0.3.1", "0.4.0", "1.0.0"]})
    rc, out = run_cni("VERSION", {"cniVersion": "0.4.0"})
    assert rc == 0 and out["cniVersion"] == "0.4.0"


@pytest.mark.parametrize(("stdin", "env", "code"), [
    (b"{not json", {}, 6),
    ({"cniVersion": "7.0.0", "name": "n", "type": "berth-cni"}, {}, 1),
    ({"cniVersion": "1.0.0", "name": "n", "type": "berth-cni"}, {}, 7),
    ({"cniVersion": "1.0.0", "name": "n", "type": "berth-cni",
      "ipam": {"subnet": "10.244.110.0/24"}}, {"container_id": ""}, 4),
    ({"cniVersion": "1.0.0", "name": "n", "type": "berth-cni",
      "ipam": {"subnet": "10.244.110.0/24"}}, {"ifname": "much-too-long-name"}, 4),
])
def test_bad_input_is_a_cni_error_object_with_the_spec_code(stdin, env, code) -> None:  # type: ignore[no-untyped-def]
    kwargs = {"container_id": "c1", "netns": "/var/run/netns/none", **env}
    rc, out = run_cni("ADD", stdin, **kwargs)
    assert rc != 0
    assert out["code"] == code and out["msg"] and out["cniVersion"]


def test_unknown_namespace_is_code_3(daemon, networks) -> None:  # type: ignore[no-untyped-def]
    config = networks.config(daemon)
    rc, out = run_cni("ADD", config, container_id="c1", netns="/var/run/netns/bt-nonexistent")
    assert rc != 0 and out["code"] == 3
    assert daemon.registry()["attachments"] == []


def test_the_hosts_own_namespace_is_refused(daemon, networks) -> None:  # type: ignore[no-untyped-def]
    config = networks.config(daemon)
    key = networks.track(config["name"], "c1", "bth-probe0")
    # /proc/self is the daemon itself, which runs in the host's namespace.
    rc, out = run_cni("ADD", config, container_id="c1", netns="/proc/self/ns/net",
                      ifname="bth-probe0")
    assert rc != 0 and out["code"] == 4 and "host" in out["msg"]
    assert key.host_ifname not in link_names() and "bth-probe0" not in link_names()
    assert daemon.registry()["attachments"] == []


def test_one_network_talks_tcp_others_cannot_and_del_leaves_nothing(  # type: ignore[no-untyped-def]
        daemon, networks, netns) -> None:
    net_a, net_b = networks.config(daemon), networks.config(daemon)
    spec_a, spec_b = networks.specs
    ns1, ns2, ns3 = netns(), netns(), netns()
    plugged = [(net_a, ns1, "c1"), (net_a, ns2, "c2"), (net_b, ns3, "c3")]
    for config, ns, cid in plugged:
        networks.track(config["name"], cid)
    r1, r2, _ = (add(daemon, c, ns, cid) for c, ns, cid in plugged)
    assert r1["interfaces"][2]["sandbox"] == ns1.path
    a1, a2 = address_of(r1), address_of(r2)
    assert a1 != a2 and ns1.run("ip", "-o", "-4", "addr", "show", "eth0").count(a1) == 1

    with tcp_server(ns1, a1, 8080):
        assert tcp_probe(ns2, a1, 8080) == "pong:ping"          # same network: TCP works
        assert tcp_probe(None, a1, 8080) == "pong:ping"         # the host reaches it
        dropped = dropped_packets(spec_a.bridge, spec_b.bridge)
        assert tcp_probe(ns3, a1, 8080).startswith("ERR")       # another network does not,
        assert dropped_packets(spec_a.bridge, spec_b.bridge) > dropped  # berth's rules drop it
    with tcp_server(None, str(spec_b.gateway), 18080):
        assert tcp_probe(ns3, str(spec_b.gateway), 18080) == "pong:ping"  # ns3 reaches host

    for config, ns, cid in plugged:
        config = {**config, "prevResult": {}}
        assert run_cni("CHECK", config, container_id=cid, netns=ns.path) == (0, None)
    for config, ns, cid in plugged:
        assert run_cni("DEL", config, container_id=cid, netns=ns.path) == (0, None)
        assert run_cni("DEL", config, container_id=cid, netns=ns.path) == (0, None)

    links = link_names()
    assert not {k.host_ifname for k in networks.keys} & links
    assert spec_a.bridge not in links and spec_b.bridge not in links
    assert "10.244." not in "".join(line for line in host_addresses().splitlines()
                                    if spec_a.bridge in line or spec_b.bridge in line)
    assert str(spec_a.gateway) + "/" not in host_addresses()
    assert forward_rules_of(spec_a.bridge) == [] and forward_rules_of(spec_b.bridge) == []
    assert ns1.run("ip", "-o", "link", "show").count("eth0") == 0
    assert daemon.registry() == {"version": 1, "networks": [], "attachments": []}


def test_fixed_ip_and_mac_from_cni_args_and_check_sees_a_change(  # type: ignore[no-untyped-def]
        daemon, networks, netns) -> None:
    config = networks.config(daemon)
    ns = netns()
    networks.track(config["name"], "c1")
    subnet_prefix = config["ipam"]["subnet"].rsplit(".", 1)[0]
    result = add(daemon, config, ns, "c1",
                 args=f"IP={subnet_prefix}.77;MAC=02:11:22:33:44:55;K8S_POD_NAME=x")
    assert address_of(result) == f"{subnet_prefix}.77"
    assert "02:11:22:33:44:55" in ns.run("ip", "link", "show", "eth0")
    rc, out = run_cni("ADD", config, container_id="c2", netns=ns.path, ifname="eth1",
                      args=f"IP={subnet_prefix}.77")
    assert rc != 0 and out["code"] == 101  # the address is taken
    ns.run("ip", "addr", "flush", "dev", "eth0")
    rc, out = run_cni("CHECK", config, container_id="c1", netns=ns.path)
    assert rc != 0 and out["code"] == 102 and "address" in out["msg"]
    assert run_cni("DEL", config, container_id="c1", netns=ns.path) == (0, None)


def test_second_network_attached_and_detached_while_the_first_keeps_working(  # type: ignore[no-untyped-def]
        daemon, networks, netns) -> None:
    net_a, net_b = networks.config(daemon), networks.config(daemon)
    ns1, ns2 = netns(), netns()
    networks.track(net_a["name"], "c1")
    networks.track(net_a["name"], "c2")
    networks.track(net_b["name"], "c1", "eth1")
    r1 = add(daemon, net_a, ns1, "c1")
    add(daemon, net_a, ns2, "c2")
    r1b = add(daemon, net_b, ns1, "c1", ifname="eth1")
    assert r1b["routes"] == []  # the first network keeps the default route
    assert f"via {r1['ips'][0]['gateway']} dev eth0" in ns1.run("ip", "route")
    assert address_of(r1b) in ns1.run("ip", "-o", "-4", "addr", "show", "eth1")
    assert run_cni("DEL", net_b, container_id="c1", netns=ns1.path, ifname="eth1") == (0, None)
    assert "eth1" not in ns1.run("ip", "-o", "link")
    with tcp_server(ns1, address_of(r1), 8080):
        assert tcp_probe(ns2, address_of(r1), 8080) == "pong:ping"
    for config, ns, cid in ((net_a, ns1, "c1"), (net_a, ns2, "c2")):
        assert run_cni("DEL", config, container_id=cid, netns=ns.path) == (0, None)


def test_del_without_netns_or_after_the_namespace_is_gone_succeeds(  # type: ignore[no-untyped-def]
        daemon, networks, netns) -> None:
    config = networks.config(daemon)
    ns = netns()
    key = networks.track(config["name"], "c1")
    add(daemon, config, ns, "c1")
    assert run_cni("DEL", config, container_id="c1", netns="") == (0, None)
    assert key.host_ifname not in link_names()
    assert json.dumps(daemon.registry()).count('"attachments": []') == 1


def test_parallel_adds_and_dels_on_two_networks_get_distinct_addresses(  # type: ignore[no-untyped-def]
        daemon, networks, netns) -> None:
    configs = [networks.config(daemon), networks.config(daemon)]
    plugged = [(configs[i % 2], netns(), f"c{i}") for i in range(8)]
    for config, _, cid in plugged:
        networks.track(config["name"], cid)
    procs = [run_cni("ADD", config, container_id=cid, netns=ns.path, popen=True)
             for config, ns, cid in plugged]
    results = []
    for proc in procs:
        out = proc.stdout.read()
        assert proc.wait(timeout=120) == 0, (out, daemon.log())
        results.append(json.loads(out))
    addresses = [r["ips"][0]["address"] for r in results]
    assert len(set(addresses)) == len(addresses)
    assert len(daemon.registry()["attachments"]) == 8
    procs = [run_cni("DEL", config, container_id=cid, netns=ns.path, popen=True)
             for config, ns, cid in plugged]
    for proc in procs:
        assert proc.wait(timeout=120) == 0, proc.stdout.read()
    assert daemon.registry() == {"version": 1, "networks": [], "attachments": []}
    assert not {k.host_ifname for k in networks.keys} & link_names()
