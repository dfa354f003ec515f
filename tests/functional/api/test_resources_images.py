"""The image API end to end: pull to a node, list, show, delete and search through
python-zunclient (Python API, ``zun`` and ``openstack appcontainer``) against the
shared ``berth serve``, checked in Docker. Each pull test pushes an image under a
tag of its own to the local registry, so that removing it touches nobody else's."""

from __future__ import annotations

import contextlib
import subprocess
import uuid as uuidlib
from collections.abc import Iterator
from typing import Any

import docker.errors
import pytest
from support.berth_proc import REGISTRY, TEST_IMAGE, BerthProcess, bin_path, wait_for
from support.registry_probe import push_probe, remove_probe
from zunclient import exceptions as zexc

PROBE_REPO = f"{REGISTRY}/berth-test/imgapi-probe"


def cli(proc: BerthProcess, tool: str, *args: str, ok: bool = True
        ) -> subprocess.CompletedProcess[str]:
    env = proc.openstack_env() if tool == "openstack" else proc.zun_cli_env()
    done = subprocess.run([bin_path(tool), *args], check=False, env=env,
                          capture_output=True, text=True, timeout=120)
    if ok:
        assert done.returncode == 0, f"{tool} {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture
def pushed(docker_client) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """An image in the local registry and not in Docker (see support.registry_probe)."""
    ref = push_probe(docker_client, "imgapi-probe")
    yield ref
    remove_probe(docker_client, ref)


@pytest.fixture
def images(zun) -> Iterator[list[str]]:  # type: ignore[no-untyped-def]
    """Uuids of image records a test made; their records are deleted afterwards."""
    made: list[str] = []
    yield made
    for uuid in made:
        with contextlib.suppress(zexc.NotFound):
            zun.images.delete(uuid)


def _present(docker_client: Any, ref: str) -> bool:
    try:
        docker_client.images.get(ref)
        return True
    except docker.errors.ImageNotFound:
        return False


def _gone(zun: Any, uuid: str) -> bool:
    try:
        zun.images.get(uuid)
    except zexc.NotFound:
        return True
    return False


def test_pull_puts_the_image_in_docker_and_delete_removes_only_that_tag(
        berth, zun, pushed, images, docker_client):
    assert not _present(docker_client, pushed)
    img = zun.images.create(repo=pushed, host=berth.host)
    images.append(img.uuid)
    assert (img.repo, img.tag, img.host, img.image_id) == \
        (PROBE_REPO, pushed.rsplit(":", 1)[1], berth.host, None)
    pulled = wait_for(lambda: zun.images.get(img.uuid).image_id, 60,
                      what="the pull to record the image id")
    local = docker_client.images.get(pushed)
    assert pulled == local.id
    shown = zun.images.get(img.uuid)
    assert shown.size == str(local.attrs["Size"]) and shown.links
    assert img.uuid in [i.uuid for i in zun.images.list()]

    with pytest.raises(zexc.Conflict):                       # same repo, tag and host
        zun.images.create(repo=pushed, host=berth.host)

    cli(berth, "zun", "image-delete", img.uuid)
    wait_for(lambda: _gone(zun, img.uuid), 60, what="the image record to go")
    assert not _present(docker_client, pushed)
    # The same image under the test image's tag stays: removal is by tag, not by id.
    assert docker_client.images.get(TEST_IMAGE).id == local.id


def test_a_pull_of_a_missing_image_leaves_the_record_without_image_id(
        berth, zun, images):
    missing = f"{PROBE_REPO}:no-such-tag-{uuidlib.uuid4().hex[:6]}"
    out = cli(berth, "openstack", "appcontainer", "image", "pull", missing, berth.host)
    assert "no-such-tag" in out.stdout
    img = next(i for i in zun.images.list() if i.tag == missing.rsplit(":", 1)[1])
    images.append(img.uuid)
    wait_for(lambda: f"record {img.uuid} keeps no image_id" in berth.log_text(), 60,
             what="the agent to log the failed pull")
    assert zun.images.get(img.uuid).image_id is None
    zun.images.delete(img.uuid)                       # nothing in Docker: the row goes
    wait_for(lambda: _gone(zun, img.uuid), 60, what="the image record to go")


def test_image_api_bad_input_is_refused_and_leaves_no_record(berth, zun):
    before = len(zun.images.list())
    with berth.http() as http:
        cases = {
            "no host": http.post("/v1/images/", json={"repo": TEST_IMAGE}),
            "no repo": http.post("/v1/images/", json={"host": berth.host}),
            "unknown host": http.post("/v1/images/", json={"repo": TEST_IMAGE,
                                                           "host": "no-such-node"}),
            "bad repo": http.post("/v1/images/", json={"repo": "Bad Image!",
                                                       "host": berth.host}),
            "digest": http.post("/v1/images/", json={
                "repo": f"{TEST_IMAGE.split(':')[0]}@sha256:{'a' * 64}", "host": berth.host}),
            "extra": http.post("/v1/images/", json={"repo": TEST_IMAGE, "host": berth.host,
                                                    "colour": "red"}),
            "two tags": http.post("/v1/images/", json={"repo": TEST_IMAGE, "tag": "v2",
                                                       "host": berth.host}),
        }
        not_json = http.post("/v1/images/", content=b"repo=x",
                             headers={"Content-Type": "text/plain"})
        by_name = http.get("/v1/images/busybox")
        unknown = http.get(f"/v1/images/{uuidlib.uuid4()}")
        unknown_delete = http.delete(f"/v1/images/{uuidlib.uuid4()}")
        member = http.get("/v1/images/", headers={"X-Auth-Token": "dave:imgproj"})
    for what, resp in cases.items():
        assert resp.status_code == 400, (what, resp.text)
    assert "no-such-node" in cases["unknown host"].json()["errors"][0]["title"]
    assert not_json.status_code == 415
    assert by_name.status_code == 404 and "uuid" in by_name.json()["errors"][0]["title"]
    assert unknown.status_code == 404 and unknown_delete.status_code == 404
    assert member.status_code == 403
    assert len(zun.images.list()) == before


def test_exact_search_finds_what_the_node_can_get(zun):
    hits = zun.images.search_image(f"{REGISTRY}/berth-test/busybox:latest",
                                   image_driver="docker", exact_match=True)
    assert [h.name for h in hits] == [f"{REGISTRY}/berth-test/busybox:latest"]
    assert hits[0].metadata == {"is_official": False, "star_count": 0}
    none = zun.images.search_image(f"{REGISTRY}/berth-test/no-such-image:latest",
                                   image_driver="docker", exact_match=True)
    assert none == []


def test_keyword_search_without_internet_fails_fast_and_says_why(
        berth, berth_factory, offline_engine):  # type: ignore[no-untyped-def]
    # A keyword search asks Docker Hub: the node here is an engine in a network
    # namespace with only loopback, so the search fails at once and no query leaves
    # the machine (the host's engine would send one).
    offline = berth_factory(f"[docker]\napi_url = {offline_engine}\n").start()
    with pytest.raises(zexc.HttpError) as failed:
        offline.client().images.search_image("busybox", image_driver="docker",
                                             exact_match=False)
    assert failed.value.http_status == 503
    assert "Docker Hub cannot be searched" in str(failed.value)
    assert "exact_match" in str(failed.value)
    done = cli(offline, "zun", "image-search", "busybox", ok=False)
    assert done.returncode != 0 and "Docker Hub" in done.stdout + done.stderr
    # What the API refuses before any search needs no offline node (and a Glance search
    # that cannot be made).
    with berth.http() as http:
        private = http.get(f"/v1/images/{REGISTRY}/berth-test/busybox/search?exact_match=False")
        glance = http.get("/v1/images/cirros/search?image_driver=glance&exact_match=False")
        bad_flag = http.get("/v1/images/busybox/search?exact_match=perhaps")
        bad_driver = http.get("/v1/images/busybox/search?image_driver=podman")
    assert private.status_code == 400 and REGISTRY in private.json()["errors"][0]["title"]
    # Glance is searched (berth.image.glance); this berth has no identity towards it
    assert glance.status_code == 503 and "[glance_client]" in glance.json()["errors"][0]["title"]
    assert bad_flag.status_code == 400 and bad_driver.status_code == 400
