"""The real kuryr-libnetwork 18 (``.ci/kuryr-ci.sh``) as the Docker network plugin of
the host's engine, on the project's Neutron (``.ci/neutron-ci.sh``, shared: never
stopped or restarted here).

Opt-in: ``BERTH_KURYR_TESTS=1`` (with ``BERTH_NEUTRON_TESTS=1``, which the Neutron
tests above need) runs them; they take about a minute and a half on the loaded test
machine (docs/testing.md). ``kuryr`` (session): kuryr-server answers; when it does not,
``kuryr-ci.sh start`` runs once (and ``kuryr-ci.sh stop`` at the end). A start that
fails FAILS the test. ``berth_kuryr``: a ``berth serve`` with ``[network]driver =
kuryr`` whose host is Neutron's (kuryr binds ports to that host name too).
Everything made in Neutron is named ``kuryr-...`` and deleted after each test.

Not at the same time as the Neutron suite above: both run berths of the host
``berth-neutron-ci`` (kuryr's and Neutron's agent's host name), and a berth starting up
takes the other's ports on that host for orphans (and its leftovers cleanup removes
every container of that host).
"""

from __future__ import annotations

import os
import subprocess
import time
import uuid as uuidlib
from collections.abc import Iterator
from typing import Any

import docker
import httpx
import pytest
from integration.network.conftest import CI, NEUTRON_HOST, PROJECT, USER_TOKEN
from support.berth_proc import BerthProcess


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    if os.environ.get("BERTH_KURYR_TESTS") == "1":
        return
    skip = pytest.mark.skip(reason="kuryr-libnetwork tests: BERTH_NEUTRON_TESTS=1 "
                                   "BERTH_KURYR_TESTS=1 (docs/testing.md)")
    here = os.path.dirname(__file__)
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(skip)


def _status() -> str:
    return subprocess.run(["bash", str(CI / "kuryr-ci.sh"), "status"], check=False,
                          capture_output=True, text=True, timeout=60).stdout.strip()


@pytest.fixture(scope="session")
def kuryr(neutron: str) -> Iterator[str]:
    started = False
    if ": up" not in _status():
        t0 = time.monotonic()
        proc = subprocess.run(["bash", str(CI / "kuryr-ci.sh"), "start"], check=False,
                              capture_output=True, text=True, timeout=900)
        if proc.returncode != 0 or ": up" not in _status():
            pytest.fail(f"could not start kuryr-libnetwork with `{CI / 'kuryr-ci.sh'} start` "
                        f"(exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        started = True
        print(f"kuryr-libnetwork started in {time.monotonic() - t0:.1f} s")
    yield neutron
    if started:
        subprocess.run(["bash", str(CI / "kuryr-ci.sh"), "stop"], check=False,
                       capture_output=True, timeout=120)


def berth_conf(neutron_url: str, timeout: int = 60) -> str:
    return (f"[network]\ndriver = kuryr\n"
            f"[neutron]\nendpoint_override = {neutron_url}\n"
            f"[cni_daemon]\nvif_active_timeout = {timeout}\n")


def remove_leftovers(neutron_ids: list[str]) -> None:
    """What a failed test leaves: the Docker containers on its networks (only those:
    the Neutron suite's berths share the host name), then the Docker networks."""
    client = docker.from_env()
    try:
        for net_id in neutron_ids:
            for c in client.containers.list(all=True, ignore_removed=True,
                                             filters={"network": net_id}):
                c.remove(force=True)
            for net in client.networks.list(names=[net_id]):
                net.remove()
    finally:
        client.close()


@pytest.fixture(scope="module")
def berth_kuryr(kuryr: str) -> Iterator[BerthProcess]:
    proc = BerthProcess(berth_conf(kuryr), host=NEUTRON_HOST)
    proc.start(timeout=180)
    yield proc
    proc.stop()


@pytest.fixture
def http(berth_kuryr: BerthProcess) -> Iterator[httpx.Client]:
    with berth_kuryr.http(token=USER_TOKEN) as client:
        yield client


class KuryrNetworks:
    """Neutron networks ``kuryr-<hex>`` (a subnet each) of the test project; removed at
    the end with their Docker networks, ports and the groups berth made."""

    def __init__(self, raw: httpx.Client) -> None:
        self.raw, self.ids = raw, []  # type: tuple[httpx.Client, list[str]]

    def make(self, cidr: str, gateway: bool = True) -> dict[str, Any]:
        net = self.raw.post("/networks", json={"network": {
            "name": f"kuryr-{uuidlib.uuid4().hex[:6]}", "project_id": PROJECT}})
        assert net.status_code == 201, net.text
        network = dict(net.json()["network"])
        self.ids.append(network["id"])
        subnet: dict[str, Any] = {"network_id": network["id"], "ip_version": 4,
                                  "cidr": cidr, "project_id": PROJECT,
                                  "name": f"kuryr-{network['id'][:8]}"}
        if not gateway:
            subnet["gateway_ip"] = None
        sub = self.raw.post("/subnets", json={"subnet": subnet})
        assert sub.status_code == 201, sub.text
        return network

    def cleanup(self) -> None:
        remove_leftovers(self.ids)
        for net_id in self.ids:      # the ports first: a group in use is not deleted
            for port in self.raw.get("/ports", params={"network_id": net_id}).json()["ports"]:
                if not port["device_owner"].startswith("network:"):
                    self.raw.delete(f"/ports/{port['id']}")
            self.raw.delete(f"/networks/{net_id}")
        for group in self.raw.get("/security-groups").json()["security_groups"]:
            if group["name"].startswith(("berth-", "kuryr-")) and \
                    group["project_id"] == PROJECT:
                self.raw.delete(f"/security-groups/{group['id']}")


@pytest.fixture
def networks(neutron_raw: httpx.Client) -> Iterator[KuryrNetworks]:
    made = KuryrNetworks(neutron_raw)
    yield made
    made.cleanup()
