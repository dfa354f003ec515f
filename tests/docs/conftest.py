"""Fixtures of the guide's tests. A service a page needs that does not answer FAILS the
test with the command that starts it: the guide's tests never skip for a missing
service. The one opt-in is networking.md's fleet (``BERTH_FLEET_TESTS=1``, as the
fleet's other tests: it starts a fleet of namespaced nodes)."""

from __future__ import annotations

import docker
import pytest
from support.berth_proc import TEST_IMAGE


@pytest.fixture
def docker_engine() -> None:
    """The machine's Docker engine answers and holds the test image."""
    try:
        client = docker.from_env()
    except docker.errors.DockerException as err:
        pytest.fail(f"Docker does not answer ({err}): start it with "
                    f"`bash .ci/ci-services.sh start docker`")
    try:
        client.ping()
        client.images.get(TEST_IMAGE)
    except docker.errors.ImageNotFound:
        pytest.fail(f"the test image {TEST_IMAGE} is missing: make it with "
                    f"`bash .ci/make-test-images.sh --push 127.0.0.1:5000`")
    except docker.errors.DockerException as err:
        pytest.fail(f"Docker does not answer ({err}): start it with "
                    f"`bash .ci/ci-services.sh start docker`")
    finally:
        client.close()
