"""berth-compute adopts a container Zun made, as it is: named ``zun-<uuid>`` with only
the user's labels (Zun puts none of its own), its row imported from Zun's database by
``berth db import-zun``. The real Docker engine; ``berth serve`` on the imported
database. Not restarted (StartedAt unchanged), its state followed from Docker's events,
and every action works on it."""

from __future__ import annotations

import datetime as dt
import uuid as uuidlib

import docker
import pytest
from support.berth_proc import BerthProcess, wait_for
from support.zun_database import insert, url_of

from .conftest import full_only
from .test_import_zun import import_zun

IMAGE = "127.0.0.1:5000/berth-test/busybox:latest"


def zun_made(client, made, uuid: str):  # type: ignore[no-untyped-def]
    """A container as Zun 18's docker driver makes one on the cni network path: its
    name, the user's labels only, no network of Docker's (Zun plugs it by CNI)."""
    client.images.pull(IMAGE)
    name = f"zun-{uuid}"
    made.append(name)
    c = client.containers.run(IMAGE, ["sleep", "3600"], name=name, detach=True,
                              labels={"app": "takeover"}, network_mode="none",
                              hostname=uuid[:12])
    c.reload()
    return c


@full_only
def test_a_running_zun_container_is_adopted_without_a_restart(engine, zun_db, tmp_path) -> None:
    client, made = engine
    uuid = str(uuidlib.uuid4())
    c = zun_made(client, made, uuid)
    started = c.attrs["State"]["StartedAt"]
    # one Zun made whose row stays behind (another Zun's, or left out of the import)
    stray = zun_made(client, made, str(uuidlib.uuid4()))
    proc = BerthProcess(host=f"takeover-{uuid[:8]}", state_dir=str(tmp_path))
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    insert(zun_db, "container", id=1, uuid=uuid, name="adopted", project_id="admin",
           user_id="admin", image=IMAGE, image_driver="docker", command='["sleep", "3600"]',
           cpu=0.1, memory="64", status="Running", host=proc.host, container_id=c.id,
           started_at=now, created_at=now, container_type=0, labels='{"app": "takeover"}',
           environment="{}", addresses="{}", ports="[]", security_groups="[]",
           restart_policy="{}", healthcheck="{}", exposed_ports="{}", entrypoint="[]",
           interactive=0, tty=0, auto_remove=0, auto_heal=0, privileged=0)
    done = import_zun(proc.conf, url_of(zun_db))
    assert done.returncode == 0, done.stderr
    proc.start(timeout=90)
    try:
        with proc.http() as http:
            def status() -> str:
                return http.get(f"/v1/containers/{uuid}").json().get("status")

            assert status() == "Running"
            # docker kill: the API shows it from Docker's events, not a poll
            c.kill()
            wait_for(lambda: status() == "Stopped", timeout=15, what="Stopped after a kill")
            # ... but first: it was never restarted by the takeover
            c.reload()
            assert c.attrs["State"]["StartedAt"] == started
            assert http.post(f"/v1/containers/{uuid}/start").status_code == 202
            wait_for(lambda: status() == "Running", timeout=30, what="Running after start")
            r = http.post(f"/v1/containers/{uuid}/execute", json={"command": "echo adopted"})
            assert r.status_code == 200 and r.json()["output"].strip() == "adopted"
            assert http.get(f"/v1/containers/{uuid}/logs").status_code == 200
            actions = http.get(f"/v1/containers/{uuid}/container_actions").json()
            assert {a["action"] for a in actions["containerActions"]} >= {"start"}
            assert http.post(f"/v1/containers/{uuid}/stop").status_code == 202
            wait_for(lambda: status() == "Stopped", timeout=30, what="Stopped after stop")
            assert http.delete(f"/v1/containers/{uuid}").status_code == 204
            wait_for(lambda: http.get(f"/v1/containers/{uuid}").status_code == 404,
                     timeout=30, what="the row gone")
        with pytest.raises(docker.errors.NotFound):
            client.containers.get(f"zun-{uuid}")
        stray.reload()                                  # never berth's to remove
        assert stray.status == "running"
    finally:
        proc.stop()
        if proc.log.exists() and proc.proc is not None and proc.proc.returncode not in (0, None):
            print(proc.log_text()[-3000:])
