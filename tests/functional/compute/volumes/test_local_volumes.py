"""Local volumes on the real Docker engine (issue 18): data that outlives its
container, a size that is a real limit, auto-remove, injected files, read-only
capsule mounts, and bad mounts that leave nothing behind."""

from __future__ import annotations

import base64
import os
import uuid as uuidlib
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from sqlalchemy import select
from support.berth_proc import TEST_IMAGE, BerthProcess, mounts_under, wait_for
from support.lifecycle import database_of

from berth.db.models import Container, Volume, VolumeMapping

FINAL = ("Stopped", "Error")


@pytest.fixture
def http(berth: BerthProcess) -> Iterator[httpx.Client]:
    with berth.http() as client:
        yield client


def run(http: httpx.Client, command: list[str], mounts: list[dict[str, Any]],
        **extra: Any) -> str:
    resp = http.post("/v1/containers", params={"run": "true"}, json={
        "image": TEST_IMAGE, "image_pull_policy": "ifnotpresent", "command": command,
        "mounts": mounts, **extra})
    assert resp.status_code == 202, resp.text
    return str(resp.json()["uuid"])


def finished(http: httpx.Client, uuid: str) -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        body = http.get(f"/v1/containers/{uuid}").json()
        return body if body["status"] in FINAL else None
    return wait_for(done, 60, what=f"container {uuid} to finish")  # type: ignore[return-value]


def logs(http: httpx.Client, uuid: str) -> str:
    return str(http.get(f"/v1/containers/{uuid}/logs").json())


def delete(http: httpx.Client, uuid: str) -> None:
    assert http.delete(f"/v1/containers/{uuid}", params={"force": "true"}).status_code == 204
    wait_for(lambda: http.get(f"/v1/containers/{uuid}").status_code == 404, 30,
             what=f"container {uuid} to go")


def volumes(berth: BerthProcess) -> list[Volume]:
    with database_of(berth) as db, db.reader() as s:
        return list(s.scalars(select(Volume)))


def volume_named(berth: BerthProcess, name: str) -> Volume | None:
    return next((v for v in volumes(berth) if v.name == name), None)


def backing_file(berth: BerthProcess, volume: Volume) -> str:
    return str(berth.dir / "state" / "mnt" / "local" / f"{volume.uuid}.img")


def test_named_volume_outlives_its_container(berth: BerthProcess, http: httpx.Client) -> None:
    name = f"data-{uuidlib.uuid4().hex[:8]}"
    first = run(http, ["sh", "-c", "echo kept > /data/f && df -k /data"],
                [{"source": name, "destination": "/data", "size": 2}])
    assert finished(http, first)["status"] == "Stopped"
    assert "/data" in logs(http, first)
    volume = volume_named(berth, name)
    assert volume is not None and volume.size == 2 and not volume.auto_remove
    delete(http, first)
    # kept, with its data, and no longer mounted: no container needs it
    assert volume_named(berth, name) is not None
    assert os.path.exists(backing_file(berth, volume))
    assert str(berth.dir / "state" / "mnt" / volume.uuid) not in mounts_under(berth.dir)

    second = run(http, ["cat", "/data/f"], [{"source": name, "destination": "/data"}])
    assert finished(http, second)["status"] == "Stopped"
    assert "kept" in logs(http, second)
    delete(http, second)


def test_size_is_a_real_limit_and_auto_remove(berth: BerthProcess,
                                               http: httpx.Client) -> None:
    uuid = run(http, ["sh", "-c", ("dd if=/dev/zero of=/scratch/big bs=1M count=1200; "
                                  "echo exit=$?")],
               [{"size": 1, "destination": "/scratch"}])
    assert finished(http, uuid)["status"] == "Stopped"
    out = logs(http, uuid)
    assert "No space left on device" in out and "exit=1" in out, out
    (volume,) = [v for v in volumes(berth) if v.id in _mapped_volume_ids(berth, uuid)]
    assert volume.auto_remove and volume.size == 1
    path = backing_file(berth, volume)
    assert os.path.exists(path)
    delete(http, uuid)
    assert volume.uuid not in {v.uuid for v in volumes(berth)}
    assert not os.path.exists(path)


def test_zun_ui_new_volume_with_an_empty_source(berth: BerthProcess,
                                                http: httpx.Client) -> None:
    """zun-ui's "New Cinder Volume": the size as a string beside an empty source is a
    new volume of that size, removed with its container (Zun reads "" as no source)."""
    uuid = run(http, ["sh", "-c", "echo ok > /data/f && cat /data/f"],
               [{"destination": "/data", "size": "1", "source": ""}])
    assert finished(http, uuid)["status"] == "Stopped"
    assert "ok" in logs(http, uuid)
    (volume,) = [v for v in volumes(berth) if v.id in _mapped_volume_ids(berth, uuid)]
    assert volume.auto_remove and volume.size == 1 and not volume.name
    delete(http, uuid)
    assert volume.uuid not in {v.uuid for v in volumes(berth)}


def test_bind_mount_injects_a_file(berth: BerthProcess, http: httpx.Client) -> None:
    content = "listen 8080\n"
    uuid = run(http, ["cat", "/etc/app.conf"], [
        {"type": "bind", "source": base64.b64encode(content.encode()).decode(),
         "destination": "/etc/app.conf"}])
    assert finished(http, uuid)["status"] == "Stopped"
    assert "listen 8080" in logs(http, uuid)
    (volume_id,) = _mapped_volume_ids(berth, uuid)
    (volume,) = [v for v in volumes(berth) if v.id == volume_id]
    directory = berth.dir / "state" / "mnt" / volume.uuid
    assert (directory / volume.uuid).read_text() == content
    delete(http, uuid)
    assert not directory.exists()


def test_two_containers_share_a_named_volume(berth: BerthProcess,
                                             http: httpx.Client) -> None:
    name = f"shared-{uuidlib.uuid4().hex[:8]}"
    mount = [{"source": name, "destination": "/shared"}]
    writer = run(http, ["sh", "-c", "echo one > /shared/x; sleep 300"], mount)
    wait_for(lambda: http.get(f"/v1/containers/{writer}").json()["status"] == "Running", 60)
    reader = run(http, ["sh", "-c", "sleep 1; cat /shared/x"], mount)
    assert finished(http, reader)["status"] == "Stopped"
    assert "one" in logs(http, reader)
    volume = volume_named(berth, name)
    assert volume is not None
    point = str(berth.dir / "state" / "mnt" / volume.uuid)
    delete(http, reader)
    assert point in mounts_under(berth.dir), "detached under a running container"
    delete(http, writer)
    assert point not in mounts_under(berth.dir)


@pytest.mark.parametrize(("mounts", "says"), [
    ([{"source": "a", "destination": "/d"}, {"size": 1, "destination": "/d/"}],
     "mounts[1]: destination /d is already"),
    ([{"size": 1, "destination": "/"}], "mounts[0]: a volume cannot be mounted at '/'"),
    ([{"source": "00000000-0000-4000-8000-000000000000", "destination": "/d"}],
     "no local volume 00000000-0000-4000-8000-000000000000"),
    ([{"type": "bind", "source": "not base64!", "destination": "/d"}], "base64"),
])
def test_bad_mounts_leave_nothing(berth: BerthProcess, http: httpx.Client,
                                  mounts: list[dict[str, Any]], says: str) -> None:
    before_volumes = len(volumes(berth))
    with database_of(berth) as db, db.reader() as s:
        before_rows = len(list(s.scalars(select(Container.uuid))))
    resp = http.post("/v1/containers", json={"image": TEST_IMAGE, "mounts": mounts})
    assert resp.status_code == 400, resp.text
    assert says in resp.json()["errors"][0]["detail"]
    assert len(volumes(berth)) == before_volumes
    with database_of(berth) as db, db.reader() as s:
        assert len(list(s.scalars(select(Container.uuid)))) == before_rows


def test_mounts_need_microversion_1_11(berth: BerthProcess) -> None:
    with berth.http(version="container 1.10") as old:
        resp = old.post("/v1/containers", json={
            "image": TEST_IMAGE, "mounts": [{"size": 1, "destination": "/d"}]})
    assert resp.status_code == 400, resp.text


def _mapped_volume_ids(berth: BerthProcess, container_uuid: str) -> list[int]:
    with database_of(berth) as db, db.reader() as s:
        return list(s.scalars(select(VolumeMapping.volume_id).where(
            VolumeMapping.container_uuid == container_uuid)))


def test_zun_cli_mounts(berth: BerthProcess, http: httpx.Client) -> None:
    """``zun run --mount``, as the issue's user types it: a named volume and a sized one."""
    import subprocess

    from support.berth_proc import bin_path

    name = f"cli-{uuidlib.uuid4().hex[:8]}"
    done = subprocess.run(
        [bin_path("zun"), "--zun-api-version", "1.40", "run", "--image-pull-policy",
         "ifnotpresent", "--mount", f"source={name},destination=/var/lib/data",
         "--mount", "size=1,destination=/scratch", TEST_IMAGE,
         "sh", "-c", "df -k /var/lib/data /scratch"],
        env=berth.zun_cli_env(), capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    uuid = next(line.split("|")[2].strip() for line in done.stdout.splitlines()
                if line.startswith("| uuid "))
    assert finished(http, uuid)["status"] == "Stopped"
    out = logs(http, uuid)
    assert "/var/lib/data" in out and "/scratch" in out, out
    assert volume_named(berth, name) is not None
    delete(http, uuid)


def test_rebuild_keeps_the_volumes(berth: BerthProcess, http: httpx.Client) -> None:
    """A rebuild makes a new Docker container with the same mounts: the data stays."""
    name = f"rb-{uuidlib.uuid4().hex[:8]}"
    uuid = run(http, ["sh", "-c", "cat /d/f 2>/dev/null; echo built >> /d/f; sleep 300"],
               [{"source": name, "destination": "/d"}, {"size": 1, "destination": "/s"}])
    wait_for(lambda: http.get(f"/v1/containers/{uuid}").json()["status"] == "Running", 60)
    before = _mapped_volume_ids(berth, uuid)
    assert http.post(f"/v1/containers/{uuid}/rebuild").status_code == 202
    wait_for(lambda: "built" in logs(http, uuid) and http.get(
        f"/v1/containers/{uuid}").json()["status"] == "Running", 60,
        what="the rebuilt container to read what the first one wrote")
    assert _mapped_volume_ids(berth, uuid) == before
    delete(http, uuid)


def test_new_volumes_count_against_the_disk_quota(berth: BerthProcess,
                                                  http: httpx.Client) -> None:
    """berth counts a project's volumes in its disk quota (Zun counted none): a mount
    that would take the project over is a 403 that leaves nothing."""
    project = f"vq{uuidlib.uuid4().hex[:8]}"
    assert http.put(f"/v1/quotas/{project}", json={"disk": 2}).status_code == 200
    with berth.http(token=f"carol:{project}") as user:
        over = user.post("/v1/containers", json={
            "image": TEST_IMAGE, "mounts": [{"size": 3, "destination": "/d"}]})
        assert over.status_code == 403, over.text
        assert "disk" in over.json()["errors"][0]["detail"]
        assert not [v for v in volumes(berth) if v.project_id == project]
        made = user.post("/v1/containers", params={"run": "true"}, json={
            "image": TEST_IMAGE, "command": ["true"],
            "mounts": [{"size": 2, "destination": "/d"}]})
        assert made.status_code == 202, made.text
        uuid = made.json()["uuid"]
        assert finished(user, uuid)["status"] == "Stopped"
        again = user.post("/v1/containers", json={
            "image": TEST_IMAGE, "mounts": [{"size": 1, "destination": "/d"}]})
        assert again.status_code == 403, again.text
        delete(http, uuid)          # as admin: a forced delete


def test_first_uses_of_a_name_at_once_agree_on_one_volume(berth: BerthProcess,
                                                          http: httpx.Client) -> None:
    """Four creates naming the same new local volume at once: each is accepted and
    they all mount the one volume (the name is unique; a loser plans again)."""
    import concurrent.futures as cf

    name = f"race-{uuidlib.uuid4().hex[:8]}"

    def make(_: int) -> str:
        with berth.http() as client:
            return run(client, ["sh", "-c", "echo x >> /r/log"],
                       [{"source": name, "destination": "/r"}])
    with cf.ThreadPoolExecutor(4) as pool:
        uuids = list(pool.map(make, range(4)))
    for uuid in uuids:
        assert finished(http, uuid)["status"] == "Stopped"
    named = [v for v in volumes(berth) if v.name == name]
    assert len(named) == 1
    assert {vid for u in uuids for vid in _mapped_volume_ids(berth, u)} == {named[0].id}
    for uuid in uuids:
        delete(http, uuid)
