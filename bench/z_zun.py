"""Z1, Z3: berth against the real Zun 18 (``.ci/zun-ci.sh start``; its ``env`` exported),
in the same run, both on the shared Neutron with their ``cni`` drivers, each on a Docker
engine 20.10 of its own kind (berth the host's, Zun its node engine ``zun``).

* Z1: create→Running, from the POST until the API shows Running: 20 sequential creates
  (each deleted before the next, outside the timing) and a burst of 20 POSTs at once
  (one poller reads the list every 0.1 s and notes when each container is first Running).
  Median and p90 of each; the row's ratio is berth/Zun of the sequential medians.
  Goal: ratio ≤ 0.5.
* Z3: a running container killed in its engine behind the service's back; how long until
  the list shows it Stopped (polled every 0.05 s), 5 times on each side. Zun notices only
  in its periodic sync (every 60 s). The row's ratio is Zun/berth of the medians; the
  detail keeps every figure, the creates lost and the 1-minute load average before,
  between and after. Goal: ≥ 100.

Zun's image is ``BERTH_ZUN_IMAGE`` with ``image_pull_policy: ifnotpresent`` (present after
the first create), berth's the same test image from the host's engine.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import docker
import httpx

from bench.common import COMMAND, IMAGE, BerthProcess, Result, median, percentile, ratio, wait

NEUTRON = os.environ.get("BERTH_NEUTRON_URL", "http://127.0.0.1:9696")
HOST = os.environ.get("BERTH_NEUTRON_HOST", "berth-neutron-ci")
ZUN_URL = os.environ.get("BERTH_ZUN_URL", "")
ZUN_IMAGE = os.environ.get("BERTH_ZUN_IMAGE", "127.0.0.1:5000/berth-test/busybox:latest")
ZUN_NETWORK = os.environ.get("BERTH_ZUN_NETWORK", "zun-ci-net")
ZUN_DOCKER = os.environ.get("BERTH_ZUN_DOCKER_HOST", "unix:///run/berth-node-zun.sock")
KEYSTONE = os.environ.get("BERTH_ZUN_KEYSTONE_URL", "http://127.0.0.1:5001/v3")
VERSION = {"OpenStack-API-Version": "container 1.40"}


class Service:
    """One side: its API client, the body of a create, and its Docker engine."""

    def __init__(self, name: str, http: httpx.Client, body: dict, engine: str) -> None:
        self.name, self.http, self.body = name, http, body
        self.engine = docker.DockerClient(base_url=engine)
        # Zun answers 204 with a body, which breaks a kept-alive connection
        self.close = {"Connection": "close"} if name == "zun" else {}

    def create(self) -> str:
        r = self.http.post("/v1/containers", params={"run": "true"}, json=self.body)
        r.raise_for_status()
        return r.json()["uuid"]

    def status(self, ident: str) -> str:
        return self.http.get(f"/v1/containers/{ident}").json()["status"]

    def statuses(self) -> dict[str, str]:
        body = self.http.get("/v1/containers").json()
        return {c["uuid"]: c["status"] for c in body["containers"]}

    def delete(self, ident: str) -> None:
        """Force-delete, again while the service refuses (Zun does during a task)."""
        wait(lambda: self.http.delete(f"/v1/containers/{ident}", params={"force": "true"},
                                      headers=self.close).status_code in (202, 204, 404),
             300, 0.5)
        wait(lambda: self.http.get(f"/v1/containers/{ident}").status_code == 404, 180, 0.2)

    def run_once(self) -> None:
        """A create waited to Running, then deleted: the warm-up."""
        ident = self.create()
        wait(lambda: self.status(ident) in ("Running", "Error"), 300, 0.1)
        self.delete(ident)


def _zun() -> Service:
    auth = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "name": "admin", "domain": {"id": "default"}, "password": "admin"}}},
        "scope": {"project": {"name": "admin", "domain": {"id": "default"}}}}}
    token = httpx.post(f"{KEYSTONE}/auth/tokens", json=auth, timeout=30).headers["X-Subject-Token"]
    net = httpx.get(f"{NEUTRON}/v2.0/networks", params={"name": ZUN_NETWORK},
                    timeout=30).json()["networks"][0]["id"]
    http = httpx.Client(base_url=ZUN_URL, timeout=120, headers={"X-Auth-Token": token, **VERSION})
    return Service("zun", http, {"image": ZUN_IMAGE, "command": COMMAND, "nets": [
        {"network": net}], "image_pull_policy": "ifnotpresent"}, ZUN_DOCKER)


class _Berth:
    """A berth with the cni driver on Neutron, and a network of its own there."""

    def __init__(self) -> None:
        self.raw = httpx.Client(base_url=f"{NEUTRON}/v2.0", timeout=60)
        self.project = uuid.uuid4().hex
        self.net = self.raw.post("/networks", json={"network": {
            "name": "bench-z", "project_id": self.project}}).json()["network"]
        self.raw.post("/subnets", json={"subnet": {
            "network_id": self.net["id"], "ip_version": 4, "cidr": "10.231.210.0/24",
            "project_id": self.project}})
        self.proc = BerthProcess("[network]\ndriver = cni\n"
                                 f"[neutron]\nendpoint_override = {NEUTRON}\n"
                                 "[quota]\ncontainers = -1\nmemory = -1\ncpu = -1\ndisk = -1\n"
                                 "[compute]\ncpu_allocation_ratio = 64\n",
                                 host=HOST).start(timeout=180)
        http = httpx.Client(base_url=self.proc.url, timeout=120, headers={
            "X-Auth-Token": f"admin:{self.project}", **VERSION})
        self.side = Service("berth", http, {"image": IMAGE, "command": COMMAND,
                                            "nets": [{"network": self.net["id"]}]},
                            os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock"))

    def close(self) -> None:
        self.proc.stop()
        for port in self.raw.get("/ports", params={"network_id": self.net["id"]}).json()["ports"]:
            if not port["device_owner"].startswith("network:"):
                self.raw.delete(f"/ports/{port['id']}")
        self.raw.delete(f"/networks/{self.net['id']}")
        self.raw.close()


def _sequential(side: Service, runs: int) -> tuple[list[float], list[str]]:
    times, lost = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        ident = side.create()
        status = wait(lambda i=ident: (s := side.status(i)) in ("Running", "Error", "Stopped")
                      and s,
                      300, 0.05)
        took = time.perf_counter() - t0
        if status == "Running":
            times.append(took)
        else:
            lost.append(ident)
        side.delete(ident)
    return times, lost


def _burst(side: Service, runs: int) -> tuple[list[float], list[str]]:
    def create() -> str | None:
        try:
            return side.create()
        except httpx.HTTPStatusError as err:      # refused: counted as lost, not timed
            failed.append(f"{err.response.status_code} {err.response.text[:200]}")
            return None

    failed: list[str] = []
    t0 = time.perf_counter()
    with ThreadPoolExecutor(runs) as pool:
        idents = [i for i in pool.map(lambda _: create(), range(runs)) if i]
    first: dict[str, float] = {}
    done = threading.Event()
    deadline = time.monotonic() + 600
    while not done.is_set() and time.monotonic() < deadline:
        now = time.perf_counter() - t0
        statuses = side.statuses()
        for ident in idents:
            # Stopped: Zun's "failed to configure network" under a burst (lost, not timed)
            if ident not in first and statuses.get(ident) in ("Running", "Error", "Stopped"):
                first[ident] = now if statuses[ident] == "Running" else -1.0
        if len(first) == len(idents):
            done.set()
        time.sleep(0.1)
    for ident in idents:
        side.delete(ident)
    return ([t for t in first.values() if t >= 0],
            [i for i in idents if first.get(i, -1) < 0] + failed)


def _not_run(bid: str, goal: str) -> Result:
    return Result(bid, "NOT RUN: BERTH_ZUN_URL is not set (.ci/zun-ci.sh start, env)", None,
                  None, "s", goal, None)


def z1(_berth: object, runs: int = 20) -> Result:
    if not ZUN_URL:
        return _not_run("Z1", "ratio ≤ 0.5")
    zun, ours = _zun(), _Berth()
    detail: dict[str, object] = {}
    try:
        for side in (zun, ours.side):       # one warm-up each (image, agent, first port)
            side.run_once()
        for side in (ours.side, zun):
            seq, lost = _sequential(side, runs)
            burst, blost = _burst(side, runs)
            detail[side.name] = {
                "sequential_median": median(seq), "sequential_p90": percentile(seq, 90),
                "burst_median": median(burst), "burst_p90": percentile(burst, 90),
                "sequential_all": seq, "burst_all": burst, "lost": lost + blost}
    finally:
        ours.close()
    b, z = detail["berth"]["sequential_median"], detail["zun"]["sequential_median"]
    r = ratio(b, z)
    return Result("Z1", f"create→Running on Neutron (cni), median of {runs} sequential, "
                        "vs Zun 18", b, z, "s", "ratio ≤ 0.5", r is not None and r <= 0.5, r,
                  detail)


def _kill_latency(side: Service, runs: int) -> tuple[list[float], list[str]]:
    """``runs`` kills timed; a create that does not reach Running (Zun's "failed to
    configure network" under load) is counted lost and another is made, up to twice
    ``runs`` creates in all."""
    lat: list[float] = []
    lost: list[str] = []
    for _ in range(2 * runs):
        if len(lat) == runs:
            break
        ident = side.create()
        status = wait(lambda i=ident: (s := side.status(i)) in ("Running", "Error", "Stopped")
                      and s, 300, 0.1)
        if status != "Running":
            lost.append(f"{ident}: {status}")
            side.delete(ident)
            continue
        t0 = time.perf_counter()
        side.engine.containers.get(f"zun-{ident}").kill()
        # the list, as a dashboard reads it (Zun's GET of one container asks zun-compute,
        # which inspects Docker on every such GET)
        wait(lambda i=ident: side.statuses().get(i) == "Stopped", 300, 0.05)
        lat.append(time.perf_counter() - t0)
        side.delete(ident)
    return lat, lost


def z3(_berth: object, runs: int = 5) -> Result:
    if not ZUN_URL:
        return _not_run("Z3", "Zun/berth ≥ 100")
    zun, ours = _zun(), _Berth()
    load = [os.getloadavg()[0]]
    try:
        b_all, b_lost = _kill_latency(ours.side, runs)
        load.append(os.getloadavg()[0])
        z_all, z_lost = _kill_latency(zun, runs)
        load.append(os.getloadavg()[0])
    finally:
        ours.close()
    b = median(b_all) if b_all else None
    z = median(z_all) if z_all else None
    r = ratio(z, b)
    return Result("Z3", f"docker kill → the list shows Stopped, median of {runs}, vs Zun 18",
                  b, z, "s", "Zun/berth ≥ 100", r is not None and r >= 100, r,
                  {"berth_all": b_all, "zun_all": z_all, "lost": b_lost + z_lost,
                   "load_average_1m": load})
