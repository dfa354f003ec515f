"""A docker-driver capsule on berth's local networks (berth/compute/capsules/network.py),
on a real ``berth serve``: its sandbox is plugged into the project's network, the
capsule and its members show the address, a member's declared port is reachable from
the host and from a container of the same network while another port is not, and a
delete leaves no interface, veth or registry entry. (The cri driver's pods are in
tests/functional/compute/capsules/cri/test_cri_network.py.)"""

from __future__ import annotations

import subprocess
import uuid as uuidlib
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from support.berth_proc import TEST_IMAGE, BerthProcess, wait_for
from support.local_net import SLEEP, Net, address_of, attachments_of, fetch, link_exists

pytestmark = pytest.mark.functional

LATEST = "container 1.40"
SERVE = ("echo from-the-capsule > /tmp/index.html; httpd -p 9090 -h /tmp; "
         "exec httpd -f -p 8080 -h /tmp")


@pytest.fixture
def http(berth: BerthProcess) -> Iterator[httpx.Client]:
    with berth.http(version=LATEST) as client:
        yield client


@pytest.fixture
def net(berth: BerthProcess) -> Iterator[Net]:
    made = Net(berth)
    yield made
    made.cleanup()


def host_fetch(ip: str, port: int) -> bool:
    done = subprocess.run(["curl", "-s", "-m", "3", f"http://{ip}:{port}/index.html"],
                          capture_output=True, text=True, check=False)
    return done.returncode == 0 and "from-the-capsule" in done.stdout


def test_a_capsule_sandbox_is_plugged_and_its_declared_port_is_open(
        http: httpx.Client, net: Net, berth: BerthProcess) -> None:
    resp = http.post("/v1/capsules/", json={"template": {
        "kind": "capsule", "metadata": {"name": f"netcap-{uuidlib.uuid4().hex[:8]}"},
        "spec": {"containers": [{
            "image": TEST_IMAGE, "name": "web", "imagePullPolicy": "IfNotPresent",
            "command": ["sh", "-c", SERVE], "ports": [{"containerPort": 8080}],
            "resources": {"requests": {"cpu": 0.1, "memory": 32}}}]}}})
    assert resp.status_code == 202, resp.text
    uuid = resp.json()["uuid"]
    try:
        def settled() -> dict[str, Any] | None:
            now = http.get(f"/v1/capsules/{uuid}").json()
            return now if now["status"] != "Creating" else None
        shown: Any = wait_for(settled, 90, 0.2, what="the capsule to settle")
        assert shown["status"] == "Running", shown["status_reason"]
        ip = address_of(shown)
        (web,) = shown["containers"]
        assert address_of(web) == ip              # the members have the sandbox's address
        (entry,) = attachments_of(berth, uuid)
        assert entry["state"] == "active"
        wait_for(lambda: host_fetch(ip, 8080), 20, 0.5, what="the declared port")
        assert not host_fetch(ip, 9090)           # a port no member declared stays closed
        # A container of the project's default network shares its default group.
        other = net.create(SLEEP)
        assert "from-the-capsule" in fetch(net, other["uuid"], ip)[1]
    finally:
        assert http.delete(f"/v1/capsules/{uuid}").status_code == 204
        wait_for(lambda: http.get(f"/v1/capsules/{uuid}").status_code == 404, 60,
                 what="the capsule to go")
    assert attachments_of(berth, uuid) == []
    assert not link_exists(entry["vif"]["host_ifname"])
