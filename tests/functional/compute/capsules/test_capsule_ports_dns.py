"""A capsule's published ports (its members' ``hostPort``) and DNS options (its
template's ``spec.dnsConfig``), on both capsule drivers: the docker driver's sandbox
publishes and resolves for its members; the cri driver's pod gets port mappings
(published by the CNI ``portmap`` plugin chained after berth-cni) and a DNSConfig.
Bad values are a 400 naming the field, with nothing made."""

from __future__ import annotations

import random
import socket
import subprocess
import time
import uuid as uuidlib
from typing import Any

import pytest
from support.berth_proc import TEST_IMAGE, BerthProcess, wait_for

pytestmark = pytest.mark.functional

LATEST = "container 1.40"
SERVE = "echo served-by-$HOSTNAME-pod > /tmp/index.html; exec httpd -f -p 8080 -h /tmp"


@pytest.fixture(params=["docker", "cri"])
def engine(request: pytest.FixtureRequest) -> BerthProcess:
    return request.getfixturevalue("berth" if request.param == "docker" else "cri_berth")


def node_address() -> str:
    """This node's own address on its default route (a connection to it from the node
    itself goes through the published port's rules; nothing leaves the node)."""
    out = subprocess.run(["ip", "-4", "route", "get", "192.0.2.1"], capture_output=True,
                         text=True, check=True, timeout=10).stdout.split()
    return out[out.index("src") + 1]


def fetch(address: str, port: int) -> str:
    try:
        with socket.create_connection((address, port), timeout=2) as conn:
            conn.sendall(b"GET /index.html HTTP/1.0\r\n\r\n")
            data = b""
            while chunk := conn.recv(4096):
                data += chunk
    except OSError:
        return ""
    return data.decode(errors="replace")


def test_a_members_host_port_is_published_and_the_pod_resolves_with_its_dns_config(
        engine: BerthProcess) -> None:
    host_port = random.randint(20000, 29999)
    tpl = {"kind": "capsule", "metadata": {"name": f"pub-{uuidlib.uuid4().hex[:8]}"},
           "spec": {"dnsConfig": {"nameservers": ["10.0.0.2", "10.0.0.3"],
                                  "searches": ["berth.test", "pods.berth.test"],
                                  "options": [{"name": "ndots", "value": "2"},
                                              {"name": "edns0"}]},
                    "containers": [{"image": TEST_IMAGE, "name": "web",
                                    "imagePullPolicy": "IfNotPresent",
                                    "command": ["sh", "-c", SERVE],
                                    "ports": [{"containerPort": 8080, "hostPort": host_port}],
                                    "resources": {"requests": {"cpu": 0.1, "memory": 32}}}]}}
    with engine.http(version=LATEST) as http:
        resp = http.post("/v1/capsules/", json={"template": tpl})
        assert resp.status_code == 202, resp.text
        uuid = resp.json()["uuid"]
        try:
            shown = wait_for(lambda: (r := http.get(f"/v1/capsules/{uuid}").json())
                             and r["status"] != "Creating" and r, 60, 0.2, what="the capsule")
            assert isinstance(shown, dict) and shown["status"] == "Running", shown
            member = shown["containers"][0]
            address = node_address()
            page = wait_for(lambda: fetch(address, host_port), 20, 0.2,
                            what=f"the page on {address}:{host_port}")
            assert "served-by-" in str(page), page
            resp = http.post(f"/v1/containers/{member['uuid']}/execute",
                             params={"run": "true", "command": "cat /etc/resolv.conf"})
            assert resp.status_code == 200, resp.text
            lines = resp.json()["output"].splitlines()
            assert "nameserver 10.0.0.2" in lines and "nameserver 10.0.0.3" in lines, lines
            assert "search berth.test pods.berth.test" in lines, lines
            assert any(line.startswith("options") and "ndots:2" in line and "edns0" in line
                       for line in lines), lines
        finally:
            assert http.delete(f"/v1/capsules/{uuid}").status_code == 204
            wait_for(lambda: http.get(f"/v1/capsules/{uuid}").status_code == 404, 60, 0.2,
                     what="the capsule deleted")
    # Deleted: the port is published no more.
    deadline = time.monotonic() + 10
    while fetch(address, host_port) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert fetch(address, host_port) == ""


def _member(**extra: Any) -> dict[str, Any]:
    return {"image": TEST_IMAGE, "command": ["sleep", "60"], **extra}


@pytest.mark.parametrize(("spec", "field"), [
    ({"containers": [_member(name="a", ports=[{"containerPort": 80, "hostPort": 20080}]),
                     _member(name="b", ports=[{"containerPort": 81, "hostPort": 20080}])]},
     "spec.containers[1].ports[0].hostPort"),
    ({"initContainers": [_member(name="i", ports=[{"containerPort": 80, "hostPort": 20081}])],
      "containers": [_member(name="a")]}, "spec.initContainers[0].ports[0]"),
    ({"containers": [_member()], "dnsConfig": {"nameservers": ["dns.example"]}},
     "spec.dnsConfig.nameservers[0]"),
    ({"containers": [_member()], "dnsConfig": {"nameservers": ["10.0.0.1"] * 4}},
     "spec.dnsConfig.nameservers"),
    ({"containers": [_member()], "dnsConfig": {"options": [{"value": "2"}]}},
     "spec.dnsConfig.options[0]"),
    ({"containers": [_member()], "dnsConfig": {"searches": ["bad domain"]}},
     "spec.dnsConfig.searches[0]"),
], ids=["host-port-twice", "init-publishes", "server-not-ip", "four-servers",
        "option-without-name", "search-with-space"])
def test_bad_ports_or_dns_options_are_a_400_naming_the_field_and_make_nothing(
        engine: BerthProcess, spec: dict[str, Any], field: str) -> None:
    name = f"bad-{uuidlib.uuid4().hex[:8]}"
    tpl = {"kind": "capsule", "metadata": {"name": name}, "spec": spec}
    with engine.http(version=LATEST) as http:
        before = len(http.get("/v1/capsules/").json()["capsules"])
        resp = http.post("/v1/capsules/", json={"template": tpl})
        assert resp.status_code == 400, resp.text
        assert field in resp.text, resp.text
        capsules = http.get("/v1/capsules/").json()["capsules"]
    assert len(capsules) == before and name not in {c["name"] for c in capsules}


def test_a_host_port_another_capsule_publishes_fails_the_create_and_makes_nothing(
        engine: BerthProcess) -> None:
    host_port = random.randint(30000, 39999)

    def tpl(name: str) -> dict[str, Any]:
        return {"kind": "capsule", "metadata": {"name": f"{name}-{uuidlib.uuid4().hex[:8]}"},
                "spec": {"containers": [{
                    "image": TEST_IMAGE, "name": "web", "imagePullPolicy": "IfNotPresent",
                    "command": ["sh", "-c", SERVE],
                    "ports": [{"containerPort": 8080, "hostPort": host_port}],
                    "resources": {"requests": {"cpu": 0.1, "memory": 32}}}]}}

    made: list[str] = []
    with engine.http(version=LATEST) as http:
        try:
            for name in ("first", "second"):
                resp = http.post("/v1/capsules/", json={"template": tpl(name)})
                assert resp.status_code == 202, resp.text
                made.append(resp.json()["uuid"])
                shown = wait_for(lambda: (r := http.get(f"/v1/capsules/{made[-1]}").json())
                                 and r["status"] != "Creating" and r, 60, 0.2,
                                 what="the capsule")
                assert isinstance(shown, dict)
            first = http.get(f"/v1/capsules/{made[0]}").json()
            assert first["status"] == "Running", first["status_reason"]
            assert shown["status"] == "Error", shown
            assert f"Host port {host_port}/tcp" in shown["status_reason"], \
                shown["status_reason"]
            assert first["name"] in shown["status_reason"], shown["status_reason"]
            assert "served-by-" in fetch(node_address(), host_port)   # still the first's
        finally:
            for uuid in made:
                assert http.delete(f"/v1/capsules/{uuid}").status_code == 204
            for uuid in made:
                wait_for(lambda u=uuid: http.get(f"/v1/capsules/{u}").status_code == 404,
                         60, 0.2, what="the capsule deleted")
