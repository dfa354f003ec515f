"""Containers with Cinder volumes, end to end: a ``berth serve`` with ``[volume]driver
= cinder`` against the real Cinder 29 (see conftest), the user's token passed to
Cinder. A new volume of a size is made at the API, attached by the agent and deleted
with its container; an existing one is found by name, used and left available; an
unknown one is a 404 that leaves nothing."""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from integration.volume.conftest import ADMIN_TOKEN, CINDER_URL, PROJECT
from sqlalchemy import select
from support.berth_proc import TEST_IMAGE, BerthProcess, mounts_under, unmount_volumes, wait_for
from support.lifecycle import database_of

from berth.db.models import Volume

pytestmark = pytest.mark.integration

USER_TOKEN = f"alice:{PROJECT}"      # berth's noauth: user alice of the (hex) project


@pytest.fixture(scope="module")
def berth_cinder(cinder: str) -> Iterator[BerthProcess]:
    proc = BerthProcess(
        "[network]\ndriver = docker\n"
        "[volume]\ndriver = cinder\n"
        f"[cinder_client]\nendpoint_override = {cinder}/%(project_id)s\n"
        f"auth_type = admin_token\ntoken = {ADMIN_TOKEN}\nendpoint = {CINDER_URL}\n")
    proc.start()
    yield proc
    proc.stop()
    unmount_volumes(proc)


@pytest.fixture
def http(berth_cinder: BerthProcess) -> Iterator[httpx.Client]:
    with berth_cinder.http(token=USER_TOKEN) as client:
        yield client


def cinder_volume(raw: httpx.Client, volume_id: str) -> dict[str, Any] | None:
    resp = raw.get(f"/volumes/{volume_id}")
    return None if resp.status_code == 404 else dict(resp.json()["volume"])


def run(http: httpx.Client, command: list[str], mounts: list[dict[str, Any]]) -> str:
    resp = http.post("/v1/containers", params={"run": "true"}, json={
        "image": TEST_IMAGE, "command": command,
        "mounts": mounts})
    assert resp.status_code == 202, resp.text
    return str(resp.json()["uuid"])


def stopped(http: httpx.Client, uuid: str) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        body = http.get(f"/v1/containers/{uuid}").json()
        return body if body["status"] in ("Stopped", "Error") else None
    found = wait_for(done, 120, 0.2, what=f"container {uuid} to finish")
    assert isinstance(found, dict)
    return found


def delete(http: httpx.Client, uuid: str) -> None:
    assert http.delete(f"/v1/containers/{uuid}").status_code == 204
    wait_for(lambda: http.get(f"/v1/containers/{uuid}").status_code == 404, 120, 0.2,
             what=f"container {uuid} to go")


def volumes_of(proc: BerthProcess) -> list[Volume]:
    with database_of(proc) as db, db.reader() as s:
        return list(s.scalars(select(Volume)))


def test_a_new_cinder_volume_lives_and_goes_with_its_container(
        berth_cinder: BerthProcess, http: httpx.Client, cinder_raw: httpx.Client) -> None:
    before = {v.uuid for v in volumes_of(berth_cinder)}
    uuid = run(http, ["sh", "-c", "echo on-cinder > /data/f && cat /data/f && df -k /data"],
               [{"size": 1, "destination": "/data"}])
    body = stopped(http, uuid)
    assert body["status"] == "Stopped", body
    assert "on-cinder" in str(http.get(f"/v1/containers/{uuid}/logs").json())
    (volume,) = [v for v in volumes_of(berth_cinder) if v.uuid not in before]
    assert volume.volume_provider == "cinder" and volume.auto_remove
    seen = cinder_volume(cinder_raw, str(volume.cinder_volume_id))
    assert seen is not None and seen["status"] == "in-use", seen
    delete(http, uuid)
    wait_for(lambda: cinder_volume(cinder_raw, str(volume.cinder_volume_id)) is None, 60,
             0.5, what="the auto-remove Cinder volume to be deleted")
    assert not [p for p in mounts_under(berth_cinder.dir) if volume.uuid in p]


def test_an_existing_cinder_volume_is_used_and_left_available(
        berth_cinder: BerthProcess, http: httpx.Client, cinder_raw: httpx.Client) -> None:
    name = f"kept-{uuidlib.uuid4().hex[:8]}"
    made = cinder_raw.post("/volumes", json={"volume": {"size": 1, "name": name}})
    made.raise_for_status()
    volume_id = made.json()["volume"]["id"]
    try:
        wait_for(lambda: (cinder_volume(cinder_raw, volume_id) or {}).get("status")
                 == "available", 60, 0.5, what="the new Cinder volume")
        first = run(http, ["sh", "-c", "echo kept > /v/f"], [{"source": name,
                                                              "destination": "/v"}])
        assert stopped(http, first)["status"] == "Stopped"
        delete(http, first)
        wait_for(lambda: (cinder_volume(cinder_raw, volume_id) or {}).get("status")
                 == "available", 60, 0.5, what="the volume to be detached")
        second = run(http, ["cat", "/v/f"], [{"source": volume_id, "destination": "/v"}])
        assert stopped(http, second)["status"] == "Stopped"
        assert "kept" in str(http.get(f"/v1/containers/{second}/logs").json())
        delete(http, second)
    finally:
        wait_for(lambda: (cinder_volume(cinder_raw, volume_id) or {}).get("status")
                 == "available", 60, 0.5, what="the volume to be detached")
        cinder_raw.delete(f"/volumes/{volume_id}")


def test_an_unknown_cinder_volume_is_a_404_and_leaves_nothing(
        berth_cinder: BerthProcess, http: httpx.Client) -> None:
    before = len(volumes_of(berth_cinder))
    resp = http.post("/v1/containers", json={
        "image": TEST_IMAGE, "mounts": [{"source": "no-such-volume", "destination": "/d"}]})
    assert resp.status_code == 404, resp.text
    assert "mounts[0]" in resp.json()["errors"][0]["detail"]
    assert len(volumes_of(berth_cinder)) == before
