"""The reliability suite (issue 21): each scenario injects faults into a real berth on a
real Docker engine and ends with ``checker.problems``. CI runs the short version of
each scenario; ``BERTH_RELIABILITY_FULL=1`` runs the full one (see docs/testing.md).

The engine is a node engine in a network namespace of its own
(``ci-services.sh node-start``), so that a scenario may restart or kill it without
touching the host's dockerd that the rest of the suite uses."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import docker
import pytest
from support.berth_proc import TEST_IMAGE, BerthProcess, remove_local_networks, unmount_volumes

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / ".ci" / "ci-services.sh"
FULL = os.environ.get("BERTH_RELIABILITY_FULL") == "1"


def scale(short: int, full: int) -> int:
    """A scenario's size: ``short`` in CI, ``full`` with BERTH_RELIABILITY_FULL=1."""
    return full if FULL else short


class NodeEngine:
    """A dockerd of its own (``ci-services.sh node-start NAME``) that tests may stop,
    kill and start again."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.url = f"unix:///run/berth-node-{name}.sock"
        self.pidfile = Path(f"/run/berth-node-{name}.pid")

    def start(self) -> None:
        subprocess.run(["bash", str(SCRIPT), "node-start", self.name], check=True,
                       capture_output=True, timeout=300)

    def stop(self) -> None:
        subprocess.run(["bash", str(SCRIPT), "node-stop", self.name], check=False,
                       capture_output=True, timeout=300)

    def pid(self) -> int:
        return int(self.pidfile.read_text().strip())

    def client(self) -> docker.DockerClient:
        return docker.DockerClient(base_url=self.url, version="auto", timeout=60)


@pytest.fixture
def engine_client(node_engine: NodeEngine) -> Iterator[docker.DockerClient]:
    client = node_engine.client()
    yield client
    client.close()


@pytest.fixture(scope="session")
def node_engine() -> Iterator[NodeEngine]:
    # BERTH_RELIABILITY_NODE names another node engine, so that a full run can go on
    # beside a test command (whose short version uses "rel").
    engine = NodeEngine(os.environ.get("BERTH_RELIABILITY_NODE", "rel"))
    engine.start()
    host, node = docker.from_env(), engine.client()
    try:                                # the test image, from the host's engine
        node.images.load(b"".join(host.images.get(TEST_IMAGE).save(named=TEST_IMAGE)))
    finally:
        host.close()
    yield engine
    for c in node.containers.list(all=True, sparse=True):
        try:
            c.remove(force=True)
        except docker.errors.APIError as err:   # gone, or being removed (--rm)
            if err.status_code not in (404, 409):
                raise
    node.close()
    engine.stop()


@pytest.fixture
def berth_on(node_engine: NodeEngine) -> Iterator[Callable[[str], BerthProcess]]:
    """``berth_on(extra_conf)``: a started ``berth serve`` on the node engine, without
    quotas in its way; stopped afterwards."""
    made: list[BerthProcess] = []

    def make(extra_conf: str = "") -> BerthProcess:
        proc = BerthProcess(f"[compute]\ncpu_allocation_ratio = 64.0\n"
                            f"[docker]\napi_url = {node_engine.url}\n{extra_conf}").start()
        made.append(proc)
        with proc.http() as http:
            http.put("/v1/quotas/admin", json={"containers": -1, "cpu": -1, "memory": -1,
                                               "disk": -1}).raise_for_status()
        return proc

    yield make
    for proc in made:
        proc.stop()
        unmount_volumes(proc)
        # Killed berths (R1) leave their bridges behind: another berth's network on the
        # same default subnet would be routed to a dead bridge.
        remove_local_networks(proc)
