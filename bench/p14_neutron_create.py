"""P14: create→Running of a container on a Neutron network (``[network]driver = cni``)
against the time Neutron needs to make a port ACTIVE.

Baseline, in the same run: the Zun-style flow by hand (infra.md §10,
``port-active-check.sh``): create a port bound to Neutron's host, a veth into a fresh
namespace with the port's MAC and address, ``ovs-vsctl add-port br-int`` with
``external_ids:iface-id``, then ``GET /v2.0/ports/<id>`` every 0.1 s until ACTIVE.
berth's time runs from the POST until the API shows Running (GET polled every 10 ms).
Each side deletes its port and namespace (berth: its container) before the next run;
the two sides alternate. Needs root and Neutron up (``.ci/neutron-ci.sh start``);
addresses from 10.231.200.0/24. Goal: ratio ≤ 1.10.
"""

from __future__ import annotations

import os
import subprocess
import time
import uuid

import httpx

from bench.common import (
    COMMAND,
    IMAGE,
    BerthProcess,
    Result,
    engine_conf,
    median,
    ratio,
    settle,
    wait,
)

NEUTRON = os.environ.get("BERTH_NEUTRON_URL", "http://127.0.0.1:9696")
HOST = os.environ.get("BERTH_NEUTRON_HOST", "berth-neutron-ci")


def p14(_berth: object, runs: int = 6, poll: float = 0.01) -> Result:
    raw = httpx.Client(base_url=f"{NEUTRON}/v2.0", timeout=60)
    project = uuid.uuid4().hex
    net = raw.post("/networks", json={"network": {"name": "bench-p13",
                                                  "project_id": project}}).json()["network"]
    raw.post("/subnets", json={"subnet": {"network_id": net["id"], "ip_version": 4,
                                          "cidr": "10.231.200.0/24", "project_id": project}})
    berth = BerthProcess(engine_conf() + "[network]\ndriver = cni\n"
                         f"[neutron]\nendpoint_override = {NEUTRON}\n"
                         "[quota]\ncontainers = -1\nmemory = -1\ncpu = -1\ndisk = -1\n",
                         host=HOST).start(timeout=180)
    http = httpx.Client(base_url=berth.url, timeout=120, headers={
        "X-Auth-Token": f"bench:{project}", "OpenStack-API-Version": "container 1.40"})
    times: dict[str, list[float]] = {"neutron": [], "berth": []}
    lost: list[str] = []
    try:
        for _ in range(1):                      # warm both paths (and the OVS agent)
            _neutron_side(raw, net["id"], project)
            _berth_side(http, net["id"], poll)
        for i in range(runs):
            for side in ("neutron", "berth") if i % 2 == 0 else ("berth", "neutron"):
                settle(window=0.2)
                if side == "neutron":
                    times[side].append(_neutron_side(raw, net["id"], project))
                    continue
                took = _berth_side(http, net["id"], poll)
                if isinstance(took, str):
                    lost.append(took)           # reported, not timed
                else:
                    times[side].append(took)
    finally:
        http.close()
        berth.stop()
        for port in raw.get("/ports", params={"network_id": net["id"]}).json()["ports"]:
            if not port["device_owner"].startswith("network:"):
                raw.delete(f"/ports/{port['id']}")
        raw.delete(f"/networks/{net['id']}")
        raw.close()
    if len(times["berth"]) < runs // 2:
        raise RuntimeError(f"too few berth runs reached Running: {lost}")
    b, n = median(times["berth"]), median(times["neutron"])
    r = ratio(b, n)
    return Result("P14", f"create→Running on a Neutron network vs port ACTIVE, median of "
                         f"{runs}", b, n, "s", "ratio ≤ 1.10", r is not None and r <= 1.10, r,
                  {"berth_all": times["berth"], "neutron_all": times["neutron"],
                   "berth_lost": lost})


def _neutron_side(raw: httpx.Client, net_id: str, project: str) -> float:
    ns = f"bench-p13-{uuid.uuid4().hex[:6]}"
    t0 = time.perf_counter()
    port = raw.post("/ports", json={"port": {
        "network_id": net_id, "binding:host_id": HOST, "device_id": ns,
        "device_owner": "compute:bench", "project_id": project}}).json()["port"]
    tap, peer = f"tap{port['id'][:11]}", f"t{port['id'][:11]}"
    ip = port["fixed_ips"][0]["ip_address"]
    run = ["ip", "netns", "exec", ns]
    for cmd in (["ip", "netns", "add", ns],
                ["ip", "link", "add", tap, "type", "veth", "peer", "name", peer, "netns", ns],
                run + ["ip", "link", "set", peer, "address", port["mac_address"], "name",
                       "eth0"],
                run + ["ip", "addr", "add", f"{ip}/24", "dev", "eth0"],
                run + ["ip", "link", "set", "eth0", "up"],
                ["ip", "link", "set", tap, "up"],
                ["ovs-vsctl", "add-port", "br-int", tap, "--", "set", "Interface", tap,
                 f"external_ids:iface-id={port['id']}", "external_ids:iface-status=active",
                 f"external_ids:attached-mac={port['mac_address']}",
                 f"external_ids:vm-uuid={ns}"]):
        subprocess.run(cmd, check=True, capture_output=True)
    wait(lambda: raw.get(f"/ports/{port['id']}").json()["port"]["status"] == "ACTIVE",
         120, 0.1)
    wall = time.perf_counter() - t0
    subprocess.run(["ovs-vsctl", "--if-exists", "del-port", "br-int", tap], check=True)
    subprocess.run(["ip", "netns", "del", ns], check=True)
    raw.delete(f"/ports/{port['id']}")
    return wall


def _berth_side(http: httpx.Client, net_id: str, poll: float) -> float | str:
    """Seconds to Running; the reason instead when the container went to Error (on a
    shared machine another session's cleanup may remove it)."""
    t0 = time.perf_counter()
    r = http.post("/v1/containers", params={"run": "true"}, json={
        "image": IMAGE, "command": COMMAND,
        "nets": [{"network": net_id}]})
    r.raise_for_status()
    uuid_ = r.json()["uuid"]

    def settled() -> dict[str, str] | None:
        body = http.get(f"/v1/containers/{uuid_}").json()
        return body if body["status"] in ("Running", "Error") else None
    body = wait(settled, 180, poll)
    wall = time.perf_counter() - t0
    # as admin, forced: a container in Error (see above) goes as well
    http.delete(f"/v1/containers/{uuid_}", params={"force": "true"},
                headers={"X-Auth-Token": "admin"})
    wait(lambda: http.get(f"/v1/containers/{uuid_}",
                          headers={"X-Auth-Token": "admin"}).status_code == 404, 120, 0.05)
    if body["status"] == "Error":
        return f"{uuid_}: {body['status_reason']}"
    return wall
