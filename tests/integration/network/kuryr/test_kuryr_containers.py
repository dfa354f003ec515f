"""Containers on Neutron ports plugged by the real kuryr-libnetwork 18: a ``berth
serve`` with ``[network]driver = kuryr`` against the project's Neutron 29 (ML2/OVS,
userspace datapath), the host's Docker engine with kuryr as its network plugin, and
real Open vSwitch. berth makes the ports; Docker plugs them through kuryr; berth waits
until Neutron reports them ACTIVE."""

from __future__ import annotations

import concurrent.futures as cf
import subprocess
from collections.abc import Callable
from typing import Any

import docker
import httpx
import pytest
from integration.network.conftest import berth_conf
from integration.network.kuryr.conftest import KuryrNetworks
from integration.network.ovs_diagnostics import container_pid
from integration.network.test_neutron_containers import (
    delete,
    fetch,
    http_server,
    logs,
    run,
    settled,
)
from support.berth_proc import BerthProcess, wait_for

pytestmark = pytest.mark.integration


def docker_networks(name: str) -> list[dict[str, Any]]:
    client = docker.from_env()
    try:
        return [n.attrs for n in client.networks.list(names=[name]) if n.name == name]
    finally:
        client.close()


def addresses_in(uuid: str) -> str:
    return subprocess.run(["nsenter", f"--net=/proc/{container_pid(uuid)}/ns/net", "ip",
                           "-o", "addr"], check=True, capture_output=True, text=True).stdout


def test_two_containers_talk_tcp_on_one_docker_network_of_the_kuryr_plugin(
        http: httpx.Client, networks: KuryrNetworks,
        ports_of: Callable[[str], list[dict[str, Any]]]) -> None:
    net = networks.make("10.232.1.0/24")
    server, address, port = http_server(http, net, ports_of)
    # one Docker network of the plugin, named after the Neutron network
    (docker_net,) = docker_networks(net["id"])
    assert docker_net["Driver"] == "kuryr" and docker_net["IPAM"]["Driver"] == "kuryr"
    assert docker_net["Options"]["neutron.net.uuid"] == net["id"]
    assert address["addr"] in addresses_in(server)
    assert port["mac_address"] in subprocess.run(
        ["docker", "inspect", "-f", "{{json .NetworkSettings.Networks}}", f"zun-{server}"],
        check=True, capture_output=True, text=True).stdout

    client = run(http, ["sh", "-c", fetch(address["addr"], "hostname")],
                 nets=[{"network": net["id"]}])
    assert settled(http, client)["status"] == "Running"
    wait_for(lambda: "TCP-OK" in logs(http, client), 90, 0.5, what="the TCP exchange")
    assert len(docker_networks(net["id"])) == 1      # the second create reused it

    # stop and start: Docker unplugs and plugs again through kuryr, same port and address
    assert http.post(f"/v1/containers/{server}/stop").status_code == 202
    settled(http, server, ("Stopped",))
    assert http.post(f"/v1/containers/{server}/start").status_code == 202
    again = settled(http, server)
    assert again["status"] == "Running", again["status_reason"]
    assert again["addresses"][net["id"]][0]["addr"] == address["addr"]
    assert address["addr"] in addresses_in(server)
    assert [p["id"] for p in ports_of(server)] == [port["id"]]

    for uuid in (server, client):
        delete(http, uuid)
        assert ports_of(uuid) == []


def test_exposed_ports_a_fixed_ip_and_attach_detach_of_a_second_network(
        http: httpx.Client, networks: KuryrNetworks,
        ports_of: Callable[[str], list[dict[str, Any]]],
        neutron_raw: httpx.Client) -> None:
    first, second = networks.make("10.232.2.0/24"), networks.make("10.232.3.0/24")
    uuid = run(http, ["sleep", "3600"], exposed_ports={"80/tcp": {}},
               nets=[{"network": first["id"], "v4-fixed-ip": "10.232.2.40"}])
    body = settled(http, uuid)
    assert body["status"] == "Running", body["status_reason"]
    assert body["addresses"][first["id"]][0]["addr"] == "10.232.2.40"
    (port,) = ports_of(uuid)
    groups = {g["id"]: g for g in neutron_raw.get("/security-groups").json()[
        "security_groups"]}
    exposed = [groups[g] for g in port["security_groups"] if groups[g]["name"] ==
               f"berth-{uuid}"]
    assert exposed and any(r.get("port_range_min") == 80 and r["direction"] == "ingress"
                           for r in exposed[0]["security_group_rules"])

    resp = http.post(f"/v1/containers/{uuid}/network_attach",
                     params={"network": second["name"], "fixed_ip": "10.232.3.9"})
    assert resp.status_code == 200, resp.text
    wait_for(lambda: http.get(f"/v1/containers/{uuid}").json()["addresses"].get(
        second["id"]), 120, 0.2, what="the attach")
    assert "10.232.3.9" in addresses_in(uuid)
    assert len(ports_of(uuid)) == 2
    assert all(p["status"] == "ACTIVE" for p in ports_of(uuid))
    listed = http.get(f"/v1/containers/{uuid}/network_list")
    assert listed.status_code == 200, listed.text
    assert {n["net_id"] for n in listed.json()["networks"]} == {first["id"], second["id"]}
    # a stop and a start: Docker plugs both networks again through kuryr
    assert http.post(f"/v1/containers/{uuid}/stop").status_code == 202
    settled(http, uuid, ("Stopped",))
    assert http.post(f"/v1/containers/{uuid}/start").status_code == 202
    again = settled(http, uuid)
    assert again["status"] == "Running", again["status_reason"]
    inside = addresses_in(uuid)
    assert "10.232.2.40" in inside and "10.232.3.9" in inside

    resp = http.post(f"/v1/containers/{uuid}/network_detach",
                     params={"network": second["id"]})
    assert resp.status_code == 202, resp.text
    wait_for(lambda: second["id"] not in http.get(f"/v1/containers/{uuid}").json()[
        "addresses"], 120, 0.2, what="the detach")
    wait_for(lambda: len(ports_of(uuid)) == 1, 60, 0.2, what="the detached port to go")
    assert "10.232.3.9" not in addresses_in(uuid)
    delete(http, uuid)
    assert ports_of(uuid) == []
    assert not [g for g in neutron_raw.get("/security-groups").json()["security_groups"]
                if g["name"] == f"berth-{uuid}"]


def test_concurrent_first_creates_on_a_network_make_one_docker_network(
        http: httpx.Client, networks: KuryrNetworks,
        ports_of: Callable[[str], list[dict[str, Any]]]) -> None:
    """Four creates at once on a network this node has no Docker network of yet: the
    unique (neutron_net_id, host) row makes one of them its creator, the others wait
    and use it."""
    net = networks.make("10.232.4.0/24")
    with cf.ThreadPoolExecutor(4) as pool:
        uuids = list(pool.map(lambda _: run(http, ["sleep", "3600"],
                                            nets=[{"network": net["id"]}]), range(4)))
    for uuid in uuids:
        body = settled(http, uuid)
        assert body["status"] == "Running", body["status_reason"]
    assert len(docker_networks(net["id"])) == 1
    for uuid in uuids:
        delete(http, uuid)


def test_a_port_that_never_becomes_active_ends_the_create_in_error_with_nothing_left(
        kuryr: str, networks: KuryrNetworks, neutron_raw: httpx.Client,
        ports_of: Callable[[str], list[dict[str, Any]]]) -> None:
    """A berth whose ``[DEFAULT]host`` (``kuryr-elsewhere``) is not kuryr's host name
    (a misconfigured node): kuryr binds the ports to its own host, so berth never sees
    them ACTIVE on its host; the create ends in Error naming the port and the cause,
    without its Docker container or ports."""
    net = networks.make("10.232.5.0/24")
    proc = BerthProcess(berth_conf(kuryr, timeout=8, driver="kuryr"), host="kuryr-elsewhere")
    proc.start(timeout=180)
    try:
        with proc.http(token="alice:" + net["project_id"]) as http:
            uuid = run(http, ["sleep", "3600"], nets=[{"network": net["id"]}])
            body = settled(http, uuid, ("Error",))
            assert body["status"] == "Error"
            assert "did not become ACTIVE" in body["status_reason"], body["status_reason"]
            assert ports_of(uuid) == []
            assert subprocess.run(["docker", "inspect", f"zun-{uuid}"], check=False,
                                  capture_output=True).returncode != 0
            assert http.delete(f"/v1/containers/{uuid}").status_code == 204
    finally:
        proc.stop()
        client = docker.from_env()
        try:
            for c in client.containers.list(all=True, filters={
                    "label": "berth.host=kuryr-elsewhere"}):
                c.remove(force=True)
        finally:
            client.close()
