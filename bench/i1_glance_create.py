"""I1, I2: create→Running of a container from a Glance image (``image_driver =
glance``), against ``docker load`` of the same tarball then ``docker run -d``.

The image is the test busybox saved (``docker save``) under a reference of the run's
own and uploaded to Glance; before every run on either side that reference is untagged
in the engine, so that both sides load the tarball. **I1** (first): berth's cache is
emptied before each run, so berth finds the image in Glance, downloads it (checksum
checked), loads it and runs it. **I2** (cached): the tarball stays in berth's cache;
berth finds the image in Glance, sees the same checksum, downloads nothing, loads it
and runs it. The baseline loads the tarball from a local file (``docker load``) and
runs it (``common.run_detached``); berth's containers are on Docker's default bridge
too (``[network]driver = docker``). berth's time runs from the POST until the API shows
Running (GET polled every 10 ms); the sides alternate. Needs Glance and Keystone up
(``.ci/ci-services.sh start keystone glance``). Goals: I1 ratio ≤ 1.5, I2 ≤ 1.25.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable

import docker
import httpx

from bench.common import (
    COMMAND,
    IMAGE,
    BerthProcess,
    Result,
    docker_client,
    engine_conf,
    median,
    name,
    ratio,
    run_detached,
    settle,
    wait,
)

GLANCE = os.environ.get("BERTH_GLANCE_URL", "http://127.0.0.1:9292")
KEYSTONE = os.environ.get("BERTH_KEYSTONE_URL", "http://127.0.0.1:5001/v3")
# Docker's default bridge on both sides: the baseline's container is on it too, and
# berth's local networks are P1's subject, not this one's.
GLANCE_CONF = ("[network]\ndriver = docker\n"
               f"[glance_client]\nauth_type = password\nauth_url = {KEYSTONE}\n"
               "username = admin\npassword = admin\nproject_name = admin\n"
               "user_domain_id = default\nproject_domain_id = default\n"
               "[quota]\ncontainers = -1\nmemory = -1\ncpu = -1\ndisk = -1\n")


def i1(_berth: object, runs: int = 8, poll: float = 0.01) -> Result:
    return _measure("I1", "first create→Running from Glance (download)", cached=False,
                    goal=1.5, runs=runs, poll=poll)


def i2(_berth: object, runs: int = 8, poll: float = 0.01) -> Result:
    return _measure("I2", "create→Running from Glance, cached (no download)", cached=True,
                    goal=1.25, runs=runs, poll=poll)


def _token() -> str:
    r = httpx.post(f"{KEYSTONE}/auth/tokens", timeout=30, json={"auth": {
        "identity": {"methods": ["password"], "password": {"user": {
            "name": "admin", "domain": {"id": "default"}, "password": "admin"}}},
        "scope": {"project": {"name": "admin", "domain": {"id": "default"}}}}})
    r.raise_for_status()
    return r.headers["X-Subject-Token"]


def _measure(bid: str, measure: str, cached: bool, goal: float, runs: int,
             poll: float) -> Result:
    client = docker_client()
    scratch = tempfile.mkdtemp(prefix=f"berth-{bid.lower()}-")
    ref = f"bench-glance/busybox:{uuid.uuid4().hex[:8]}"
    client.images.get(IMAGE).tag(ref)
    tarball = os.path.join(scratch, "image.tar")
    subprocess.run(["docker", "save", "-o", tarball, ref], check=True, timeout=120)
    size = os.path.getsize(tarball)
    glance = httpx.Client(base_url=f"{GLANCE}/v2", timeout=120,
                          headers={"X-Auth-Token": _token()})
    made = glance.post("/images", json={"name": f"bench-{ref.rsplit(':', 1)[1]}",
                                        "container_format": "docker", "disk_format": "raw"})
    made.raise_for_status()
    image_id = made.json()["id"]
    with open(tarball, "rb") as data:
        glance.put(f"/images/{image_id}/file", content=data,
                   headers={"Content-Type": "application/octet-stream"}).raise_for_status()
    berth = BerthProcess(engine_conf() + GLANCE_CONF).start(timeout=180)
    images_dir = os.path.join(str(berth.dir), "state", "images")
    http = httpx.Client(base_url=berth.url, timeout=120, headers={
        "X-Auth-Token": "admin", "OpenStack-API-Version": "container 1.40"})

    def untag() -> None:
        try:
            client.images.remove(ref)
        except docker.errors.ImageNotFound:
            pass

    def before_berth() -> None:
        untag()
        if not cached:
            for path in glob.glob(os.path.join(images_dir, "*")):
                os.unlink(path)

    times: dict[str, list[float]] = {"docker": [], "berth": []}
    sides: dict[str, Callable[[], float]] = {
        "docker": lambda: _docker_side(client, tarball, ref),
        "berth": lambda: _berth_side(http, image_id, poll)}
    try:
        untag()
        _docker_side(client, tarball, ref)               # warm both paths (and the cache)
        untag()
        _berth_side(http, image_id, poll)
        for i in range(runs):
            for side in ("docker", "berth") if i % 2 == 0 else ("berth", "docker"):
                before_berth() if side == "berth" else untag()
                settle(window=0.2)
                times[side].append(sides[side]())
    finally:
        http.close()
        berth.stop()
        for c in client.containers.list(all=True, filters={"label": f"berth.host={berth.host}"}):
            c.remove(force=True)
        untag()
        client.close()
        glance.delete(f"/images/{image_id}")
        glance.close()
        shutil.rmtree(scratch, ignore_errors=True)
    b, d = median(times["berth"]), median(times["docker"])
    r = ratio(b, d)
    return Result(bid, f"{measure}, median of {runs}", b, d, "s", f"ratio ≤ {goal}",
                  r is not None and r <= goal, r,
                  {"berth_all": times["berth"], "docker_all": times["docker"],
                   "tarball_bytes": size})


def _docker_side(client: docker.DockerClient, tarball: str, ref: str) -> float:
    t0 = time.perf_counter()
    with open(tarball, "rb") as data:
        list(client.api.load_image(data))
    c = run_detached(client, ref, COMMAND, name=name("i1d"), mem_limit="64m",
                     cpu_shares=102, labels={"bench": "1"})
    wall = time.perf_counter() - t0
    c.remove(force=True)
    return wall


def _berth_side(http: httpx.Client, image_id: str, poll: float) -> float:
    t0 = time.perf_counter()
    r = http.post("/v1/containers", params={"run": "true"}, json={
        "name": name("i1b"), "image": image_id, "image_driver": "glance",
        "command": COMMAND, "image_pull_policy": "always", "memory": 64, "cpu": 0.1})
    r.raise_for_status()
    uuid_ = str(r.json()["uuid"])

    def status() -> str | None:
        got = http.get(f"/v1/containers/{uuid_}")
        return got.json().get("status") if got.status_code == 200 else None

    wait(lambda: status() in ("Running", "Error"), 120, poll)
    wall = time.perf_counter() - t0
    if status() != "Running":
        raise RuntimeError(f"container {uuid_} from Glance image {image_id} did not run: "
                           f"{http.get(f'/v1/containers/{uuid_}').json().get('status_reason')}")
    http.delete(f"/v1/containers/{uuid_}", params={"force": "True"})
    wait(lambda: status() is None, 120, 0.02)
    return wall
