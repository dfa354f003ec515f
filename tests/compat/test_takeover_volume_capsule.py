"""The in-place takeover on the real Zun 18, the two kinds ``test_takeover_kinds`` cannot
make: a running container with Cinder volumes and a running capsule, both made through
Zun's API.

The container mounts two Cinder volumes: one made in Cinder beforehand (named by its id)
and one Zun makes (a size, so Zun removes it with the container). A file is written on
each through Zun. Then ``zun-ci.sh takeover``: berth shows the container and the capsule
as Zun left them (uuid, name, status, addresses; the capsule's members), carries Zun's
volume mappings (the same volumes at the same paths), restarts nothing (Docker's
StartedAt of the container, the sandbox and the members unchanged), reads both files
through its exec, and a delete through berth detaches the volumes (the one made
beforehand ``available`` again, Zun's own deleted), unmounts them and frees the
Neutron port; the capsule's delete removes its sandbox and members and frees its port.
Then ``zun-ci.sh handback``.

Zun 18 cannot make either kind unaided here: zun-ci.sh patches two of its bugs
(``.ci/zun_ci_patches.py``: a capsule's sandbox plugged as a container, os-brick given
no connection info for an NFS volume), gives Zun a Keystone-checked cinder-api on the
shared Cinder and mounts Zun's volume directory so that its node engine sees the mounts.

Opt-in like ``test_takeover``: ``BERTH_ZUN_TAKEOVER=1`` beside ``BERTH_ZUN_URL``."""

from __future__ import annotations

import configparser
import json
import os
import time
import uuid
from pathlib import Path

import docker
import httpx
import pytest
import sqlalchemy as sa
from support.berth_proc import wait_for

from compat.test_takeover import berth_from, zun_ci
from compat.test_takeover_kinds import settled
from compat.zun_client import NEUTRON_URL, ZUN_IMAGE, ZUN_NETWORK, keystone_token
from compat.zun_services import capsule_on_zun

pytestmark = pytest.mark.skipif(os.environ.get("BERTH_ZUN_TAKEOVER") != "1",
                                reason="opt-in: BERTH_ZUN_TAKEOVER=1 (it stops Zun's services)")
BASE = Path(os.environ.get("BERTH_ZUN_BASE", "/var/tmp/berth-ci/zun"))
CINDER_URL = os.environ.get("BERTH_ZUN_CINDER_URL", "http://127.0.0.1:8786/v3")
MAPPING = sa.text(
    "SELECT m.uuid, m.container_uuid, m.container_path, v.uuid AS volume_uuid, "
    "v.cinder_volume_id, v.volume_provider, v.auto_remove, v.host, v.connection_info "
    "FROM volume_mapping m JOIN volume v ON v.id = m.volume_id "
    "WHERE m.container_uuid = :c ORDER BY m.container_path")


def connection(conf: Path) -> str:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.read(conf)
    return parser["database"]["connection"]


def mappings(url: str, container: str) -> list[dict]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            rows = [dict(r._mapping) for r in conn.execute(MAPPING, {"c": container})]
    finally:
        engine.dispose()
    for row in rows:
        row["auto_remove"] = bool(row["auto_remove"])
    return rows


def started(engine: docker.DockerClient, uuid_: str) -> str:
    return engine.containers.get(f"zun-{uuid_}").attrs["State"]["StartedAt"]


def mounted(path: str) -> bool:
    return any(line.split()[4] == path for line in Path("/proc/self/mountinfo").read_text()
               .splitlines())


def test_cinder_volumes_and_a_running_capsule_are_taken_over(zun: httpx.Client) -> None:
    neutron = httpx.Client(base_url=f"{NEUTRON_URL}/v2.0", timeout=30)
    net = neutron.get("/networks", params={"name": ZUN_NETWORK}).json()["networks"][0]["id"]
    token, project = keystone_token()
    cinder = httpx.Client(base_url=f"{CINDER_URL}/{project}", timeout=60,
                          headers={"X-Auth-Token": token})
    engine = docker.DockerClient(base_url=os.environ["BERTH_ZUN_DOCKER_HOST"])
    tag = uuid.uuid4().hex[:6]
    container, capsule, members = "", "", []
    r = cinder.post("/volumes", json={"volume": {"size": 1, "name": f"takeover-pre-{tag}"}})
    assert r.status_code == 202, r.text
    pre = r.json()["volume"]["id"]

    def volume_status(vid: str) -> str | None:
        got = cinder.get(f"/volumes/{vid}")
        return None if got.status_code == 404 else got.json()["volume"]["status"]

    try:
        wait_for(lambda: volume_status(pre) == "available", 120, interval=1,
                 what="the volume made beforehand to be available")
        r = zun.post("/v1/containers", params={"run": "true"}, json={
            "name": f"takeover-vol-{tag}", "image": ZUN_IMAGE, "command": ["sleep", "3600"],
            "image_pull_policy": "ifnotpresent", "nets": [{"network": net}],
            "mounts": [{"source": pre, "destination": "/pre"},
                       {"source": "", "size": 1, "destination": "/data"}]})
        assert r.status_code == 202, r.text
        container = r.json()["uuid"]
        assert settled(zun, f"/v1/containers/{container}")["status"] == "Running"
        r = zun.post(f"/v1/containers/{container}/execute", json={
            "command": "sh -c 'echo zun-data > /data/f && echo zun-pre > /pre/f'"})
        assert r.status_code == 200 and r.json()["exit_code"] == 0, r.text
        capsule = capsule_on_zun(zun, f"takeover-cap-{tag}")
        before = zun.get(f"/v1/containers/{container}").json()
        before_capsule = zun.get(f"/v1/capsules/{capsule}").json()
        members = [c["uuid"] for c in before_capsule["containers"]]
        assert before["status"] == "Running", before["status_reason"]
        assert before_capsule["status"] == "Running", before_capsule["status_reason"]
        assert members and all(c["status"] == "Running" for c in before_capsule["containers"])
        zun_maps = mappings(connection(BASE / "etc" / "zun.conf"), container)
        assert [m["container_path"] for m in zun_maps] == ["/data", "/pre"]
        made = next(m["cinder_volume_id"] for m in zun_maps if m["container_path"] == "/data")
        assert volume_status(pre) == volume_status(made) == "in-use"
        mountpoints = [str(BASE / "state" / "mnt" / m["volume_uuid"]) for m in zun_maps]
        assert all(mounted(p) for p in mountpoints)
        starts = {u: started(engine, u) for u in (container, capsule, *members)}

        berth = berth_from(zun_ci("takeover"))
        # the caller's token goes to the CI's Cinder (noauth: "<user>:<project>")
        berth.headers["X-Auth-Token"] = f"admin:{project}"
        try:
            got = berth.get(f"/v1/containers/{container}").json()
            for key in ("uuid", "name", "status", "addresses", "image", "host"):
                assert got[key] == before[key], key
            berth_db = connection(BASE / "berth" / "berth.conf")
            carried = mappings(berth_db, container)
            # Cinder's connection info as Zun stored it, inside berth's attachment record
            assert [json.loads(m.pop("connection_info"))["connection_info"] for m in carried
                    ] == [json.loads(m["connection_info"]) for m in zun_maps]
            assert carried == [{k: v for k, v in m.items() if k != "connection_info"}
                               for m in zun_maps]
            got_capsule = berth.get(f"/v1/capsules/{capsule}").json()
            for key in ("uuid", "name", "status", "addresses"):
                assert got_capsule[key] == before_capsule[key], key
            assert [(c["uuid"], c["status"]) for c in got_capsule["containers"]] == [
                (c["uuid"], c["status"]) for c in before_capsule["containers"]]
            assert {u: started(engine, u) for u in starts} == starts   # none restarted
            r = berth.post(f"/v1/containers/{container}/execute",
                           json={"command": "cat /data/f /pre/f"})
            assert r.status_code == 200 and r.json()["output"].split() == [
                "zun-data", "zun-pre"], r.text

            # the deletes: volumes detached and unmounted, ports freed
            port = before["addresses"][net][0]["port"]
            assert berth.delete(f"/v1/containers/{container}",
                                params={"force": "true"}).status_code == 204
            wait_for(lambda: berth.get(f"/v1/containers/{container}").status_code == 404,
                     120, interval=0.5, what="the container's row to go")
            wait_for(lambda: neutron.get(f"/ports/{port}").status_code == 404, 60,
                     interval=0.5, what="the container's port to go")
            wait_for(lambda: volume_status(pre) == "available", 120, interval=1,
                     what="the volume made beforehand to be available again")
            wait_for(lambda: volume_status(made) is None, 120, interval=1,
                     what="the volume Zun made to be deleted")
            assert not any(mounted(p) for p in mountpoints)
            with pytest.raises(docker.errors.NotFound):
                engine.containers.get(f"zun-{container}")
            cap_port = before_capsule["addresses"][net][0]["port"]
            assert berth.delete(f"/v1/capsules/{capsule}").status_code == 204
            wait_for(lambda: berth.get(f"/v1/capsules/{capsule}").status_code == 404, 120,
                     interval=0.5, what="the capsule to go")
            for u in (capsule, *members):
                wait_for(lambda u=u: not engine.containers.list(
                    all=True, filters={"name": f"zun-{u}"}), 60, interval=0.5,
                    what=f"zun-{u} to go")
            wait_for(lambda: neutron.get(f"/ports/{cap_port}").status_code == 404, 60,
                     interval=0.5, what="the capsule's port to go")
        finally:
            berth.close()
            zun_ci("handback")
    finally:
        # Zun's database still holds what berth deleted (it is never written): Zun
        # forgets them now; what is left in Docker, Neutron and Cinder goes by name
        if container:
            zun.delete(f"/v1/containers/{container}", params={"force": "true"},
                       headers={"Connection": "close"})
        if capsule:
            zun.delete(f"/v1/capsules/{capsule}", headers={"Connection": "close"})
        time.sleep(5)
        for u in filter(None, (container, capsule, *members)):
            for leftover in engine.containers.list(all=True, filters={"name": f"zun-{u}"}):
                leftover.remove(force=True)
            for p in neutron.get("/ports", params={"device_id": u}).json()["ports"]:
                neutron.delete(f"/ports/{p['id']}")
        if volume_status(pre) not in ("available", None):
            cinder.post(f"/volumes/{pre}/action", json={"os-reset_status": {
                "status": "available", "attach_status": "detached"}})
        cinder.delete(f"/volumes/{pre}")
        engine.close()
        cinder.close()
        neutron.close()
