"""The scheduler's read of some nodes' usage under their lock (``usages_now``, its
constant lists written into the SQL) counts the same rows on every database."""

from __future__ import annotations

import pytest

from berth.db import containers, nodes
from berth.db.engine import Database
from berth.placement.requests import NodeReservations
from berth.scheduler.host_state import load_host_states, usages_now

pytestmark = pytest.mark.integration


def test_usages_now_reads_each_hosts_containers_and_no_others(any_db: Database) -> None:
    for name in ("n1", "n2", "n3"):
        nodes.upsert_compute_node(any_db, name, {"cpus": 4, "mem_total": 4096})
        nodes.report_service_up(any_db, name, nodes.COMPUTE_BINARY, None)
    for host, status, cpu, memory in [("n1", "Running", 1.0, "512"), ("n1", "Creating", 0.5, "256"),
                                      ("n1", "Error", 2.0, "1024"), ("n2", "Running", 1.5, "100"),
                                      ("n3", "Deleted", 3.0, "300")]:
        containers.create(any_db, {"host": host, "status": status, "cpu": cpu,
                                   "memory": memory})
    states = {h.hostname: h for h in load_host_states(any_db, NodeReservations(), 60, "nova")}
    with any_db.connection() as conn:
        one = usages_now(conn, [states["n2"]])
        three = usages_now(conn, [states["n1"], states["n2"], states["n3"]])
    assert [(h.hostname, h.cpu_used, h.memory_used_mib, h.vcpus_used) for h in one] == \
        [("n2", 1.5, 100, 2)]
    assert [(h.hostname, h.cpu_used, h.memory_used_mib, h.vcpus_used) for h in three] == \
        [("n1", 1.5, 768, 2), ("n2", 1.5, 100, 2), ("n3", 0.0, 0, 0)]
    assert three[0] == states["n1"]     # the read of every node counts the same
