"""Images that exist in the local registry (127.0.0.1:5000) and not in Docker: the test
image pushed under a tag of its own, then untagged locally. A test can pull, use and
remove such an image without touching an image other tests rely on."""

from __future__ import annotations

import contextlib
import uuid

import docker
import docker.errors
import httpx

from support.berth_proc import REGISTRY, TEST_IMAGE


def push_probe(client: docker.DockerClient, name: str) -> str:
    """``127.0.0.1:5000/berth-test/<name>:<unique tag>``, in the registry only."""
    repo, tag = f"{REGISTRY}/berth-test/{name}", f"t-{uuid.uuid4().hex[:10]}"
    client.images.get(TEST_IMAGE).tag(repo, tag=tag)
    for line in client.api.push(repo, tag=tag, stream=True, decode=True):
        assert "error" not in line, line
    client.images.remove(f"{repo}:{tag}")
    return f"{repo}:{tag}"


def remove_probe(client: docker.DockerClient, ref: str) -> None:
    """Remove ``ref`` from Docker and (when the registry allows deletes) the registry."""
    with contextlib.suppress(docker.errors.ImageNotFound):
        client.images.remove(ref)
    name, tag = ref[len(REGISTRY) + 1:].rsplit(":", 1)
    base = f"http://{REGISTRY}/v2/{name}/manifests"
    with contextlib.suppress(httpx.HTTPError):
        head = httpx.head(f"{base}/{tag}", timeout=5, headers={
            "Accept": "application/vnd.docker.distribution.manifest.v2+json"})
        digest = head.headers.get("docker-content-digest")
        if digest:
            httpx.delete(f"{base}/{digest}", timeout=5)
