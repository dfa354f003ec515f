"""The seed's CNI daemon answer on a VIF that never becomes ACTIVE, on Zun and on berth.

The port is real and never ACTIVE: a Neutron port made administratively down, given to
the create (``nets: [{"port": ...}]``); Neutron binds it and the OVS agent wires it, but
its status stays DOWN. Each service's CNI daemon plugs the VIF and waits for ACTIVE.
zun-cni-daemon gives up after its ``vif_active_timeout`` (60 s) with a RetryError its
handler does not expect, so it answers 500, not the 504 it means for this case (seed,
zun/cni/daemon/service.py:69). (zun-cni, the executable zun-compute runs, stops waiting
for the daemon after 30 s, so Zun's container is Stopped, "failed to configure
network", half a minute before the daemon answers.) berth's CNI daemon answers 504 and the container ends in
Error saying the port never became ACTIVE (design.md, item 7).

berth runs here as tests/integration/network runs it: ``berth serve`` with the cni
driver on the shared Neutron, named as Neutron's OVS agent host (Zun's host too), with
a VIF timeout of 8 s so as not to wait a minute.
"""

from __future__ import annotations

import re
import uuid as uuidlib
from collections.abc import Iterator

import httpx
import pytest
from support.berth_proc import TEST_IMAGE, BerthProcess, wait_for

from compat.zun_client import NEUTRON_URL, ZUN_IMAGE, ZUN_NETWORK, keystone_token
from compat.zun_services import DEFECTS_OPT_IN, LOGS, LogTail, force_delete, settle

pytestmark = DEFECTS_OPT_IN

#: werkzeug's access line in zun-cni-daemon's log (coloured): the answer's status
ADD_ANSWER = re.compile(r'POST /addNetwork HTTP/1\.1\S*" (\d{3})')
BERTH_VIF_TIMEOUT = 8


def neutron() -> httpx.Client:
    return httpx.Client(base_url=f"{NEUTRON_URL}/v2.0", timeout=60)


def down_port(raw: httpx.Client, network_id: str, project_id: str) -> dict:
    return raw.post("/ports", json={"port": {
        "network_id": network_id, "project_id": project_id, "admin_state_up": False,
        "name": f"zundefects-down-{uuidlib.uuid4().hex[:6]}"}}).json()["port"]


def test_zun_s_cni_daemon_answers_500_on_a_vif_that_never_becomes_active(
        zun: httpx.Client) -> None:
    raw = neutron()
    _, project = keystone_token()
    net = raw.get("/networks", params={"name": ZUN_NETWORK}).json()["networks"][0]["id"]
    port = down_port(raw, net, project)
    log = LogTail(LOGS / "zun-cni-daemon.log")
    r = zun.post("/v1/containers", params={"run": "true"}, json={
        "name": f"vif-{uuidlib.uuid4().hex[:6]}", "image": ZUN_IMAGE,
        "command": ["sleep", "600"], "image_pull_policy": "ifnotpresent",
        "nets": [{"port": port["id"]}]})
    assert r.status_code == 202, r.text
    uuid = r.json()["uuid"]
    try:
        body = settle(zun, uuid, ("Running", "Error", "Stopped"), 300)
        # zun-cni, the executable zun-compute runs, gives the daemon 30 s and so gives up
        # first; the daemon answers the closed request at its own 60 s
        answers = wait_for(lambda: ADD_ANSWER.findall(log.text()), 120, interval=1,
                           what="zun-cni-daemon to answer the addNetwork")
        text = log.text()
        print(f"\n[zun] a port that never becomes ACTIVE: zun-cni-daemon answered "
              f"{answers} to addNetwork; the container: {body['status']} "
              f"({body['status_reason']})")
        assert body["status"] != "Running"
        assert answers and answers[-1] == "500", answers
        assert "504" not in answers
        assert "RetryError" in text            # the timeout, raised as what it is not
        assert raw.get(f"/ports/{port['id']}").json()["port"]["status"] != "ACTIVE"
    finally:
        force_delete(zun, uuid)
        raw.delete(f"/ports/{port['id']}")
        raw.close()


@pytest.fixture(scope="module")
def berth_on_neutron() -> Iterator[BerthProcess]:
    from integration.network.conftest import NEUTRON_HOST, berth_conf, remove_leftovers

    proc = BerthProcess(berth_conf(NEUTRON_URL, timeout=BERTH_VIF_TIMEOUT) +
                        "[quota]\ncontainers = -1\n", host=NEUTRON_HOST)
    proc.start(timeout=180)
    yield proc
    proc.stop()
    remove_leftovers()


def test_berth_s_cni_daemon_answers_504_on_a_vif_that_never_becomes_active(
        berth_on_neutron: BerthProcess) -> None:
    raw = neutron()
    project = uuidlib.uuid4().hex
    net = raw.post("/networks", json={"network": {
        "name": f"zundefects-{project[:6]}", "project_id": project}}).json()["network"]
    raw.post("/subnets", json={"subnet": {"network_id": net["id"], "ip_version": 4,
                                          "cidr": "10.231.214.0/24", "project_id": project}})
    port = down_port(raw, net["id"], project)
    http = berth_on_neutron.http(token=f"admin:{project}")
    mark = len(berth_on_neutron.log_text())
    try:
        r = http.post("/v1/containers", params={"run": "true"}, json={
            "image": TEST_IMAGE, "command": ["sleep", "600"],
            "nets": [{"port": port["id"]}]})
        assert r.status_code == 202, r.text
        uuid = r.json()["uuid"]
        body = settle(http, uuid, ("Running", "Error", "Stopped"), 120)
        text = berth_on_neutron.log_text()[mark:]
        print(f"\n[berth] a port that never becomes ACTIVE: the container: "
              f"{body['status']} ({body['status_reason']})")
        assert body["status"] == "Error"
        assert "never became ACTIVE" in body["status_reason"]
        assert "504" in text
        http.delete(f"/v1/containers/{uuid}", params={"force": "true"})
    finally:
        http.close()
        for p in raw.get("/ports", params={"network_id": net["id"]}).json()["ports"]:
            if not p["device_owner"].startswith("network:"):
                raw.delete(f"/ports/{p['id']}")
        raw.delete(f"/networks/{net['id']}")
        raw.close()
