"""P16C: create→Running of a container on a local network that spans nodes
(``[network]local_overlay = true``) against the same on a node-local network
(``local_overlay = false``), sequential and paired as P1.

Two fleets of two namespaced nodes run side by side (``.ci/fleet-ci.sh``: a dockerd,
berth-compute and berth-cni-daemon per node, berth-api, PostgreSQL and RabbitMQ on the
host), alike but for that one setting: ``p16cspan`` and ``p16clocal``. On each, one
network holds a resident container on each node before the measured runs, so neither
side pays for laying the network's bridge (and on the spanning side its VXLAN device),
and the spanning network really spans: the measured container is made on the first
node, and its address is claimed network-wide with the second node's member present.
What the overlay adds to a create is the CNI daemon's side: the address claimed in the
database instead of from the daemon's memory, and the tables written from the
database. Needs root; the fleets are started and stopped by the run (about a minute
and a half each on the test machine).
"""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench.common import Result, median, ratio, settle

ROOT = Path(__file__).resolve().parents[1]
FLEET_SCRIPT = ROOT / ".ci" / "fleet-ci.sh"
IMAGE = "127.0.0.1:5000/berth-test/busybox:latest"
HEADERS = {"X-Auth-Token": "admin", "OpenStack-API-Version": "container 1.39"}
COMMAND = ["sh", "-c", "trap 'exit 0' TERM; sleep 600 & wait"]
#: The fleets' names (fleet-ci.sh's BERTH_FLEET_NAME) and their local_overlay.
SIDES = {"span": ("p16cspan", "true"), "local": ("p16clocal", "false")}


@dataclass
class BenchFleet:
    name: str
    overlay: str
    url: str = ""
    hosts: list[str] = field(default_factory=list)
    http: httpx.Client | None = None

    def _script(self, *args: str) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ, BERTH_FLEET_NAME=self.name, BERTH_FLEET_OVERLAY=self.overlay)
        return subprocess.run(["bash", str(FLEET_SCRIPT), *args], env=env, text=True,
                              capture_output=True, timeout=900, check=False)

    def start(self) -> None:
        done = self._script("start", "2")
        if done.returncode != 0:
            self.stop()
            raise RuntimeError(f"fleet {self.name} did not start: {done.stderr[-2000:]}")
        found = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
        self.url, self.hosts = found["BERTH_FLEET_URL"], found["BERTH_FLEET_HOSTS"].split()
        self.http = httpx.Client(base_url=self.url, headers=HEADERS, timeout=120)

    def stop(self) -> None:
        if self.http is not None:
            self.http.close()
        self._script("stop")

    @property
    def api(self) -> httpx.Client:
        assert self.http is not None, f"fleet {self.name} is not started"
        return self.http

    def network(self, name: str) -> str:
        got = self.api.post("/networks", json={"name": name})
        got.raise_for_status()
        return str(got.json()["uuid"])

    def create(self, host: str, network: str) -> str:
        got = self.api.post("/containers", params={"run": "true"}, json={
            "name": f"p16c-{uuid.uuid4().hex[:8]}", "image": IMAGE, "command": COMMAND,
            "host": host, "nets": [{"network": network}], "image_pull_policy": "ifnotpresent"})
        got.raise_for_status()
        return str(got.json()["uuid"])

    def status(self, ident: str) -> str | None:
        got = self.api.get(f"/containers/{ident}")
        if got.status_code == 404:
            return None
        got.raise_for_status()
        row = got.json()
        if row["status"] == "Error":
            raise RuntimeError(f"{self.name}: container {ident} in Error: "
                               f"{row.get('status_reason')}")
        return str(row["status"])

    def run_until_running(self, host: str, network: str, timeout: float = 120) -> tuple[str, float]:
        """POST → the API shows Running, its GET polled every 10 ms (P1's way)."""
        t0 = time.perf_counter()
        ident = self.create(host, network)
        deadline = time.monotonic() + timeout
        while self.status(ident) != "Running":
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.name}: {ident} not Running in {timeout} s")
            time.sleep(0.01)
        return ident, time.perf_counter() - t0

    def delete(self, ident: str, timeout: float = 120) -> None:
        self.api.delete(f"/containers/{ident}", params={"force": "true"})
        deadline = time.monotonic() + timeout
        while self.status(ident) is not None:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.name}: {ident} not deleted in {timeout} s")
            time.sleep(0.1)


def p16c(_berth: object = None, runs: int = 15) -> Result:
    fleets = {side: BenchFleet(name, overlay) for side, (name, overlay) in SIDES.items()}
    times: dict[str, list[float]] = {side: [] for side in fleets}
    networks: dict[str, str] = {}
    try:
        for fleet in fleets.values():
            fleet.start()
        for side, fleet in fleets.items():
            networks[side] = fleet.network("p16c")
            for host in fleet.hosts:      # residents: the network laid on both nodes
                fleet.run_until_running(host, networks[side])

        def one(side: str) -> float:
            fleet = fleets[side]
            ident, took = fleet.run_until_running(fleet.hosts[0], networks[side])
            fleet.delete(ident)
            return took

        for _ in range(2):                # warm both paths
            for side in fleets:
                one(side)
        for i in range(runs):
            for side in ("span", "local") if i % 2 == 0 else ("local", "span"):
                settle(window=0.2)
                times[side].append(one(side))
        load = os.getloadavg()
    finally:
        for fleet in fleets.values():
            fleet.stop()
    span, local = median(times["span"]), median(times["local"])
    detail: dict[str, Any] = {"span_all": times["span"], "local_all": times["local"],
                              "runs": runs, "loadavg": [round(v, 1) for v in load]}
    return Result("P16C", f"create→Running on a spanning network, median of {runs}",
                  span, local, "s", "measured (no goal)", None, ratio(span, local), detail)
