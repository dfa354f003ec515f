"""P3: a running container is killed in Docker, behind berth's back; how long until the
API shows it Stopped. Polls the list endpoint, which reads only the database (so the
figure is the agent's event path, not a refresh triggered by the GET).
Baseline: Zun's 60 s sync_container_state interval, its only way to notice."""

from __future__ import annotations

import time

from bench.common import Berth, Result, docker_client, name, percentile, wait


def p3(berth: Berth, runs: int = 30) -> Result:
    client = docker_client()
    lat: list[float] = []
    try:
        for _ in range(runs):
            u = berth.run(name("p3"))
            wait(lambda u=u: berth.list_status().get(u) == "Running", 60)
            t0 = time.perf_counter()
            client.containers.get(f"zun-{u}").kill()
            wait(lambda u=u: berth.list_status().get(u) == "Stopped", 120, 0.005)
            lat.append(time.perf_counter() - t0)
            berth.delete(u)
    finally:
        client.close()
        berth.delete_all()
    p50, p99 = percentile(lat, 50), percentile(lat, 99)
    return Result("P3", "docker kill → API shows Stopped, p99 of 30", p99, 60.0, "s",
                  "p99 ≤ 1 s", p99 <= 1.0, p99 / 60.0, {"p50": p50, "p99": p99, "all": lat})
