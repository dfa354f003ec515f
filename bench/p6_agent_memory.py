"""P6 (the agent alone): resident memory of one ``berth-compute`` with 100 running
containers, in the multi-process deployment (berth-api + berth-compute over RabbitMQ,
here on one SQLite file). Needs RabbitMQ with the ``berth`` vhost and user
(``.ci/ci-services.sh start rabbitmq``)."""

from __future__ import annotations

import concurrent.futures as cf
import tempfile
import uuid
from pathlib import Path

from bench.common import COMMAND, IMAGE, Result, engine_conf, name, wait
from bench.p6_memory import rss_mib, settled_rss_mib


def p6_agent(_berth: object, n: int = 100) -> Result:
    from integration.conftest import Deployment, ServiceProcess
    from support.berth_proc import bin_path

    root = Path(tempfile.mkdtemp(prefix="berth-p6-"))
    dep = Deployment(f"sqlite:///{root / 'berth.sqlite'}", f"bench-p6-{uuid.uuid4().hex[:8]}",
                     root)
    try:
        done = dep.berth("db", "upgrade")
        assert done.returncode == 0, done.stderr
        host = f"bench-p6-{dep.tag}"
        conf = dep.conf(host, f"host = {host}\n[compute]\ncpu_allocation_ratio = 64\n"
                         + engine_conf())
        agent = ServiceProcess(f"berth-compute {host}",
                               [bin_path("berth-compute"), "--config-file", str(conf)],
                               root / "agent.log").start()
        dep.agents[host] = agent
        wait(lambda: f"compute agent {host} is up" in agent.log_text(), 120, 0.2)
        dep.start_api()
        http = dep.http()
        http.put("/v1/quotas/admin", json={"containers": -1, "cpu": -1, "memory": -1,
                                           "disk": -1}).raise_for_status()
        idle = rss_mib(agent.pid)

        def run(_: int) -> str:
            r = http.post("/v1/containers", params={"run": "true"}, json={
                "name": name("p6a"), "image": IMAGE, "command": COMMAND,
                "image_pull_policy": "ifnotpresent", "memory": 64, "cpu": 0.1})
            r.raise_for_status()
            return str(r.json()["uuid"])

        with cf.ThreadPoolExecutor(10) as pool:
            uuids = list(pool.map(run, range(n)))

        def all_running() -> bool:
            seen = {c["uuid"]: c["status"] for c in
                    http.get("/v1/containers", params={"limit": 1000}).json()["containers"]}
            return all(seen.get(u) == "Running" for u in uuids)

        wait(all_running, 600, 0.5)
        burst = rss_mib(agent.pid)
        loaded = settled_rss_mib(agent.pid)
        for u in uuids:
            http.delete(f"/v1/containers/{u}", params={"force": "True"})
        # Let the agent finish the deletes before the deployment goes, rather than
        # the teardown removing containers under it.
        wait(lambda: not http.get("/v1/containers", params={"limit": 1000})
             .json()["containers"], 300, 0.5)
        http.close()
    finally:
        dep.close()
    return Result("P6a", f"berth-compute (agent alone) RSS with {n} running containers "
                  f"(settled)", loaded, 100.0, "MiB", "≤ 80 MiB", loaded <= 80, loaded / 100.0,
                  {"idle_rss_mib": idle, "burst_end_rss_mib": burst})
