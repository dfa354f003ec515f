"""The cni driver when things go wrong, against the real Neutron: bad input is a clear
4xx that leaves nothing (no row, no port, no container); a port that never becomes
ACTIVE ends the create in Error with the reason (the daemon answered 504); Neutron not
answering is a 503 that leaves nothing. And security groups: by name, exposed ports
turned into a group berth makes and deletes, add/remove (API 1.14) applied to the port.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from integration.network.conftest import (
    NEUTRON_HOST,
    PROJECT,
    USER_TOKEN,
    Networks,
    berth_conf,
    berth_on_neutron,
    remove_leftovers,
)
from integration.network.test_neutron_containers import delete, ovs_ports, run, settled
from support.berth_proc import TEST_IMAGE, BerthProcess, free_port, wait_for

pytestmark = pytest.mark.integration

#: Short, so that the never-ACTIVE case does not wait a minute.
VIF_TIMEOUT = 8


@pytest.fixture(scope="module")
def berth_short(neutron: str) -> Iterator[BerthProcess]:
    with berth_on_neutron(berth_conf(neutron, timeout=VIF_TIMEOUT)) as proc:
        yield proc
    remove_leftovers()


@pytest.fixture
def http(berth_short: BerthProcess) -> Iterator[httpx.Client]:
    with berth_short.http(token=USER_TOKEN) as client:
        yield client


def berth_ports(raw: httpx.Client) -> list[dict[str, Any]]:
    body = raw.get("/ports", params={"project_id": PROJECT,
                                     "device_owner": "compute:berth"}).json()
    return list(body["ports"])


def containers(http: httpx.Client) -> list[str]:
    return [c["uuid"] for c in http.get("/v1/containers").json()["containers"]]


def create(http: httpx.Client, **body: Any) -> httpx.Response:
    return http.post("/v1/containers", params={"run": "true"},
                     json={"image": TEST_IMAGE, "command": ["sleep", "3600"], **body})


@pytest.mark.neutron_short
def test_bad_input_is_a_clear_4xx_that_leaves_nothing(
        http: httpx.Client, networks: Networks, neutron_raw: httpx.Client) -> None:
    net = networks.make("10.231.10.0/24")
    used = neutron_raw.post("/ports", json={"port": {
        "network_id": net["id"], "project_id": PROJECT, "device_id": "some-vm"}}).json()["port"]
    taken = neutron_raw.post("/ports", json={"port": {
        "network_id": net["id"], "project_id": PROJECT,
        "fixed_ips": [{"ip_address": "10.231.10.50"}]}}).json()["port"]
    before_rows, before_ports = containers(http), berth_ports(neutron_raw)
    cases: list[tuple[dict[str, Any], int, str]] = [
        ({"nets": [{"network": "no-such-net"}]}, 400, "no network no-such-net"),
        ({"nets": [{"port": "no-such-port"}]}, 400, "no port no-such-port"),
        ({"nets": [{"port": used["id"]}]}, 409, "in use by device some-vm"),
        ({"nets": [{"network": net["id"], "v4-fixed-ip": "10.9.9.9"}]}, 400,
         "not in a subnet"),
        ({"nets": [{"network": net["id"], "v4-fixed-ip": "10.231.10.50"}]}, 409,
         "already in use"),
        ({"nets": [{"network": net["id"]}], "security_groups": ["no-such-group"]}, 400,
         "no security group no-such-group"),
    ]
    for body, status, words in cases:
        resp = create(http, **body)
        assert resp.status_code == status, (body, resp.text)
        assert words in resp.json()["errors"][0]["detail"], resp.text
    assert containers(http) == before_rows
    assert berth_ports(neutron_raw) == before_ports
    for port in (used, taken):
        neutron_raw.delete(f"/ports/{port['id']}")


@pytest.mark.neutron_short
def test_a_port_that_never_becomes_active_ends_the_create_in_error_and_leaves_nothing(
        http: httpx.Client, networks: Networks, neutron_raw: httpx.Client,
        berth_short: BerthProcess) -> None:
    net = networks.make("10.231.11.0/24")
    # An administratively down port is bound and plugged but never ACTIVE.
    down = neutron_raw.post("/ports", json={"port": {
        "network_id": net["id"], "project_id": PROJECT,
        "admin_state_up": False}}).json()["port"]
    resp = create(http, nets=[{"port": down["id"]}])
    assert resp.status_code == 202, resp.text
    uuid = resp.json()["uuid"]
    body = settled(http, uuid, ("Running",))
    assert body["status"] == "Error"
    assert "did not become ready within" in body["status_reason"]
    assert "never became ACTIVE" in body["status_reason"]
    assert "504" in berth_short.log_text() or "(504)" in berth_short.log_text()
    # nothing left on the host: no Docker container, no veth, no OVS port
    assert f"tap{down['id'][:11]}" not in ovs_ports()
    assert subprocess.run(["ip", "link", "show", f"tap{down['id'][:11]}"],
                          check=False, capture_output=True).returncode != 0
    assert subprocess.run(["docker", "inspect", f"zun-{uuid}"],
                          check=False, capture_output=True).returncode != 0
    delete(http, uuid)
    kept = neutron_raw.get(f"/ports/{down['id']}").json()["port"]   # the user's: kept
    assert kept["device_id"] == ""
    neutron_raw.delete(f"/ports/{down['id']}")


def test_neutron_not_answering_is_a_503_that_leaves_nothing(neutron: str) -> None:
    # A host of its own: a second berth of berth_short's host would take that one's
    # Docker containers for its orphans at start-up (one host, one agent).
    host = f"{NEUTRON_HOST}-nobody"
    proc = BerthProcess(berth_conf(f"http://127.0.0.1:{free_port()}"), host=host)
    proc.start(timeout=180)
    try:
        with proc.http(token=USER_TOKEN) as http:
            resp = create(http, nets=[{"network": "anything"}])
            assert resp.status_code == 503, resp.text
            assert "does not answer" in resp.json()["errors"][0]["detail"]
            assert containers(http) == []
    finally:
        proc.stop()
        remove_leftovers(host)


def test_security_groups_by_name_exposed_ports_and_add_remove_on_the_port(
        http: httpx.Client, networks: Networks, neutron_raw: httpx.Client,
        ports_of: Callable[[str], list[dict[str, Any]]]) -> None:
    net = networks.make("10.231.12.0/24")
    web = neutron_raw.post("/security-groups", json={"security_group": {
        "name": "it-web", "project_id": PROJECT}}).json()["security_group"]
    try:
        uuid = run(http, ["sleep", "3600"], nets=[{"network": net["id"]}],
                   security_groups=["it-web"])
        assert settled(http, uuid)["status"] == "Running"
        (port,) = ports_of(uuid)
        assert port["security_groups"] == [web["id"]]
        delete(http, uuid)

        exposed = run(http, ["sleep", "3600"], nets=[{"network": net["id"]}],
                      exposed_ports={"8080/tcp": {}})
        assert settled(http, exposed)["status"] == "Running"
        (port,) = ports_of(exposed)
        (made,) = port["security_groups"]
        group = neutron_raw.get(f"/security-groups/{made}").json()["security_group"]
        assert group["name"] == f"berth-{exposed}"
        assert any(r["port_range_min"] == 8080 and r["protocol"] == "tcp"
                   and r["direction"] == "ingress" for r in group["security_group_rules"])

        old = {"OpenStack-API-Version": "container 1.14"}
        resp = http.post(f"/v1/containers/{exposed}/add_security_group",
                         params={"name": "it-web"}, headers=old)
        assert resp.status_code == 202, resp.text
        wait_for(lambda: set(ports_of(exposed)[0]["security_groups"]) == {made, web["id"]},
                 60, 0.2, what="the group on the port")
        wait_for(lambda: http.get(f"/v1/containers/{exposed}").json()["task_state"] is None,
                 60, 0.2, what="the add to finish")
        resp = http.post(f"/v1/containers/{exposed}/remove_security_group",
                         params={"name": "it-web"}, headers=old)
        assert resp.status_code == 202, resp.text
        wait_for(lambda: ports_of(exposed)[0]["security_groups"] == [made], 60, 0.2,
                 what="the group off the port")
        # Neutron shows the port changed before the agent ends its task (a delete
        # then answers 409 "busy with sg_removing": seen in CI)
        wait_for(lambda: http.get(f"/v1/containers/{exposed}").json()["task_state"] is None,
                 60, 0.2, what="the remove to finish")
        delete(http, exposed)
        assert neutron_raw.get(f"/security-groups/{made}").status_code == 404
    finally:
        neutron_raw.delete(f"/security-groups/{web['id']}")


def test_networks_record_a_neutron_network_and_nets_name_it(
        neutron: str, networks: Networks, berth_short: BerthProcess) -> None:
    net = networks.make("10.231.13.0/24")
    with berth_short.http(token="admin", version="container 1.27") as admin:
        resp = admin.post("/v1/networks", json={"name": "recorded", "neutron_net_id": net["id"]})
        assert resp.status_code in (200, 201, 202), resp.text
        assert admin.post("/v1/networks", json={"name": "x", "neutron_net_id": "nope"}
                          ).status_code == 400
        with berth_short.http(token=USER_TOKEN) as http:
            uuid = run(http, ["sleep", "3600"], nets=[{"network": net["id"]}])
            assert net["id"] in settled(http, uuid)["addresses"]
            in_use = admin.delete("/v1/networks/recorded")     # its containers name it
            assert in_use.status_code == 409 and uuid in in_use.text, in_use.text
            delete(http, uuid)
        assert admin.delete("/v1/networks/recorded").status_code == 204
