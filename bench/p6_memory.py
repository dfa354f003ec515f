"""P6: resident memory of berth with 100 running containers. berth serve runs the API,
the scheduler and the agent in one process, so its RSS is an upper bound of the
agent's. Baseline: kubelet's documented density range, 50–100 MiB.

The figure is the settled one: RSS once the node has run its 100 containers for
``SETTLE`` seconds with no API traffic (longer than the 30 s after which the threads
a burst of creates started retire, and than the periodic state sync). The RSS right
after the last container reached Running (the end of the burst of creates) is in the
result's detail as ``burst_end_rss_mib``."""

from __future__ import annotations

import concurrent.futures as cf
import time

from bench.common import Berth, Result, name, wait


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


SETTLE = 45.0


def settled_rss_mib(pid: int, settle: float = SETTLE) -> float:
    time.sleep(settle)
    return rss_mib(pid)


def p6(shared: Berth, n: int = 100) -> Result:
    # A berth process of its own: the shared one carries what earlier benchmarks left
    # in its heap (a 1,000-row list, 50 concurrent creates), which is not this measure.
    berth = Berth("[quota]\ncontainers = -1\nmemory = -1\ncpu = -1\ndisk = -1\n"
                  "[compute]\ncpu_allocation_ratio = 64\n")
    try:
        return _measure(berth, n)
    finally:
        berth.stop()


def _measure(berth: Berth, n: int) -> Result:
    assert berth.proc.proc is not None
    pid = berth.proc.proc.pid
    idle = rss_mib(pid)
    with cf.ThreadPoolExecutor(10) as pool:
        uuids = list(pool.map(lambda i: berth.run(name("p6")), range(n)))
    wait(lambda: all(berth.list_status().get(u) == "Running" for u in uuids), 600, 0.2)
    burst = rss_mib(pid)
    loaded = settled_rss_mib(pid)
    berth.delete_all(600)
    return Result("P6", f"berth serve RSS with {n} running containers (settled)", loaded,
                  100.0, "MiB", "≤ 80 MiB", loaded <= 80, loaded / 100.0,
                  {"idle_rss_mib": idle, "burst_end_rss_mib": burst})
