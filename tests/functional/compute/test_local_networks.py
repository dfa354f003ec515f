"""Containers on berth's local networks, through the API of a real ``berth serve``
(its embedded CNI daemon, real Docker, real bridges and veths): two containers of one
network talk over TCP, a container of another network cannot reach them, fixed IPs,
``addresses`` and ``network_list``, attach and detach while running, the default
network per project, and nothing left (veth, address, registry entry) after a stop,
a delete or a failed plug.

Every subnet is inside the berth's own /20 of 10.200.0.0/13 (support.berth_proc);
traffic flows only between the test's containers and the host.
"""

from __future__ import annotations

import ipaddress
import uuid as uuidlib
from collections.abc import Iterator

import docker
import httpx
import pytest
from support.berth_proc import TEST_IMAGE, BerthProcess, wait_for
from support.local_net import (
    HTTPD,
    SLEEP,
    Net,
    address_of,
    attachments_of,
    fetch,
    link_exists,
)


@pytest.fixture
def net(berth: BerthProcess) -> Iterator[Net]:
    made = Net(berth)
    yield made
    made.cleanup()



def test_containers_of_one_network_talk_over_tcp_and_another_network_cannot_reach_them(
        net: Net) -> None:
    a, b = net.network(), net.network()
    # (its port exposed, so that the host may reach it too: tests/.../test_network_policy.py)
    server = net.create(HTTPD, nets=[{"network": a["name"]}],
                        exposed_ports={"8080/tcp": {}})
    client = net.create(SLEEP, nets=[{"network": a["uuid"]}])
    stranger = net.create(SLEEP, nets=[{"network": b["name"]}])
    ip = address_of(server, a["uuid"])
    assert ipaddress.IPv4Address(ip) in ipaddress.IPv4Network(a["subnet"])
    assert address_of(stranger, b["uuid"]) != ip
    code, out = fetch(net, client["uuid"], ip)
    assert code == 0 and out.strip().endswith("hello-from-berth"), out
    code, out = fetch(net, stranger["uuid"], ip, timeout=2)
    assert code != 0 and "hello-from-berth" not in out
    # The host reaches the exposed port (the bridge holds the gateway).
    assert httpx.get(f"http://{ip}:8080/index.html", timeout=5).text.strip() == \
        "hello-from-berth"


def test_fixed_ip_is_honoured_and_shown_in_addresses_and_both_network_list_shapes(
        net: Net, docker_client: docker.DockerClient) -> None:
    a = net.network()
    fixed = str(ipaddress.IPv4Network(a["subnet"]).network_address + 50)
    c = net.create(SLEEP, nets=[{"network": a["name"], "v4-fixed-ip": fixed}])
    assert c["addresses"][a["uuid"]][0]["addr"] == fixed
    assert c["addresses"][a["uuid"]][0]["version"] == 4
    code, out = net.exec(c["uuid"], "ip -4 addr show eth0")
    assert code == 0 and f"{fixed}/" in out
    assert docker_client.api.inspect_container(f"zun-{c['uuid']}")["HostConfig"][
        "NetworkMode"] == "none"
    old = net.proc.http(version="container 1.13").get(
        f"/v1/containers/{c['uuid']}/network_list").json()
    assert old["networks"] == [{"net_id": a["uuid"], "subnet_id": a["subnet"],
                                "port_id": c["addresses"][a["uuid"]][0]["port"],
                                "version": 4, "ip_address": fixed}]
    new = net.http.get(f"/v1/containers/{c['uuid']}/network_list").json()
    assert new["networks"][0]["fixed_ips"] == [{"subnet_id": a["subnet"], "version": 4,
                                                "ip_address": fixed}]
    # A fixed IP outside the subnet, or a Neutron port, is refused before anything is made.
    bad = net.http.post("/v1/containers", json={
        "image": TEST_IMAGE, "nets": [{"network": a["name"], "v4-fixed-ip": "10.9.9.9"}]})
    assert bad.status_code == 400 and "not a usable address" in bad.text
    port = net.http.post("/v1/containers", json={"image": TEST_IMAGE,
                                                 "nets": [{"port": "some-port"}]})
    assert port.status_code == 400 and "Neutron port" in port.text


def test_a_project_gets_its_default_network_on_first_use(net: Net) -> None:
    p1, p2 = f"alice:p-{uuidlib.uuid4().hex[:6]}", f"bob:p-{uuidlib.uuid4().hex[:6]}"
    first = net.create(SLEEP, token=p1)
    second = net.create(SLEEP, token=p1)
    other = net.create(SLEEP, token=p2)
    assert len(first["addresses"]) == 1
    assert first["addresses"].keys() == second["addresses"].keys()
    assert first["addresses"].keys() != other["addresses"].keys()
    assert address_of(first) != address_of(second)
    net.networks.extend([*first["addresses"], *other["addresses"]])


def test_attach_and_detach_while_running(net: Net) -> None:
    a, b = net.network(), net.network()
    server = net.create(HTTPD, nets=[{"network": a["name"]}])
    c = net.create(SLEEP, nets=[{"network": b["name"]}])
    ip = address_of(server, a["uuid"])
    resp = net.http.post(f"/v1/containers/{c['uuid']}/network_attach",
                         params={"network": a["name"]})
    assert resp.status_code == 200, resp.text
    shown = net.show(c["uuid"])
    assert set(shown["addresses"]) == {a["uuid"], b["uuid"]}
    assert shown["addresses"][a["uuid"]][0]["ifname"] == "eth1"
    code, out = fetch(net, c["uuid"], ip)
    assert code == 0 and out.strip().endswith("hello-from-berth"), out
    again = net.http.post(f"/v1/containers/{c['uuid']}/network_attach",
                          params={"network": a["name"]})
    assert again.status_code == 400, again.text
    port = shown["addresses"][a["uuid"]][0]["port"]
    assert link_exists(port)
    resp = net.http.post(f"/v1/containers/{c['uuid']}/network_detach",
                         params={"network": a["uuid"]})
    assert resp.status_code == 202, resp.text
    assert set(net.show(c["uuid"])["addresses"]) == {b["uuid"]}
    assert not link_exists(port)
    code, _ = net.exec(c["uuid"], "ip link show eth1")
    assert code != 0
    assert len(net.http.get(f"/v1/containers/{c['uuid']}/network_list").json()[
        "networks"]) == 1


def test_stop_unplugs_start_plugs_again_with_the_same_address(net: Net) -> None:
    a = net.network()
    c = net.create(SLEEP, nets=[{"network": a["name"]}])
    ip, port = address_of(c), c["addresses"][a["uuid"]][0]["port"]
    assert link_exists(port) and attachments_of(net.proc, c["uuid"])
    assert net.http.post(f"/v1/containers/{c['uuid']}/stop").status_code == 202
    net.wait(c["uuid"], "Stopped")
    assert not link_exists(port) and not attachments_of(net.proc, c["uuid"])
    assert net.http.post(f"/v1/containers/{c['uuid']}/start").status_code == 202
    again = net.wait(c["uuid"], "Running")
    assert address_of(again) == ip and link_exists(port)
    # A reboot makes a new process, so a new namespace: plugged again, same address.
    assert net.http.post(f"/v1/containers/{c['uuid']}/reboot",
                         params={"timeout": 1}).status_code == 202
    wait_for(lambda: net.show(c["uuid"])["task_state"] is None and
             net.show(c["uuid"])["status"] == "Running", 60, what="the reboot")
    code, out = net.exec(c["uuid"], "ip -4 addr show eth0")
    assert code == 0 and f"{ip}/" in out


def test_delete_and_a_failed_plug_leave_no_veth_address_or_registry_entry(
        net: Net, docker_client: docker.DockerClient) -> None:
    a = net.network()
    c = net.create(SLEEP, nets=[{"network": a["name"]}])
    ip, port = address_of(c), c["addresses"][a["uuid"]][0]["port"]
    # The same fixed IP again: the plug fails after docker start, and is undone.
    # (the create ends in Error with the reason; a later start's failed plug leaves it Stopped)
    clash = net.create(SLEEP, nets=[{"network": a["name"], "v4-fixed-ip": ip}], wait=None)
    wait_for(lambda: "in use" in (net.show(clash["uuid"])["status_reason"] or ""), 60,
             what="the failed plug's reason")
    # A create whose plug fails ends as a failed create: Error, no Docker container,
    # and it never shows Stopped on the way (a client would take that as the end).
    clash = net.wait(clash["uuid"], "Error")
    assert "create it again" in clash["status_reason"]
    assert not [line for line in net.proc.log_text().splitlines()
                if clash["uuid"] in line and "-> Stopped" in line]
    assert not attachments_of(net.proc, clash["uuid"])
    assert not docker_client.containers.list(all=True, ignore_removed=True,
            filters={"name": f"zun-{clash['uuid']}"})
    net.delete(c["uuid"])
    assert not link_exists(port)
    assert not attachments_of(net.proc, c["uuid"])
    # The address is free again: a new container may have it.
    again = net.create(SLEEP, nets=[{"network": a["name"], "v4-fixed-ip": ip}])
    assert address_of(again) == ip


def test_a_network_in_use_cannot_be_deleted(net: Net) -> None:
    a = net.network()
    c = net.create(SLEEP, nets=[{"network": a["name"]}])
    resp = net.http.delete(f"/v1/networks/{a['name']}")
    assert resp.status_code == 409 and c["uuid"] in resp.text
    net.delete(c["uuid"])
    assert net.http.delete(f"/v1/networks/{a['name']}").status_code == 204
    assert net.http.delete(f"/v1/networks/{a['name']}").status_code == 404


def test_a_container_that_exits_before_its_plug_is_stopped_without_a_network_error(
        net: Net) -> None:
    # `true` is usually gone before berth can plug its namespace: its exit is the story.
    for _ in range(3):
        c = net.create(["true"], wait=None)
        done = net.wait(c["uuid"], "Stopped")
        reason = done["status_reason"] or ""
        assert "etwork" not in reason and "plug" not in reason, reason
        # When `true` lived long enough to be plugged, its die event is written
        # Stopped before the sync's inspect and unplug (the status first, as Docker
        # reports it): the attachment goes a moment after.
        wait_for(lambda uuid=c["uuid"]: attachments_of(net.proc, uuid) == [], 30,
                 what="the exited container's attachment to go")


def test_a_start_that_fails_leaves_no_reservation_behind(net: Net) -> None:
    # The plug's address and rules are reserved beside docker start; a start that
    # fails (no such executable) gives them back at once.
    a = net.network()
    c = net.create(["/no-such-binary"], nets=[{"network": a["name"]}], wait=None)
    # (Error, then Created once the state sync reads Docker's view of a failed start)
    wait_for(lambda: "no-such-binary" in (net.show(c["uuid"])["status_reason"] or ""), 60,
             what="the failed start's reason")
    assert attachments_of(net.proc, c["uuid"]) == []
