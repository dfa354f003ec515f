"""P1N: create→Running of a container on a network, against ``docker run`` on a
user-defined Docker network, sequential and paired as P1 (berth's side timed, as
P1's, to the row's write of Running).

berth's container lands on its project's default local network (a bridge of its own,
an address from berth's IPAM, its security group's rules laid before the interface
exists, the plug after ``docker start``); Docker's on a user-defined bridge network
made for the run (``docker network create``: a bridge of its own, an address from
Docker's IPAM, its iptables isolation rules, the plug inside ``docker start``). Both
networks exist before the measured runs, so neither pays for making its bridge.
"""

from __future__ import annotations

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
)
from bench.p1_p2_create import _p1_berth

NETWORK = "berth-bench-p1n"


def p1n(berth: Berth, runs: int = 30) -> Result:
    client = docker_client()
    times: dict[str, list[float]] = {"docker": [], "berth": []}
    for stale in client.networks.list(names=[NETWORK]):
        stale.remove()
    network = client.networks.create(NETWORK, driver="bridge")
    try:
        for _ in range(3):        # warm both paths; berth's first run makes its network
            _p1n_docker(client)
            _p1_berth(berth)
        for i in range(runs):
            for side in ("docker", "berth") if i % 2 == 0 else ("berth", "docker"):
                settle(window=0.2)
                times[side].append(_p1n_docker(client) if side == "docker"
                                   else _p1_berth(berth)[0])
    finally:
        network.remove()
        client.close()
        berth.delete_all()
    b, d = median(times["berth"]), median(times["docker"])
    r = ratio(b, d)
    return Result("P1N", f"create→Running on a network, median of {runs} sequential", b, d,
                  "s", "ratio ≤ 1.15", r is not None and r <= 1.15, r,
                  {"berth_all": times["berth"], "docker_all": times["docker"]})


def _p1n_docker(client: docker.DockerClient) -> float:
    t0 = time.perf_counter()
    c = run_detached(client, IMAGE, COMMAND, name=name("p1n"), network=NETWORK,
                     mem_limit="64m", cpu_shares=102, labels={"bench": "1"})
    wall = time.perf_counter() - t0
    c.remove(force=True)
    return wall
