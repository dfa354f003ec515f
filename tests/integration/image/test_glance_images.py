"""Containers from Glance images, end to end: a ``berth serve`` whose agent reaches the
real Glance 33 (see conftest) with its own Keystone identity. The image is a ``docker
save`` of the test busybox under a tag no engine has: a create finds it in Glance,
downloads it (an action event, logged with the container's uuid), loads it and runs
it; a second create downloads nothing. Search, commit (an upload to Glance), and bad
input (nothing left behind) too."""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
import httpx
import pytest
from integration.image.conftest import GLANCE_CLIENT_CONF, upload
from support.berth_proc import BerthProcess, wait_for

pytestmark = pytest.mark.integration

DOWNLOAD_EVENT = "compute__image_download"


@pytest.fixture(scope="module")
def glance_image(glance_raw: httpx.Client, busybox_tarball: tuple[Path, str]
                 ) -> Iterator[tuple[str, str, str]]:
    """(name, Glance id, the reference inside) of a test image in Glance."""
    path, ref = busybox_tarball
    name = f"berth-itest-busybox-{uuidlib.uuid4().hex[:8]}"
    image_id = upload(glance_raw, name, path, tags=["v1"])
    yield name, image_id, ref
    glance_raw.delete(f"/images/{image_id}")


def make_berth(validation: bool) -> BerthProcess:
    return BerthProcess(
        "[network]\ndriver = docker\n"
        f"[api]\nenable_image_validation = {str(validation).lower()}\n"
        f"{GLANCE_CLIENT_CONF}")


@pytest.fixture(scope="module")
def berth_glance(glance: str) -> Iterator[BerthProcess]:
    proc = make_berth(validation=True).start(timeout=120)   # a loaded machine starts slowly
    yield proc
    proc.stop()
    _remove_containers(proc.host)


@pytest.fixture
def http(berth_glance: BerthProcess) -> Iterator[httpx.Client]:
    with berth_glance.http() as client:
        yield client


def _remove_containers(host: str) -> None:
    client = docker.from_env()
    try:
        for c in client.containers.list(all=True, filters={"label": f"berth.host={host}"}):
            c.remove(force=True)
    finally:
        client.close()


def create(http: httpx.Client, image: str, **extra: Any) -> httpx.Response:
    return http.post("/v1/containers", params={"run": "true"}, json={
        "image": image, "image_driver": "glance", "command": ["sleep", "300"], **extra})


def settled(http: httpx.Client, uuid: str) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        body = http.get(f"/v1/containers/{uuid}").json()
        return body if body["status"] in ("Running", "Error", "Stopped") else None
    found = wait_for(done, 180, 0.2, what=f"container {uuid} to settle")
    assert isinstance(found, dict)
    return found


def events_of(http: httpx.Client, uuid: str) -> list[dict[str, Any]]:
    (action,) = [a for a in http.get(f"/v1/containers/{uuid}/container_actions").json()
                 ["containerActions"] if a["action"] == "create"]
    shown = http.get(f"/v1/containers/{uuid}/container_actions/{action['request_id']}")
    return list(shown.json()["events"])


def delete(http: httpx.Client, uuid: str) -> None:
    http.delete(f"/v1/containers/{uuid}", params={"force": "true"})
    wait_for(lambda: http.get(f"/v1/containers/{uuid}").status_code == 404, 60, 0.2,
             what=f"container {uuid} to go")


def test_a_glance_image_is_downloaded_once_loaded_and_run(
        berth_glance: BerthProcess, http: httpx.Client,
        glance_image: tuple[str, str, str]) -> None:
    name, image_id, ref = glance_image
    first = create(http, name)
    assert first.status_code == 202, first.text
    uuid = first.json()["uuid"]
    body = settled(http, uuid)
    assert body["status"] == "Running", body
    assert body["image_driver"] == "glance"
    download = [e for e in events_of(http, uuid) if e["event"] == DOWNLOAD_EVENT]
    assert len(download) == 1 and download[0]["result"] == "Success", download
    cached = berth_glance.dir / "state" / "images" / f"{image_id}.tar"
    assert cached.is_file()
    seen = docker.from_env().containers.get(f"zun-{uuid}")
    assert seen.attrs["Config"]["Image"] == ref
    progress = [line for line in berth_glance.log.read_text().splitlines()
                if f"downloading image {name} from Glance: 100%" in line]
    assert progress and f"container={uuid}" in progress[0], progress
    # the second create, by id and tag: from the cache, no download
    mtime = cached.stat().st_mtime_ns
    second = create(http, f"{image_id}")
    assert second.status_code == 202, second.text
    other = second.json()["uuid"]
    assert settled(http, other)["status"] == "Running"
    assert not [e for e in events_of(http, other) if e["event"] == DOWNLOAD_EVENT]
    assert cached.stat().st_mtime_ns == mtime
    delete(http, uuid)
    delete(http, other)


def test_search_with_the_glance_driver_asks_glance(
        http: httpx.Client, glance_image: tuple[str, str, str]) -> None:
    name, image_id, _ = glance_image
    exact = http.get(f"/v1/images/{name}/search",
                     params={"image_driver": "glance", "exact_match": "true"})
    assert exact.status_code == 200, exact.text
    assert [i["id"] for i in exact.json()] == [image_id]
    part = http.get(f"/v1/images/{name[:-3]}/search",
                    params={"image_driver": "glance", "exact_match": "false"})
    assert image_id in [i["id"] for i in part.json()]
    tagged = http.get(f"/v1/images/{name}:v2/search",
                      params={"image_driver": "glance", "exact_match": "true"})
    assert tagged.json() == []


def test_an_unknown_glance_image_is_refused_at_the_api_leaving_nothing(
        berth_glance: BerthProcess, http: httpx.Client) -> None:
    before = len(http.get("/v1/containers").json()["containers"])
    resp = create(http, f"no-such-image-{uuidlib.uuid4().hex[:6]}")
    # Zun's ImageNotFound (an Invalid: 400), as for the docker driver's validation
    assert resp.status_code == 400, resp.text
    assert "could not be found" in resp.json()["errors"][0]["detail"]
    assert len(http.get("/v1/containers").json()["containers"]) == before


def test_without_validation_an_unknown_image_ends_the_create_in_error(
        glance: str) -> None:
    proc = make_berth(validation=False).start(timeout=120)
    try:
        with proc.http() as http:
            missing = f"no-such-image-{uuidlib.uuid4().hex[:6]}"
            resp = create(http, missing)
            assert resp.status_code == 202, resp.text
            body = settled(http, resp.json()["uuid"])
            assert body["status"] == "Error" and missing in body["status_reason"], body
            client = docker.from_env()
            assert not client.containers.list(
                all=True, filters={"label": f"berth.host={proc.host}"})
            never = create(http, missing, image_pull_policy="never")
            body = settled(http, never.json()["uuid"])
            assert body["status"] == "Error" and "Never" in body["status_reason"], body
    finally:
        proc.stop()
        _remove_containers(proc.host)


def test_commit_of_a_glance_container_uploads_the_image_to_glance(
        http: httpx.Client, glance_raw: httpx.Client,
        glance_image: tuple[str, str, str]) -> None:
    name, _, _ = glance_image
    uuid = create(http, name).json()["uuid"]
    assert settled(http, uuid)["status"] == "Running"
    repo = f"berth-itest-commit-{uuidlib.uuid4().hex[:6]}"
    resp = http.post(f"/v1/containers/{uuid}/commit",
                     params={"repository": repo, "tag": "snap"})
    assert resp.status_code == 202, resp.text
    new_id = resp.json()["uuid"]
    try:
        record = glance_raw.get(f"/images/{new_id}").json()
        assert record["name"] == repo and record["tags"] == ["snap"]
        assert record["container_format"] == "docker" and record["status"] == "active"
        assert record["size"] > 0
    finally:
        glance_raw.delete(f"/images/{new_id}")
        delete(http, uuid)
        try:
            docker.from_env().images.remove(f"{repo}:snap")
        except docker.errors.ImageNotFound:
            pass


def test_a_registry_container_rebuilt_from_glance_runs_the_glance_image(
        http: httpx.Client, glance_image: tuple[str, str, str]) -> None:
    from support.berth_proc import TEST_IMAGE

    name, _, ref = glance_image
    made = http.post("/v1/containers", params={"run": "true"}, json={
        "image": TEST_IMAGE, "image_pull_policy": "ifnotpresent", "command": ["sleep", "300"]})
    assert made.status_code == 202, made.text
    uuid = made.json()["uuid"]
    assert settled(http, uuid)["status"] == "Running"
    resp = http.post(f"/v1/containers/{uuid}/rebuild",
                     params={"image": name, "image_driver": "glance"})
    assert resp.status_code == 202, resp.text
    wait_for(lambda: http.get(f"/v1/containers/{uuid}").json()["status"]
             in ("Running", "Error") and http.get(f"/v1/containers/{uuid}").json()
             ["task_state"] is None, 180, 0.2, what="the rebuild")
    body = http.get(f"/v1/containers/{uuid}").json()
    assert body["status"] == "Running" and body["image_driver"] == "glance", body
    seen = docker.from_env().containers.get(f"zun-{uuid}")
    assert seen.attrs["Config"]["Image"] == ref
    delete(http, uuid)
