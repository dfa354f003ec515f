"""The real Zun brought up by ``.ci/zun-ci.sh start`` runs a container on Neutron: made
through Zun's API, it reaches Running with an address from Zun's Neutron network, its
port is ACTIVE and bound to Zun's host, and a delete removes container and port."""

from __future__ import annotations

import uuid

import httpx
from support.berth_proc import wait_for

from compat.zun_client import NEUTRON_URL, ZUN_IMAGE, ZUN_NETWORK


def test_a_container_made_through_zun_runs_with_a_neutron_address(zun: httpx.Client) -> None:
    neutron = httpx.Client(base_url=f"{NEUTRON_URL}/v2.0", timeout=30)
    nets = neutron.get("/networks", params={"name": ZUN_NETWORK}).json()["networks"]
    assert nets, f"Zun's network {ZUN_NETWORK} is missing: run `bash .ci/zun-ci.sh start`"
    name = f"bring-up-{uuid.uuid4().hex[:8]}"
    r = zun.post("/v1/containers", params={"run": "true"}, json={
        "name": name, "image": ZUN_IMAGE, "command": ["sleep", "600"],
        "image_pull_policy": "ifnotpresent", "nets": [{"network": nets[0]["id"]}]})
    assert r.status_code == 202, r.text
    uuid_ = r.json()["uuid"]
    try:
        def settled() -> dict | None:
            c = zun.get(f"/v1/containers/{uuid_}").json()
            return c if c["status"] in ("Running", "Error", "Stopped") else None

        container = wait_for(settled, 180, interval=0.5, what="Zun's container to settle")
        assert container["status"] == "Running", container["status_reason"]
        addresses = container["addresses"][nets[0]["id"]]
        port = neutron.get(f"/ports/{addresses[0]['port']}").json()["port"]
        assert addresses[0]["addr"] == port["fixed_ips"][0]["ip_address"]
        assert port["binding:host_id"] == container["host"]
        wait_for(lambda: neutron.get(f"/ports/{port['id']}").json()["port"]["status"]
                 == "ACTIVE", 60, interval=0.5, what="the container's port to be ACTIVE")
    finally:
        # Zun answers 204 with a body ("null"), which breaks a kept-alive connection
        zun.delete(f"/v1/containers/{uuid_}", params={"force": "true"},
                   headers={"Connection": "close"})
    wait_for(lambda: zun.get(f"/v1/containers/{uuid_}").status_code == 404, 120,
             interval=0.5, what="Zun to delete the container")
    assert neutron.get(f"/ports/{addresses[0]['port']}").status_code == 404
    neutron.close()
