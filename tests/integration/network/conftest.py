"""A real OpenStack Neutron for the cni network driver (``.ci/neutron-ci.sh``: Neutron 29
from PyPI, ML2/OVS on Open vSwitch's userspace datapath, MariaDB, noauth).

``neutron`` (session): Neutron answers at ``NEUTRON_URL`` with its OVS agent up; when it
does not, ``ci-services.sh start rabbitmq`` then ``neutron-ci.sh start`` run once (and
``neutron-ci.sh stop`` at the end). A start that fails FAILS the test, never a skip.
``neutron_raw``: an httpx client speaking to Neutron as its admin (noauth, no project
header), to set up networks and read back what berth did.
``berth_neutron``: a ``berth serve`` with ``[network]driver = cni`` whose host is
Neutron's (the ports it binds must be the OVS agent's to become ACTIVE).
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import time
import uuid as uuidlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import docker
import httpx
import pytest
from support.berth_proc import BerthProcess


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    """They need the Neutron that ``scripts/test.sh`` starts. ``BERTH_NEUTRON_TESTS``:
    ``1`` (the test command's default, so CI's) runs them all; ``short`` only those
    marked ``neutron_short``, the core stories (about 50 s instead of 3 minutes);
    anything else skips them (docs/testing.md)."""
    mode = os.environ.get("BERTH_NEUTRON_TESTS")
    if mode == "1":
        return
    if mode == "short":
        skip = pytest.mark.skip(reason="the full Neutron suite: BERTH_NEUTRON_TESTS=1 "
                                       "scripts/test.sh tests/integration/network")
    else:
        skip = pytest.mark.skip(reason="Neutron integration tests: BERTH_NEUTRON_TESTS=1 "
                                       "scripts/test.sh starts Neutron and runs them "
                                       "(docs/testing.md)")
    here = str(Path(__file__).parent)
    for item in items:
        if str(item.fspath).startswith(here) and not (
                mode == "short" and item.get_closest_marker("neutron_short")):
            item.add_marker(skip)


ROOT = Path(__file__).resolve().parents[3]
CI = ROOT / ".ci"
NEUTRON_URL = os.environ.get("BERTH_NEUTRON_URL", "http://127.0.0.1:9696")
NEUTRON_HOST = os.environ.get("BERTH_NEUTRON_HOST", "berth-neutron-ci")
#: The project of the berth user the tests act as (noauth token "alice:<project>").
PROJECT = f"5a1e{os.getpid():028x}"   # the same however often this module is imported
USER_TOKEN = f"alice:{PROJECT}"


def script_status(script: str) -> str:
    """``.ci/SCRIPT status``: "NAME: up ...", "NAME: starting ..." or "NAME: down"."""
    proc = subprocess.run(["bash", str(CI / script), "status"], check=False,
                          capture_output=True, text=True, timeout=60)
    return proc.stdout.strip()


def script_start(script: str, what: str, timeout: float) -> None:
    """``.ci/SCRIPT start``; FAILS the test (never a skip) when it does not end up."""
    t0 = time.monotonic()
    proc = subprocess.run(["bash", str(CI / script), "start"], check=False,
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0 or ": up" not in script_status(script):
        pytest.fail(f"could not start {what} with `{CI / script} start` "
                    f"(exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    print(f"{what} up in {time.monotonic() - t0:.1f} s")


def script_stop(script: str, timeout: float) -> None:
    subprocess.run(["bash", str(CI / script), "stop"], check=False, capture_output=True,
                   timeout=timeout)


@pytest.fixture(scope="session")
def neutron() -> Iterator[str]:
    started = False
    state = script_status("neutron-ci.sh")
    if ": up" not in state:
        # "starting": its processes run (started by the test command) and only answer
        # late; start then waits for them, and they stay for the other tests
        subprocess.run(["bash", str(CI / "ci-services.sh"), "start", "rabbitmq"], check=False,
                       capture_output=True, timeout=900)
        script_start("neutron-ci.sh", "Neutron", timeout=1800)
        started = ": down" in state
    yield NEUTRON_URL
    if started:
        script_stop("neutron-ci.sh", timeout=300)


@pytest.fixture(scope="session")
def neutron_raw(neutron: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=f"{neutron}/v2.0", timeout=60) as client:
        yield client


def berth_conf(neutron_url: str, timeout: int = 60, driver: str = "cni") -> str:
    """A berth on Neutron: ``driver`` cni (berth plugs the ports) or kuryr (Docker
    plugs them through kuryr-libnetwork)."""
    return (f"[network]\ndriver = {driver}\n"
            f"[neutron]\nendpoint_override = {neutron_url}\n"
            f"[cni_daemon]\nvif_active_timeout = {timeout}\n")


def remove_leftovers(host: str = NEUTRON_HOST) -> None:
    """What a failed test leaves once its berth is stopped: the host's Docker
    containers, then the OVS ports whose veth went with them."""
    client = docker.from_env()
    try:
        for c in client.containers.list(all=True, ignore_removed=True,
                filters={"label": f"berth.host={host}"}):
            c.remove(force=True)
    finally:
        client.close()
    out = subprocess.run(["ovs-vsctl", "list-ports", "br-int"], check=False,
                         capture_output=True, text=True).stdout
    for name in out.split():
        if name.startswith("tap") and not Path(f"/sys/class/net/{name}").exists():
            subprocess.run(["ovs-vsctl", "--if-exists", "del-port", "br-int", name],
                           check=False, capture_output=True)


#: Held while a module's berths run with the Neutron agent's host name: a berth sweeps
#: the ports bound to its host that its rows do not record, at start-up, so two of them
#: (of two test runs on one machine) would delete each other's ports.
HOST_LOCK = Path(os.environ.get("BERTH_CI_STATE", "/var/tmp/berth-ci")) / "neutron-host.lock"


@pytest.fixture(scope="module", autouse=True)
def neutron_host_lock() -> Iterator[None]:
    """Each module of these tests has the Neutron host to itself (its berths, their
    containers and ports), against another test run on the same machine; within one
    run the test command keeps these tests on one worker (tests/conftest.py)."""
    if os.environ.get("BERTH_NEUTRON_TESTS") not in ("1", "short"):
        yield                       # skipped: nothing of Neutron's is used
        return
    HOST_LOCK.parent.mkdir(parents=True, exist_ok=True)
    with open(HOST_LOCK, "a") as held:
        deadline = time.monotonic() + 1200
        while True:
            try:
                fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    pytest.fail(f"another test run has held {HOST_LOCK} for 20 minutes "
                                f"(its berths use the Neutron host {NEUTRON_HOST})")
                time.sleep(1)
        try:
            yield
        finally:
            fcntl.flock(held, fcntl.LOCK_UN)


@contextmanager
def berth_on_neutron(conf: str) -> Iterator[BerthProcess]:
    """A ``berth serve`` with ``conf`` and the Neutron agent's host name, stopped after."""
    proc = BerthProcess(conf, host=NEUTRON_HOST)
    proc.start(timeout=180)
    try:
        yield proc
    finally:
        proc.stop()


@pytest.fixture(scope="module")
def berth_neutron(neutron: str) -> Iterator[BerthProcess]:
    with berth_on_neutron(berth_conf(neutron)) as proc:
        yield proc
    remove_leftovers()


@pytest.fixture
def http(berth_neutron: BerthProcess) -> Iterator[httpx.Client]:
    with berth_neutron.http(token=USER_TOKEN) as client:
        yield client


class Networks:
    """Neutron networks ``PREFIX-<hex>`` (with a subnet each) of the test project,
    removed at the end with every port left on them, then the security groups berth
    made in the project (a group in use is not deleted: the ports go first)."""

    PREFIX = "it"
    #: the names of the groups made for the tests' containers
    GROUPS: tuple[str, ...] = ("berth-",)

    def __init__(self, raw: httpx.Client) -> None:
        self.raw, self.ids = raw, []  # type: tuple[httpx.Client, list[str]]

    def make(self, cidr: str, v6: str | None = None, project: str = PROJECT,
             gateway: bool = True) -> dict[str, Any]:
        net = self.raw.post("/networks", json={"network": {
            "name": f"{self.PREFIX}-{uuidlib.uuid4().hex[:6]}", "project_id": project}})
        assert net.status_code == 201, net.text
        network = dict(net.json()["network"])
        self.ids.append(network["id"])
        for version, block in ((4, cidr), (6, v6)):
            if block:
                subnet: dict[str, Any] = {
                    "network_id": network["id"], "ip_version": version, "cidr": block,
                    "project_id": project, "name": f"{self.PREFIX}-{network['id'][:8]}"}
                if not gateway:
                    subnet["gateway_ip"] = None
                sub = self.raw.post("/subnets", json={"subnet": subnet})
                assert sub.status_code == 201, sub.text
        return network

    def cleanup(self) -> None:
        for net_id in self.ids:
            for port in self.raw.get("/ports", params={"network_id": net_id}).json()["ports"]:
                if not port["device_owner"].startswith("network:"):
                    self.raw.delete(f"/ports/{port['id']}")
            self.raw.delete(f"/networks/{net_id}")
        for group in self.raw.get("/security-groups").json()["security_groups"]:
            if group["name"].startswith(self.GROUPS) and group["project_id"] == PROJECT:
                self.raw.delete(f"/security-groups/{group['id']}")


@pytest.fixture
def networks(neutron_raw: httpx.Client) -> Iterator[Networks]:
    made = Networks(neutron_raw)
    yield made
    made.cleanup()


@pytest.fixture
def ports_of(neutron_raw: httpx.Client) -> Callable[[str], list[dict[str, Any]]]:
    def ports(device_id: str) -> list[dict[str, Any]]:
        body = neutron_raw.get("/ports", params={"device_id": device_id}).json()
        return list(body["ports"])
    return ports
