"""A fleet of namespaced compute nodes with local networks spanning them
(``.ci/ci-services.sh fleet-start N``: a dockerd, berth-compute and berth-cni-daemon in
a network namespace per node, berth-api, PostgreSQL and RabbitMQ on the host).

Opt-in: starting the fleet takes about a minute and a half on the test machine, so
these tests run only with ``BERTH_FLEET_TESTS=1`` (they are skipped otherwise, saying
so). ``BERTH_FLEET_URL`` and ``BERTH_FLEET_HOSTS`` set: the fleet running there is
used (and left running); unset: the session starts a fleet of
``BERTH_FLEET_NODES`` (default 2) nodes and stops it at the end. A fleet that cannot
start FAILS the tests, with the script's output.
"""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / ".ci" / "ci-services.sh"
FLEET_SCRIPT = ROOT / ".ci" / "fleet-ci.sh"
IMAGE = "127.0.0.1:5000/berth-test/busybox:latest"
HEADERS = {"X-Auth-Token": "admin", "OpenStack-API-Version": "container 1.39"}


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    if os.environ.get("BERTH_FLEET_TESTS") == "1":
        return
    skip = pytest.mark.skip(reason="opt-in: BERTH_FLEET_TESTS=1 (starts a fleet of "
                                   "namespaced nodes, about 90 s)")
    for item in items:
        if "tests/integration/overlay" in str(item.fspath):
            item.add_marker(skip)


@dataclass
class Fleet:
    url: str
    hosts: list[str]
    http: httpx.Client
    tag: str

    def network(self, name: str) -> dict[str, Any]:
        got = self.http.post("/networks", json={"name": f"{self.tag}-{name}"})
        assert got.status_code in (200, 201, 202), got.text
        return got.json()

    def container(self, name: str, host: str, network: str, command: str,
                  **extra: Any) -> dict[str, Any]:
        body = {"name": f"{self.tag}-{name}", "image": IMAGE, "host": host,
                "command": ["sh", "-c", command], "nets": [{"network": network}],
                "image_pull_policy": "ifnotpresent", **extra}
        got = self.http.post("/containers", params={"run": "true"}, json=body)
        assert got.status_code == 202, got.text
        return self.wait(got.json()["uuid"], "Running")

    def wait(self, uuid_: str, status: str, timeout: float = 90) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            row = self.http.get(f"/containers/{uuid_}").json()
            if row["status"] == status:
                return row
            assert row["status"] != "Error", row
            assert time.monotonic() < deadline, row
            time.sleep(0.5)

    def execute(self, uuid_: str, command: str) -> tuple[int, str]:
        got = self.http.post(f"/containers/{uuid_}/execute",
                             params={"run": "true", "command": command}, timeout=60)
        assert got.status_code == 200, got.text
        return got.json()["exit_code"], got.json()["output"]

    def delete(self, uuid_: str) -> None:
        self.http.delete(f"/containers/{uuid_}", params={"force": "true"})
        deadline = time.monotonic() + 60
        while self.http.get(f"/containers/{uuid_}").status_code != 404:
            assert time.monotonic() < deadline, f"container {uuid_} not deleted"
            time.sleep(0.5)


def address(row: dict[str, Any]) -> str:
    (entries,) = row["addresses"].values()
    return str(entries[0]["addr"])


def node_run(host: str, *args: str) -> str:
    return subprocess.run(["ip", "netns", "exec", f"berth-{host}", *args], check=True,
                          capture_output=True, text=True, timeout=60).stdout


@pytest.fixture(scope="session")
def fleet() -> Iterator[Fleet]:
    url, hosts = os.environ.get("BERTH_FLEET_URL"), os.environ.get("BERTH_FLEET_HOSTS")
    started = False
    if not url or not hosts:
        count = os.environ.get("BERTH_FLEET_NODES", "2")
        t0 = time.monotonic()
        done = subprocess.run(["bash", str(SCRIPT), "fleet-start", count], capture_output=True,
                              text=True, timeout=600, check=False)
        if done.returncode != 0:
            subprocess.run(["bash", str(SCRIPT), "fleet-stop"], capture_output=True,
                           check=False, timeout=300)
            pytest.fail(f"fleet-start {count} failed:\n{done.stdout}\n{done.stderr[-3000:]}")
        print(f"fleet-start {count}: {time.monotonic() - t0:.1f} s")
        found = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
        url, hosts, started = found["BERTH_FLEET_URL"], found["BERTH_FLEET_HOSTS"], True
    client = httpx.Client(base_url=url, headers=HEADERS, timeout=60)
    try:
        yield Fleet(url, hosts.split(), client, uuid.uuid4().hex[:6])
    finally:
        client.close()
        if started:
            subprocess.run(["bash", str(SCRIPT), "fleet-stop"], capture_output=True,
                           check=False, timeout=300)
