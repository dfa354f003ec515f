"""P9: a capsule of two members, create→Running through the API, sequential.

Baseline, in the same run: the same pod made by hand with the Docker SDK, the way the
docker capsule driver makes it: the sandbox (berth's own image, IPC shareable), then
two members joining its network and IPC namespaces, each ``docker run -d``
(``common.run_detached``, which returns after the start). berth's time runs from the
POST until the API shows the capsule Running (GET polled every 10 ms). Goal: ratio ≤ 1.15.
"""

from __future__ import annotations

import time
from typing import Any

import docker

from bench.common import (
    COMMAND,
    IMAGE,
    Berth,
    Result,
    docker_client,
    engine_url,
    median,
    name,
    ratio,
    run_detached,
    settle,
    wait,
)
from berth.compute.capsules import sandbox
from berth.runtime.docker.driver import DockerRuntime

HEADERS = {"OpenStack-API-Version": "container 1.40"}


def p9(berth: Berth, runs: int = 12, poll: float = 0.01) -> Result:
    client = docker_client()
    _ensure_sandbox_image()
    times: dict[str, list[float]] = {"docker": [], "berth": []}
    try:
        for _ in range(2):                       # warm both paths
            _docker_pod(client)
            _berth_capsule(berth, poll)
        for i in range(runs):
            for side in ("docker", "berth") if i % 2 == 0 else ("berth", "docker"):
                settle(window=0.2)
                times[side].append(_docker_pod(client) if side == "docker"
                                   else _berth_capsule(berth, poll))
    finally:
        client.close()
    b, d = median(times["berth"]), median(times["docker"])
    r = ratio(b, d)
    return Result("P9", f"capsule (2 members) create→Running, median of {runs}", b, d, "s",
                  "ratio ≤ 1.15", r is not None and r <= 1.15, r,
                  {"berth_all": times["berth"], "docker_all": times["docker"]})


def _ensure_sandbox_image() -> None:
    runtime = DockerRuntime(engine_url())
    try:
        runtime.inspect_image(sandbox.DEFAULT_IMAGE)
    except Exception:  # noqa: BLE001 - absent: make it, as the agent would
        sandbox.make_default_image(runtime, sandbox.DEFAULT_IMAGE)
    finally:
        runtime.close()


def _docker_pod(client: docker.DockerClient) -> float:
    t0 = time.perf_counter()
    pod = run_detached(client, sandbox.DEFAULT_IMAGE, name=name("p9s"),
                       ipc_mode="shareable", labels={"bench": "1"})
    shared = f"container:{pod.id}"
    members = [run_detached(client, IMAGE, COMMAND, name=name("p9m"), network_mode=shared,
                            ipc_mode=shared, mem_limit="32m", cpu_shares=102,
                            labels={"bench": "1"})
               for _ in range(2)]
    wall = time.perf_counter() - t0
    for c in [*members, pod]:
        c.remove(force=True)
    return wall


def _berth_capsule(berth: Berth, poll: float) -> float:
    def member(n: str) -> dict[str, Any]:
        return {"image": IMAGE, "name": n, "imagePullPolicy": "IfNotPresent",
                "command": COMMAND, "resources": {"requests": {"cpu": 0.1, "memory": 32}}}
    template = {"kind": "capsule", "metadata": {"name": name("p9")},
                "spec": {"containers": [member("a"), member("b")]}}
    t0 = time.perf_counter()
    r = berth.http.post("/v1/capsules/", json={"template": template}, headers=HEADERS)
    r.raise_for_status()
    uuid = r.json()["uuid"]

    def status() -> str | None:
        got = berth.http.get(f"/v1/capsules/{uuid}", headers=HEADERS)
        return got.json()["status"] if got.status_code == 200 else None
    wait(lambda: status() in ("Running", "Error"), 60, poll)
    wall = time.perf_counter() - t0
    berth.http.delete(f"/v1/capsules/{uuid}")
    wait(lambda: status() is None, 60, 0.02)
    return wall
