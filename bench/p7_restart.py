"""P7: berth restarted (SIGKILL, then start) with 100 running containers; while it was
down, 10 of them were killed in Docker. Measured: time from the new process's start
until the API shows every row as Docker holds it (10 Stopped, 90 Running), and how
many of the 90 containers the restart restarted (their StartedAt changed).
Baseline: kubelet restarts no container when it restarts (0)."""

from __future__ import annotations

import concurrent.futures as cf
import time

from bench.common import Berth, Result, docker_client, name, wait


def p7(berth: Berth, n: int = 100, killed: int = 10) -> Result:
    with cf.ThreadPoolExecutor(10) as pool:
        uuids = list(pool.map(lambda i: berth.run(name("p7")), range(n)))
    wait(lambda: all(berth.list_status().get(u) == "Running" for u in uuids), 600, 0.2)
    client = docker_client()
    try:
        started = {u: client.api.inspect_container(f"zun-{u}")["State"]["StartedAt"]
                   for u in uuids}
        berth.proc.kill()
        for u in uuids[:killed]:
            client.containers.get(f"zun-{u}").kill()
        t0 = time.monotonic()
        berth.proc.start(timeout=120)

        def reconciled() -> bool:
            seen = berth.list_status()
            return all(seen.get(u) == "Stopped" for u in uuids[:killed]) and \
                all(seen.get(u) == "Running" for u in uuids[killed:])

        wait(reconciled, 300, 0.02)
        elapsed = time.monotonic() - t0
        restarts = sum(
            1 for u in uuids[killed:]
            if client.api.inspect_container(f"zun-{u}")["State"]["StartedAt"] != started[u])
    finally:
        client.close()
        berth.delete_all(600)
    return Result("P7", f"restart with {n} running: all rows reconciled; restarts", elapsed,
                  0.0, "s", "≤ 5 s, 0 restarts", elapsed <= 5 and restarts == 0, None,
                  {"restarts": restarts, "killed_while_down": killed})
