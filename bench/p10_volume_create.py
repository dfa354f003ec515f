"""P10: create→Running of a container with one new 1 GiB local volume, sequential.

Baseline, in the same run: what the local volume driver does, done by hand around
``docker run``: a sparse 1 GiB file, ``mkfs.ext4``, ``mount -o loop``, then
``docker run -d`` (``common.run_detached``) with the mount point bound in (which returns
after the start). berth's time runs from the POST (``mounts: [{"size": 1, ...}]``) until the
API shows Running (GET polled every 10 ms). Each side removes its container and its
volume (unmount, file deleted) before the next run. Goal: ratio ≤ 1.15.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time

import docker

from bench.common import (
    COMMAND,
    IMAGE,
    Berth,
    Result,
    docker_client,
    median,
    name,
    ratio,
    run_detached,
    settle,
    wait,
)

_GIB = 1024 ** 3


def p10(berth: Berth, runs: int = 16, poll: float = 0.01) -> Result:
    client = docker_client()
    scratch = tempfile.mkdtemp(prefix="berth-p10-")
    times: dict[str, list[float]] = {"docker": [], "berth": []}
    try:
        for _ in range(2):                       # warm both paths
            _docker_side(client, scratch)
            _berth_side(berth, poll)
        for i in range(runs):
            for side in ("docker", "berth") if i % 2 == 0 else ("berth", "docker"):
                settle(window=0.2)
                times[side].append(_docker_side(client, scratch) if side == "docker"
                                   else _berth_side(berth, poll))
    finally:
        client.close()
        berth.delete_all()
        os.rmdir(scratch)
    b, d = median(times["berth"]), median(times["docker"])
    r = ratio(b, d)
    return Result("P10", f"create→Running with a new 1 GiB local volume, median of {runs}",
                  b, d, "s", "ratio ≤ 1.15", r is not None and r <= 1.15, r,
                  {"berth_all": times["berth"], "docker_all": times["docker"]})


def _docker_side(client: docker.DockerClient, scratch: str) -> float:
    image = os.path.join(scratch, "v.img")
    point = os.path.join(scratch, "v")
    t0 = time.perf_counter()
    with open(image, "wb") as f:
        f.truncate(_GIB)
    subprocess.run(["mkfs.ext4", "-F", "-q", image], check=True)
    os.makedirs(point, exist_ok=True)
    subprocess.run(["mount", "-t", "ext4", "-o", "loop", image, point], check=True)
    c = run_detached(client, IMAGE, COMMAND, name=name("p10d"), mem_limit="64m",
                     cpu_shares=102, labels={"bench": "1"}, volumes=[f"{point}:/data"])
    wall = time.perf_counter() - t0
    c.remove(force=True)
    subprocess.run(["umount", point], check=True)
    os.rmdir(point)
    os.unlink(image)
    return wall


def _berth_side(berth: Berth, poll: float) -> float:
    t0 = time.perf_counter()
    r = berth.http.post("/v1/containers", params={"run": "true"}, json={
        "name": name("p10b"), "image": IMAGE, "command": COMMAND,
        "image_pull_policy": "ifnotpresent", "memory": 64, "cpu": 0.1,
        "mounts": [{"size": 1, "destination": "/data"}]})
    r.raise_for_status()
    uuid = str(r.json()["uuid"])
    wait(lambda: berth.status(uuid) == "Running", 60, poll)
    wall = time.perf_counter() - t0
    berth.delete_and_wait(uuid)
    return wall
