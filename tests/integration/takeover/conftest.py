"""``zun_db``: a Zun 18 database of the test's own (``support.zun_database``);
``engine``: the Docker client and the names of the containers a test made as Zun
would have (removed after it)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import docker
import pytest
from support.zun_database import zun_database


@pytest.fixture
def engine() -> Iterator[tuple[docker.DockerClient, list[str]]]:
    client = docker.DockerClient(base_url="unix:///var/run/docker.sock")
    made: list[str] = []
    yield client, made
    for name in made:
        try:
            client.containers.get(name).remove(force=True)
        except docker.errors.NotFound:
            pass
    client.close()


@pytest.fixture
def zun_db() -> Iterator[str]:
    with zun_database() as name:
        yield name


#: The takeover's longer tests (PostgreSQL, SIGKILL, adoption on Docker, each refusal):
#: about 6 minutes on a busy machine, so outside CI's default run.
#: `BERTH_TAKEOVER_TESTS=1 pytest tests/integration/takeover` runs them all.
full_only = pytest.mark.skipif(
    os.environ.get("BERTH_TAKEOVER_TESTS") != "1",
    reason="opt-in: BERTH_TAKEOVER_TESTS=1 runs the takeover's full suite")
