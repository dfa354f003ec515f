"""Functional tests drive the real Docker engine.

They are skipped, not failed, when the engine's socket does not answer (a developer
machine without Docker); anything else that is missing (the local registry, the test
image) makes them fail. ``BERTH_TEST_DOCKER_URL`` overrides the engine's address.
"""

from __future__ import annotations

import os

import docker
import pytest

DOCKER_URL = os.environ.get("BERTH_TEST_DOCKER_URL", "unix:///var/run/docker.sock")


def _docker_problem(url: str) -> str | None:
    """Why the engine at ``url`` does not answer a ping, or None when it does."""
    try:
        client = docker.APIClient(base_url=url, version="auto", timeout=5)
    except Exception as exc:  # noqa: BLE001 - any failure means "no engine here"
        return str(exc)
    try:
        client.ping()
    except Exception as exc:  # noqa: BLE001
        return str(exc)
    finally:
        client.close()
    return None


@pytest.fixture(scope="session")
def docker_url() -> str:
    """The engine's address; skips the requesting test when the engine does not answer."""
    problem = _docker_problem(DOCKER_URL)
    if problem is not None:
        pytest.skip(f"Docker engine at {DOCKER_URL} does not answer: {problem}")
    return DOCKER_URL


@pytest.fixture(autouse=True)
def _requires_docker(docker_url: str) -> None:
    """Every functional test needs the engine."""
