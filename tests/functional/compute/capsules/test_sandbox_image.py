"""berth's sandbox image, made on the real engine from the host's static busybox: it
runs until told to stop, and stops at once on SIGTERM (a sandbox that ignored it would
hold every capsule delete for Docker's 10 s)."""

from __future__ import annotations

import time
import uuid

import docker
import pytest

from berth.compute.capsules import sandbox
from berth.runtime.docker.driver import DockerRuntime

pytestmark = pytest.mark.functional


def test_the_sandbox_image_runs_until_sigterm_and_stops_at_once(
        docker_url: str, docker_client: docker.DockerClient) -> None:
    ref = f"berth-test/sandbox-probe:{uuid.uuid4().hex[:8]}"
    runtime = DockerRuntime(docker_url)
    try:
        sandbox.make_default_image(runtime, ref)
        assert runtime.inspect_image(ref).cmd == sandbox.COMMAND
        container = docker_client.containers.run(ref, detach=True)
        try:
            time.sleep(0.5)
            container.reload()
            assert container.status == "running"
            began = time.monotonic()
            container.stop(timeout=10)
            assert time.monotonic() - began < 3
            container.reload()
            assert container.attrs["State"]["ExitCode"] == 0
        finally:
            container.remove(force=True)
    finally:
        docker_client.images.remove(ref, force=True)
        runtime.close()
