"""A real OpenStack Glance 33 for the glance image driver (``.ci/glance-ci.sh``: Glance
from PyPI behind the CI's Keystone, its file store, its MariaDB database glance_ci).

``glance`` (session): Glance answers at ``GLANCE_URL``. scripts/test.sh starts it
(``ci-services.sh start glance``) unless ``BERTH_GLANCE_TESTS=0``; when it is not up,
the tests are skipped saying how to start it (``BERTH_GLANCE_TESTS=1`` makes that a
failure instead: CI must not skip them silently).
``glance_raw``: an httpx client speaking to Glance as the CI's admin (Keystone token),
to put test images in and read back what berth did.
``busybox_tarball``: a ``docker save`` of the local test busybox under a tag of this
session's own (never pulled from outside), and that tag.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import docker
import httpx
import pytest

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / ".ci" / "ci-services.sh"
GLANCE_URL = os.environ.get("BERTH_GLANCE_URL", "http://127.0.0.1:9292")
KEYSTONE_URL = os.environ.get("BERTH_KEYSTONE_URL", "http://127.0.0.1:5001/v3")
SOURCE_IMAGE = "127.0.0.1:5000/berth-test/busybox:latest"

#: berth's own identity towards Glance (the CI's admin), as an operator writes it.
GLANCE_CLIENT_CONF = (
    f"[glance_client]\nauth_type = password\nauth_url = {KEYSTONE_URL}\nusername = admin\n"
    f"password = admin\nproject_name = admin\nuser_domain_id = default\n"
    f"project_domain_id = default\n")


def keystone_token() -> str:
    body = {"auth": {
        "identity": {"methods": ["password"], "password": {"user": {
            "name": "admin", "domain": {"id": "default"}, "password": "admin"}}},
        "scope": {"project": {"name": "admin", "domain": {"id": "default"}}}}}
    resp = httpx.post(f"{KEYSTONE_URL}/auth/tokens", json=body, timeout=30)
    resp.raise_for_status()
    return resp.headers["X-Subject-Token"]


@pytest.fixture(scope="session")
def glance() -> str:
    try:
        up = httpx.get(f"{GLANCE_URL}/versions", timeout=5).status_code < 400
    except httpx.HTTPError:
        up = False
    if not up:
        why = (f"Glance does not answer at {GLANCE_URL}: start it with "
               f"`bash {SCRIPT} start keystone glance` (scripts/test.sh does, unless "
               f"BERTH_GLANCE_TESTS=0)")
        if os.environ.get("BERTH_GLANCE_TESTS") == "1":
            pytest.fail(why)
        pytest.skip(why)
    return GLANCE_URL


@pytest.fixture(scope="session")
def glance_raw(glance: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=f"{glance}/v2", timeout=120,
                      headers={"X-Auth-Token": keystone_token()}) as client:
        yield client


@pytest.fixture(scope="session")
def busybox_tarball(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """(path of the tarball, the reference it holds)."""
    ref = f"glance-itest/busybox:{uuid.uuid4().hex[:8]}"
    client = docker.from_env()
    try:
        client.images.get(SOURCE_IMAGE).tag(ref)
        path = tmp_path_factory.mktemp("glance") / "busybox.tar"
        subprocess.run(["docker", "save", "-o", str(path), ref], check=True, timeout=120)
        client.images.remove(ref)          # only the tag: the create must load it again
        yield path, ref
    finally:
        try:
            client.images.remove(ref)
        except docker.errors.ImageNotFound:
            pass
        client.close()


def upload(raw: httpx.Client, name: str, tarball: Path, tags: list[str] | None = None) -> str:
    """A Glance image ``name`` (container_format docker) holding ``tarball``; its id."""
    made = raw.post("/images", json={"name": name, "container_format": "docker",
                                     "disk_format": "raw", "tags": tags or []})
    made.raise_for_status()
    image_id = str(made.json()["id"])
    with tarball.open("rb") as data:
        raw.put(f"/images/{image_id}/file", content=data,
                headers={"Content-Type": "application/octet-stream"}).raise_for_status()
    return image_id
