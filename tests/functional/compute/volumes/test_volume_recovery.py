"""Volumes across crashes and restarts (issue 18): berth serve is killed with SIGKILL
with the database as a crash during an attach, or during a detach, leaves it, and
started again on the same state: nothing leaked, nothing attached to nothing, none
detached under a container. And a volume unmounted behind berth's back (a reboot)
is mounted again at start-up."""

from __future__ import annotations

import os
import subprocess
import uuid as uuidlib
from collections.abc import Callable
from typing import Any

import docker
import httpx
from sqlalchemy import select, update
from support.berth_proc import TEST_IMAGE, BerthProcess, mounts_under, wait_for
from support.lifecycle import database_of

from berth.db.models import Container, Volume, VolumeMapping


def run(http: httpx.Client, command: list[str], mounts: list[dict[str, Any]]) -> str:
    resp = http.post("/v1/containers", params={"run": "true"}, json={
        "image": TEST_IMAGE, "image_pull_policy": "ifnotpresent", "command": command,
        "mounts": mounts})
    assert resp.status_code == 202, resp.text
    return str(resp.json()["uuid"])


def status_of(http: httpx.Client, uuid: str) -> str:
    return str(http.get(f"/v1/containers/{uuid}").json()["status"])


def wait_status(http: httpx.Client, uuid: str, want: str) -> None:
    wait_for(lambda: status_of(http, uuid) == want, 60, what=f"{uuid} to be {want}")


def volumes_of(proc: BerthProcess) -> dict[str, Volume]:
    with database_of(proc) as db, db.reader() as s:
        return {v.uuid: v for v in s.scalars(select(Volume))}


def mapped(proc: BerthProcess, container_uuid: str) -> list[Volume]:
    with database_of(proc) as db, db.reader() as s:
        return list(s.scalars(select(Volume).join(
            VolumeMapping, VolumeMapping.volume_id == Volume.id).where(
            VolumeMapping.container_uuid == container_uuid)))


def mount_point(proc: BerthProcess, volume: Volume) -> str:
    return str(proc.dir / "state" / "mnt" / volume.uuid)


def backing(proc: BerthProcess, volume: Volume) -> str:
    return str(proc.dir / "state" / "mnt" / "local" / f"{volume.uuid}.img")


def crash_as(proc: BerthProcess, uuid: str, values: dict[str, Any]) -> None:
    """SIGKILL berth, remove the Docker container and write ``values`` on the row:
    the state a crash at that point of a flow leaves."""
    proc.kill()
    client = docker.from_env()
    try:
        client.api.remove_container(f"zun-{uuid}", force=True)
    finally:
        client.close()
    with database_of(proc) as db, db.writer() as s:
        s.execute(update(Container).where(Container.uuid == uuid).values(**values))


def restarted(proc: BerthProcess) -> httpx.Client:
    proc.start()
    return proc.http()


def two_volumes(proc: BerthProcess, http: httpx.Client, name: str,
                command: list[str]) -> tuple[str, Volume, Volume]:
    uuid = run(http, command, [{"source": name, "destination": "/kept"},
                               {"size": 1, "destination": "/scratch"}])
    wait_status(http, uuid, "Running")
    kept, scratch = sorted(mapped(proc, uuid), key=lambda v: v.auto_remove)
    assert kept.name == name and scratch.auto_remove
    assert {mount_point(proc, kept), mount_point(proc, scratch)} <= set(mounts_under(proc.dir))
    return uuid, kept, scratch


def test_crash_during_attach_is_undone(berth_factory: Callable[..., BerthProcess]) -> None:
    proc = berth_factory().start()
    name = f"k-{uuidlib.uuid4().hex[:8]}"
    with proc.http() as http:
        uuid, kept, scratch = two_volumes(proc, http, name, ["sleep", "300"])
    crash_as(proc, uuid, {"status": "Creating", "task_state": "container_creating",
                          "container_id": None})
    with restarted(proc) as http:
        body = http.get(f"/v1/containers/{uuid}").json()
        assert body["status"] == "Error" and "failed to create" in body["status_reason"]
    left = volumes_of(proc)
    assert scratch.uuid not in left and not os.path.exists(backing(proc, scratch))
    assert kept.uuid in left and os.path.exists(backing(proc, kept))
    assert mounts_under(proc.dir) == [], "a volume stayed attached to nothing"


def test_crash_during_detach_is_finished(berth_factory: Callable[..., BerthProcess]) -> None:
    proc = berth_factory().start()
    name = f"k-{uuidlib.uuid4().hex[:8]}"
    with proc.http() as http:
        uuid, kept, scratch = two_volumes(proc, http, name, ["sleep", "300"])
    crash_as(proc, uuid, {"status": "Deleting", "task_state": "container_deleting"})
    with restarted(proc) as http:
        wait_for(lambda: http.get(f"/v1/containers/{uuid}").status_code == 404, 30,
                 what="the interrupted delete to finish")
    left = volumes_of(proc)
    assert scratch.uuid not in left and not os.path.exists(backing(proc, scratch))
    assert kept.uuid in left and os.path.exists(backing(proc, kept))
    assert mounts_under(proc.dir) == []


def test_remount_at_start_up(berth_factory: Callable[..., BerthProcess]) -> None:
    proc = berth_factory().start()
    name = f"k-{uuidlib.uuid4().hex[:8]}"
    script = ["sh", "-c", "cat /kept/log 2>/dev/null; echo ran >> /kept/log"]
    with proc.http() as http:
        uuid = run(http, script, [{"source": name, "destination": "/kept"}])
        wait_status(http, uuid, "Stopped")
    (kept,) = mapped(proc, uuid)
    point = mount_point(proc, kept)
    assert point in mounts_under(proc.dir), "a stopped container's volume stays attached"
    proc.kill()
    subprocess.run(["umount", point], check=True)          # as a reboot would
    with restarted(proc) as http:
        assert point in mounts_under(proc.dir), "not mounted again at start-up"
        assert http.post(f"/v1/containers/{uuid}/start").status_code == 202
        wait_for(lambda: "ran" in str(http.get(f"/v1/containers/{uuid}/logs").json()), 30,
                 what="the second run to read the first run's data")
        assert http.delete(f"/v1/containers/{uuid}",
                           params={"force": "true"}).status_code == 204
        wait_for(lambda: http.get(f"/v1/containers/{uuid}").status_code == 404, 30)
    assert point not in mounts_under(proc.dir)
