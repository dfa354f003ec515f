"""The seed's auto_heal, on Zun and on berth: a container made with ``auto_heal`` whose
Docker container vanishes (``docker rm -f`` behind the service's back).

Zun's state sync finds it missing and calls ``manager.container_rebuild(context,
container)`` without its ``run`` argument; the TypeError is caught and logged as a
warning, so the row stays Running with no Docker container under it, a rebuild action
started that never ends, and the next sync does the same (seed: "automatic healing
never rebuilds"). berth rebuilds it: a new Docker container of the same name, running,
and the row Running (design.md, item 2).
"""

from __future__ import annotations

import os
import uuid as uuidlib

import docker
import httpx
from support.berth_proc import TEST_IMAGE, wait_for

from compat.zun_services import (
    DEFECTS_OPT_IN,
    LOGS,
    LogTail,
    force_delete,
    run_on_zun_network,
    settle,
)

pytestmark = DEFECTS_OPT_IN

ZUN_DOCKER = os.environ.get("BERTH_ZUN_DOCKER_HOST", "unix:///run/berth-node-zun.sock")
HEAL_FAILED = "heal container with rebuilding failed"


def test_zun_never_rebuilds_an_auto_heal_container_that_vanished(zun: httpx.Client) -> None:
    uuid = run_on_zun_network(zun, "heal", auto_heal=True)
    engine = docker.DockerClient(base_url=ZUN_DOCKER)
    try:
        body = settle(zun, uuid, ("Running", "Error", "Stopped"))
        assert body["status"] == "Running", body["status_reason"]
        assert body["auto_heal"] is True
        log = LogTail(LOGS / "zun-compute.log")
        engine.api.remove_container(f"zun-{uuid}", force=True)

        def two_failed_heals() -> list[str]:
            lines = [line for line in log.text().splitlines() if HEAL_FAILED in line]
            return lines if len(lines) >= 2 else []

        # the sync runs every 60 s: two of its runs try to heal, and fail
        failed = wait_for(two_failed_heals, 200, interval=2,
                          what="two of zun-compute's state syncs to try healing")
        assert "missing 1 required positional argument: 'run'" in failed[0]
        body = zun.get("/v1/containers", params={"all_projects": "true"}).json()
        row = next(c for c in body["containers"] if c["uuid"] == uuid)
        print(f"\n[zun] auto_heal container removed from Docker: after two syncs the list "
              f"shows {row['status']}; zun-compute logged: {failed[0].split('] ')[-1]}")
        assert row["status"] == "Running"
        assert not engine.containers.list(all=True, filters={"name": f"zun-{uuid}"})
        actions = zun.get(f"/v1/containers/{uuid}/container_actions").json()
        rebuilds = [a for a in actions["containerActions"] if a["action"] == "rebuild"]
        assert rebuilds and all(a["finish_time"] is None for a in rebuilds)
    finally:
        engine.close()
        force_delete(zun, uuid)


def test_berth_rebuilds_an_auto_heal_container_that_vanished(berth: httpx.Client) -> None:
    r = berth.post("/v1/containers", params={"run": "true"}, json={
        "name": f"heal-{uuidlib.uuid4().hex[:6]}", "image": TEST_IMAGE,
        "command": ["sleep", "3600"], "image_pull_policy": "ifnotpresent",
        "auto_heal": True})
    assert r.status_code == 202, r.text
    uuid = r.json()["uuid"]
    engine = docker.from_env()
    try:
        settle(berth, uuid, ("Running",), 120)
        old = engine.api.inspect_container(f"zun-{uuid}")["Id"]
        engine.api.remove_container(f"zun-{uuid}", force=True)

        def rebuilt() -> str | None:
            try:
                seen = engine.api.inspect_container(f"zun-{uuid}")
            except docker.errors.NotFound:
                return None
            running = seen["Id"] != old and seen["State"]["Running"]
            status = berth.get(f"/v1/containers/{uuid}").json()["status"]
            return seen["Id"] if running and status == "Running" else None

        new = wait_for(rebuilt, 120, interval=0.2, what="berth to rebuild the container")
        print(f"\n[berth] auto_heal container removed from Docker: rebuilt as "
              f"{str(new)[:12]}, Running")
        actions = berth.get(f"/v1/containers/{uuid}/container_actions").json()
        assert "rebuild" in [a["action"] for a in actions["containerActions"]]
    finally:
        engine.close()
        berth.delete(f"/v1/containers/{uuid}", params={"force": "true"})
