"""The in-place takeover on the real Zun 18 (docs/migrating-from-zun.md): Zun makes
containers (running, stopped, paused, on its Neutron network), ``zun-ci.sh takeover``
stops Zun, imports its database and starts berth on Zun's engine and host; each
container is then berth's with the same uuid, name, status and addresses, the running
ones not restarted (StartedAt), and every action works. Then the way back:
``zun-ci.sh handback`` stops berth and starts Zun, which serves the same containers.

It stops and restarts Zun's services, so it runs only when asked:
``BERTH_ZUN_TAKEOVER=1`` beside ``BERTH_ZUN_URL`` (``eval "$(bash .ci/zun-ci.sh env |
sed 's/^/export /')"``)."""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path

import docker
import httpx
import pytest
from support.berth_proc import wait_for

from compat.zun_client import NEUTRON_URL, VERSION, ZUN_IMAGE, ZUN_NETWORK

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(os.environ.get("BERTH_ZUN_TAKEOVER") != "1",
                                reason="opt-in: BERTH_ZUN_TAKEOVER=1 (it stops Zun's services)")


def zun_ci(action: str) -> str:
    out = subprocess.run(["bash", str(ROOT / ".ci" / "zun-ci.sh"), action], cwd=ROOT,
                         capture_output=True, text=True, timeout=600, check=False,
                         env=dict(os.environ, BERTH_PYTHON=os.environ.get(
                             "BERTH_PYTHON", str(Path(os.sys.executable)))))
    assert out.returncode == 0, f"zun-ci.sh {action}: {out.stderr[-3000:]}"
    return out.stdout


def berth_from(takeover_output: str) -> httpx.Client:
    """A client (admin, the latest version) of the berth ``zun-ci.sh takeover`` started:
    its address is the ``BERTH_URL=`` line of the output."""
    url = next(line.split("=", 1)[1] for line in takeover_output.splitlines()
               if line.startswith("BERTH_URL="))
    return httpx.Client(base_url=url, timeout=120, headers={
        "X-Auth-Token": "admin", "OpenStack-API-Version": VERSION})


def settle(client: httpx.Client, uuid_: str, want: str, timeout: float = 180) -> dict:
    def state() -> dict | None:
        c = client.get(f"/v1/containers/{uuid_}").json()
        return c if c.get("status") == want else None

    return wait_for(state, timeout, interval=0.5, what=f"{uuid_} to be {want}")  # type: ignore[return-value]


def test_zun_s_containers_become_berth_s_in_place_and_go_back(zun: httpx.Client) -> None:
    neutron = httpx.Client(base_url=f"{NEUTRON_URL}/v2.0", timeout=30)
    net = neutron.get("/networks", params={"name": ZUN_NETWORK}).json()["networks"][0]["id"]
    made: dict[str, str] = {}
    for kind in ("running", "stopped", "paused"):
        r = zun.post("/v1/containers", params={"run": "true"}, json={
            "name": f"takeover-{kind}-{uuid.uuid4().hex[:6]}", "image": ZUN_IMAGE,
            "command": ["sleep", "3600"], "image_pull_policy": "ifnotpresent",
            "nets": [{"network": net}]})
        assert r.status_code == 202, r.text
        made[kind] = r.json()["uuid"]
        # one at a time: Zun's CNI daemon fails concurrent plugs here (docs/zun-beside.md)
        settle(zun, made[kind], "Running")
    zun.post(f"/v1/containers/{made['stopped']}/stop", headers={"Connection": "close"})
    zun.post(f"/v1/containers/{made['paused']}/pause", headers={"Connection": "close"})
    settle(zun, made["stopped"], "Stopped")
    settle(zun, made["paused"], "Paused")
    before = {k: zun.get(f"/v1/containers/{u}").json() for k, u in made.items()}
    engine = docker.DockerClient(base_url=os.environ["BERTH_ZUN_DOCKER_HOST"])
    started = engine.containers.get(f"zun-{made['running']}").attrs["State"]["StartedAt"]

    out = zun_ci("takeover")
    berth = berth_from(out)
    try:
        for kind, u in made.items():
            got = berth.get(f"/v1/containers/{u}").json()
            for key in ("uuid", "name", "status", "addresses", "image", "host"):
                assert got[key] == before[kind][key], (kind, key)
        assert engine.containers.get(f"zun-{made['running']}").attrs["State"][
            "StartedAt"] == started
        r = berth.post(f"/v1/containers/{made['running']}/execute",
                       json={"command": "echo taken"})
        assert r.status_code == 200 and r.json()["output"].strip() == "taken"
        assert berth.post(f"/v1/containers/{made['paused']}/unpause").status_code == 202
        settle(berth, made["paused"], "Running", 60)
        assert berth.post(f"/v1/containers/{made['stopped']}/start").status_code == 202
        settle(berth, made["stopped"], "Running", 120)
        assert berth.post(f"/v1/containers/{made['running']}/stop").status_code == 202
        settle(berth, made["running"], "Stopped", 60)
        assert berth.post(f"/v1/containers/{made['running']}/start").status_code == 202
        settle(berth, made["running"], "Running", 120)
        # a delete frees its Neutron port
        port = before["paused"]["addresses"][net][0]["port"]
        assert berth.delete(f"/v1/containers/{made['paused']}",
                            params={"force": "true"}).status_code == 204
        wait_for(lambda: neutron.get(f"/ports/{port}").status_code == 404, 60,
                 interval=0.5, what="the deleted container's port to go")
    finally:
        berth.close()
        zun_ci("handback")
    # the way back: Zun serves the containers it left (its database was never written)
    for kind in ("running", "stopped"):
        assert zun.get(f"/v1/containers/{made[kind]}").json()["uuid"] == made[kind]
    for u in (made["running"], made["stopped"]):
        zun.delete(f"/v1/containers/{u}", params={"force": "true"},
                   headers={"Connection": "close"})
    engine.close()
    neutron.close()
