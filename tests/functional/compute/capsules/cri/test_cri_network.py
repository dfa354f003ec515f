"""A CRI capsule's pod on its berth network (issue 19): containerd runs the
conflist berth wrote, berth-cni asks berth's CNI daemon, the capsule and its members
show the address, and a delete or a failed create leaves no veth, no address and no
registry entry."""

from __future__ import annotations

import ipaddress
import json
import subprocess
import uuid as uuidlib
from pathlib import Path
from typing import Any

import pytest
from support.berth_proc import BerthProcess, wait_for
from support.containerd import CNI_CONF_DIR, left_in_containerd
from test_cri_capsules import LATEST, SERVE, create, delete, member, settled, template

from berth.cni.conflist import FILE_NAME
from berth.network.base import AttachmentKey
from berth.runtime.cri.client import CriRuntime

pytestmark = pytest.mark.functional


def registry(berth: BerthProcess) -> list[dict[str, Any]]:
    path = berth.dir / "state" / "cni" / "registry.json"
    if not path.exists():
        return []
    return list(json.loads(path.read_text()).get("attachments") or [])


def attachments_of(berth: BerthProcess, pod_id: str) -> list[dict[str, Any]]:
    return [a for a in registry(berth) if json.dumps(a).find(pod_id) >= 0]


def link_exists(name: str) -> bool:
    return subprocess.run(["ip", "link", "show", name], capture_output=True,
                          check=False).returncode == 0


def new_network(berth: BerthProcess) -> dict[str, Any]:
    with berth.http(version=LATEST) as http:
        resp = http.post("/v1/networks", json={"name": f"pods-{uuidlib.uuid4().hex[:8]}"})
    assert resp.status_code == 200, resp.text
    return dict(resp.json())


def test_containerd_runs_berths_conflist(cri_berth: BerthProcess) -> None:
    conf = json.loads((Path(CNI_CONF_DIR) / FILE_NAME).read_text())
    plugin, portmap = conf["plugins"]      # portmap: /usr/lib/cni has it (hostPort)
    assert portmap["type"] == "portmap" and portmap["capabilities"] == {"portMappings": True}
    assert plugin["type"] == "berth-cni"
    assert plugin["capabilities"] == {"io.kubernetes.cri.pod-annotations": True}
    assert plugin["delegate"]["type"] == "bridge"      # pods without berth networks
    assert Path("/usr/lib/cni/berth-cni").exists()


def test_the_pod_gets_its_address_on_the_projects_network_and_delete_frees_it(
        cri_berth: BerthProcess, pods: CriRuntime) -> None:
    uuid = create(cri_berth, template([member("web", ["sh", "-c", SERVE])]))
    shown = settled(cri_berth, uuid)
    assert shown["status"] == "Running", shown["status_reason"]
    ((network, (addr,)),) = shown["addresses"].items()   # the project's default network
    assert ipaddress.IPv4Address(addr["addr"]) in ipaddress.IPv4Network(addr["subnet_id"])
    assert addr["ifname"] == "eth0"
    for m in shown["containers"]:
        assert m["addresses"] == shown["addresses"], m
    (pod,) = [p for p in pods.pods(cri_berth.host) if p.uuid == uuid]
    assert addr["port"] == AttachmentKey(network, pod.id, "eth0").host_ifname
    assert link_exists(addr["port"])
    assert attachments_of(cri_berth, pod.id)
    # Another capsule of the project reaches it over their network's bridge.
    fetch = (f"until wget -qO- http://{addr['addr']}:8080/index.html; do sleep 0.2; done; "
             f'trap "exit 0" TERM; sleep 300 & wait')
    other = create(cri_berth, template([member("client", ["sh", "-c", fetch])]))
    client = settled(cri_berth, other)
    assert client["status"] == "Running", client["status_reason"]
    assert list(client["addresses"]) == [network]
    log = pods.log_root / other / f"{client['containers'][0]['uuid']}.log"
    wait_for(lambda: log.exists() and "served-by-web" in log.read_text(), 30,
             what="the other capsule to fetch the page from the pod's berth address")
    delete(cri_berth, other)

    delete(cri_berth, uuid)
    assert left_in_containerd(pods, cri_berth.host, uuid) == []
    assert not link_exists(addr["port"])
    assert attachments_of(cri_berth, pod.id) == []


def test_a_fixed_ip_asked_in_nets_is_the_pods(cri_berth: BerthProcess) -> None:
    network = new_network(cri_berth)
    subnet = ipaddress.IPv4Network(network["subnet"])
    fixed = str(list(subnet.hosts())[-2])
    with cri_berth.http(version=LATEST) as http:
        resp = http.post("/v1/capsules/", json={
            "template": template([member("web", ["sh", "-c", SERVE])]),
            "nets": [{"network": network["uuid"], "v4-fixed-ip": fixed}]})
    assert resp.status_code == 202, resp.text
    uuid = resp.json()["uuid"]
    shown = settled(cri_berth, uuid)
    assert shown["status"] == "Running", shown["status_reason"]
    assert [a["addr"] for a in shown["addresses"][network["uuid"]]] == [fixed]
    assert list(shown["addresses"]) == [network["uuid"]]     # that network only
    delete(cri_berth, uuid)
    with cri_berth.http(version=LATEST) as http:
        assert http.delete(f"/v1/networks/{network['uuid']}").status_code == 204


def test_a_failed_create_leaves_no_address_veth_or_registry_entry(
        cri_berth: BerthProcess, pods: CriRuntime) -> None:
    before = registry(cri_berth)
    uuid = create(cri_berth, template([member("web", ["sh", "-c", SERVE])],
                                      inits=[member("fails", ["sh", "-c", "exit 4"])]))
    shown = settled(cri_berth, uuid)
    assert shown["status"] == "Error"
    assert "fails" in shown["status_reason"]
    assert not shown["addresses"]
    assert all(not m["addresses"] for m in shown["containers"] + shown["init_containers"])
    assert left_in_containerd(pods, cri_berth.host, uuid) == []
    assert registry(cri_berth) == before
    delete(cri_berth, uuid)


def test_the_templates_annotations_are_the_pods_and_cannot_name_its_networks(
        cri_berth: BerthProcess, pods: CriRuntime) -> None:
    from cri_api.v1 import api_pb2 as cri

    tpl = template([member("web", ["sh", "-c", SERVE])])
    tpl["metadata"]["annotations"] = {"team": "blue", "berth.network/networks": "[]"}
    uuid = create(cri_berth, tpl)
    shown = settled(cri_berth, uuid)
    assert shown["status"] == "Running", shown["status_reason"]
    (pod,) = [p for p in pods.pods(cri_berth.host) if p.uuid == uuid]
    status = pods._runtime.PodSandboxStatus(cri.PodSandboxStatusRequest(pod_sandbox_id=pod.id))
    annotations = dict(status.status.annotations)
    assert annotations["team"] == "blue"
    assert json.loads(annotations["berth.network/networks"])[0]["ifname"] == "eth0"
    delete(cri_berth, uuid)
