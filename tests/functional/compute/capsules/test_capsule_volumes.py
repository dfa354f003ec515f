"""Capsule volumes on both capsule drivers (issue 18; Docker, and containerd with
``cri``): a volume declared once and
mounted by several members (an init container fills it, a container reads it), a
readOnly mount that is read-only (Zun ignores the flag), an autoRemove volume gone
with its capsule, and a kept one found again by a capsule of the same name."""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from sqlalchemy import select
from support.berth_proc import TEST_IMAGE, BerthProcess, mounts_under, wait_for
from support.lifecycle import database_of

from berth.db.models import Volume

LATEST = "container 1.40"


def member(name: str, command: list[str], mounts: list[dict[str, Any]]) -> dict[str, Any]:
    return {"image": TEST_IMAGE, "name": name, "imagePullPolicy": "IfNotPresent",
            "command": command, "resources": {"requests": {"cpu": 0.1, "memory": 32}},
            "volumeMounts": mounts}


@pytest.fixture(params=["docker", "cri"])
def engine(request: pytest.FixtureRequest) -> BerthProcess:
    return request.getfixturevalue("berth" if request.param == "docker" else "cri_berth")


@pytest.fixture
def http(engine: BerthProcess) -> Iterator[httpx.Client]:
    with engine.http(version=LATEST) as client:
        yield client


def create(http: httpx.Client, name: str, containers: list[dict[str, Any]],
           volumes: list[dict[str, Any]], inits: list[dict[str, Any]] | None = None
           ) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": containers, "volumes": volumes}
    if inits:
        spec["initContainers"] = inits
    resp = http.post("/v1/capsules/", json={"template": {
        "kind": "capsule", "metadata": {"name": name}, "spec": spec}})
    assert resp.status_code == 202, resp.text
    uuid = resp.json()["uuid"]

    def settled() -> dict[str, Any] | None:
        shown = http.get(f"/v1/capsules/{uuid}").json()
        return shown if shown["status"] != "Creating" else None
    shown = wait_for(settled, 90, 0.2, what=f"capsule {name} to settle")
    assert isinstance(shown, dict)
    return shown


def delete(http: httpx.Client, uuid: str) -> None:
    assert http.delete(f"/v1/capsules/{uuid}").status_code == 204
    wait_for(lambda: http.get(f"/v1/capsules/{uuid}").status_code == 404, 60,
             what=f"capsule {uuid} to go")


def logs_of(http: httpx.Client, member_uuid: str) -> str:
    """A member's logs through the API (``zun logs``), whichever engine runs it."""
    resp = http.get(f"/v1/containers/{member_uuid}/logs")
    assert resp.status_code == 200, resp.text
    return str(resp.json())


def volumes(berth: BerthProcess) -> dict[str, Volume]:
    with database_of(berth) as db, db.reader() as s:
        return {v.uuid: v for v in s.scalars(select(Volume))}


def test_members_share_a_volume_and_read_only_is_honoured(
        engine: BerthProcess, http: httpx.Client) -> None:
    before = set(volumes(engine))
    shown = create(
        http, f"vol-{uuidlib.uuid4().hex[:8]}",
        [member("reader", ["sh", "-c", ("cat /in/seed; touch /in/x || echo refused; "
                                       "sleep 300")],
                [{"name": "data", "mountPath": "/in", "readOnly": True}])],
        [{"name": "data", "cinder": {"size": 1, "autoRemove": True}}],
        inits=[member("fill", ["sh", "-c", "echo seeded > /out/seed"],
                      [{"name": "data", "mountPath": "/out"}])])
    assert shown["status"] == "Running", shown
    (reader,) = shown["containers"]
    wait_for(lambda: "refused" in logs_of(http, reader["uuid"]), 30,
             what="the reader's output")
    out = logs_of(http, reader["uuid"])
    assert "seeded" in out and "Read-only file system" in out, out
    (made,) = set(volumes(engine)) - before          # one volume for both members
    point = str(engine.dir / "state" / "mnt" / made)
    assert point in mounts_under(engine.dir)
    delete(http, shown["uuid"])
    assert made not in volumes(engine), "autoRemove volume left after its capsule"
    assert point not in mounts_under(engine.dir)


def test_a_kept_volume_is_found_again_by_a_capsule_of_the_same_name(
        engine: BerthProcess, http: httpx.Client) -> None:
    name = f"db-{uuidlib.uuid4().hex[:8]}"
    declared = [{"name": "state", "cinder": {"size": 1}}]
    script = ["sh", "-c", "cat /state/n 2>/dev/null; echo gen >> /state/n; sleep 300"]
    mounts = [{"name": "state", "mountPath": "/state"}]
    first = create(http, name, [member("app", script, mounts)], declared)
    assert first["status"] == "Running", first
    delete(http, first["uuid"])
    kept = [v for v in volumes(engine).values() if v.name == f"{name}-state"]
    assert len(kept) == 1 and not kept[0].auto_remove
    second = create(http, name, [member("app", script, mounts)], declared)
    (app,) = second["containers"]
    wait_for(lambda: "gen" in logs_of(http, app["uuid"]), 30,
             what="the second capsule to read the first one's data")
    delete(http, second["uuid"])
