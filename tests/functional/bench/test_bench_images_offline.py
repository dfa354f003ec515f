"""The benchmarks' baseline start, ``bench.common.run_detached``, on the real engine:
an image the engine lacks is an ImageNotFound, never a pull. The image is named on
127.0.0.1 port 1, so that even a pull would reach nothing outside the machine (and
fail otherwise than with ImageNotFound)."""

from __future__ import annotations

import docker
import pytest

from bench import common

ABSENT = "127.0.0.1:1/berth-bench/absent:never"


def test_run_detached_refuses_an_absent_image_without_pulling_it(docker_url: str) -> None:
    client = docker.DockerClient(base_url=docker_url, version="auto")
    try:
        with pytest.raises(docker.errors.ImageNotFound):
            common.run_detached(client, ABSENT, ["true"], name=common.name("offline"))
        with pytest.raises(common.MissingImage, match="absent:never"):
            common.require_images(client, (ABSENT,))
        common.require_images(client)          # the test image is there: no error
    finally:
        client.close()
