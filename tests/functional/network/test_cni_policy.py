"""Policies (security groups, exposed ports) laid by the real ``berth-cni-daemon`` on
real namespaces and iptables: given with the ADD (``runtimeConfig.berthPolicy``),
changed with ``/setPolicy``, kept across a SIGKILL of the daemon, and the chains of a
killed daemon's gone attachments collected by the next one's sync."""

from __future__ import annotations

import json
import subprocess
import urllib.request
from typing import Any

from support.cni_proc import run_cni
from support.netns_tools import delete_netns, tcp_probe, tcp_server

from berth.network.policy import container_chain, dispatch_chain, group_chain


def address(result: dict[str, Any]) -> str:
    return str(result["ips"][0]["address"]).split("/")[0]


def with_policy(config: dict[str, Any], groups: list[str], ports: list[str]) -> dict[str, Any]:
    return {**config, "runtimeConfig": {"berthPolicy": {"groups": groups, "ports": ports}}}


def reaches(ns: Any, ip: str, port: int) -> bool:
    return tcp_probe(ns, ip, port, timeout=1.5).startswith("pong")


def chains() -> set[str]:
    out = subprocess.run(["iptables", "-w", "-S"], check=True, capture_output=True,
                         text=True).stdout
    return {line.split()[1] for line in out.splitlines() if line.startswith("-N BERTH-")}


def set_policy(daemon: Any, container_id: str, policy: dict[str, Any] | None) -> int:
    body = json.dumps({"container_id": container_id, "policy": policy}).encode()
    request = urllib.request.Request(daemon.url + "/setPolicy", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return int(json.load(answer)["changed"])


def test_groups_and_ports_are_enforced_changed_and_survive_a_sigkill(  # type: ignore[no-untyped-def]
        daemon, networks, netns) -> None:
    config = networks.config(daemon)
    server, friend, stranger = netns(), netns(), netns()
    keys = [networks.track(config["name"], cid) for cid in ("server", "friend", "stranger")]
    rc, res = run_cni("ADD", with_policy(config, ["back"], ["8080/tcp"]),
                      container_id="server", netns=server.path)
    assert rc == 0, res
    ip = address(res)
    assert run_cni("ADD", with_policy(config, ["back"], []), container_id="friend",
                   netns=friend.path)[0] == 0
    assert run_cni("ADD", with_policy(config, ["default"], []), container_id="stranger",
                   netns=stranger.path)[0] == 0
    with tcp_server(server, ip, 8080), tcp_server(server, ip, 9090):
        assert reaches(friend, ip, 9090) and reaches(friend, ip, 8080)   # a member
        assert reaches(stranger, ip, 8080) and not reaches(stranger, ip, 9090)
        assert reaches(None, ip, 8080) and not reaches(None, ip, 9090)   # the host

        assert set_policy(daemon, "stranger", {"groups": ["back"], "ports": []}) == 1
        assert reaches(stranger, ip, 9090)
        assert set_policy(daemon, "stranger", {"groups": ["default"], "ports": []}) == 1
        assert not reaches(stranger, ip, 9090)

        daemon.kill()
        daemon.start()
        assert reaches(friend, ip, 9090) and not reaches(stranger, ip, 9090)
        assert reaches(None, ip, 8080) and not reaches(None, ip, 9090)

    # A killed daemon's attachment whose namespace went: the next start takes its
    # chain, and that of the group it alone was in ("default").
    # Only this network's chains: other tests' berths may run beside this one.
    own = {container_chain(k) for k in keys} | {group_chain(config["name"], g)
                                                for g in ("back", "default")}
    before = chains() & own
    daemon.kill()
    delete_netns(stranger)
    daemon.start()                                   # recovery ends with a sync pass
    assert before - chains() == {container_chain(keys[2]),
                                 group_chain(config["name"], "default")}
    for cid, ns in (("server", server), ("friend", friend)):
        assert run_cni("DEL", config, container_id=cid, netns=ns.path) == (0, None)
    assert not chains() & own


def test_a_bad_policy_is_a_cni_error_and_leaves_nothing(  # type: ignore[no-untyped-def]
        daemon, networks, netns) -> None:
    config = networks.config(daemon)
    ns = netns()
    key = networks.track(config["name"], "c1")
    own = {container_chain(key), dispatch_chain(networks.specs[-1])}   # not other tests'
    before = chains() & own
    rc, err = run_cni("ADD", with_policy(config, [], ["99999/tcp"]), container_id="c1",
                      netns=ns.path)
    assert rc != 0 and err["code"] == 7 and "99999/tcp" in err["msg"], err
    assert chains() & own == before
    assert daemon.registry()["attachments"] == []
