"""Fixtures of the fleet tests: Docker engines of their own for the nodes.

``node_engines`` (session): three extra dockerd, each in its own network namespace
(``.ci/ci-services.sh node-start``, infra.md §1b), with the test image loaded (a node
cannot reach the registry on the host's loopback). Yields {name: api_url}; the
engines are stopped, and their containers removed, at the end of the session.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest
from support.berth_proc import TEST_IMAGE

SCRIPT = Path(__file__).resolve().parents[3] / ".ci" / "ci-services.sh"
NODES = ("fleet1", "fleet2", "fleet3")


def _script(*args: str) -> None:
    done = subprocess.run(["bash", str(SCRIPT), *args], check=False, capture_output=True,
                          text=True, timeout=300)
    if done.returncode != 0:
        pytest.fail(f"ci-services.sh {' '.join(args)} exited {done.returncode}:\n"
                    f"{done.stdout}\n{done.stderr}")


def engine_url(name: str) -> str:
    return f"unix:///run/berth-node-{name}.sock"


def remove_all_containers(url: str) -> None:
    client = docker.DockerClient(base_url=url)
    try:
        for c in client.containers.list(all=True, ignore_removed=True):
            c.remove(force=True)
    finally:
        client.close()


@pytest.fixture(scope="session")
def node_engines() -> Iterator[dict[str, str]]:
    _script("node-start", *NODES)
    try:
        image = subprocess.run(["docker", "save", TEST_IMAGE], check=True,
                               capture_output=True, timeout=120).stdout
        for name in NODES:
            subprocess.run(["docker", "-H", engine_url(name), "load"], input=image,
                           check=True, capture_output=True, timeout=120)
        yield {name: engine_url(name) for name in NODES}
    finally:
        for name in NODES:
            try:
                remove_all_containers(engine_url(name))
            except docker.errors.DockerException:
                pass        # the engine is not up: nothing of ours is left in it
        _script("node-stop", *NODES)
