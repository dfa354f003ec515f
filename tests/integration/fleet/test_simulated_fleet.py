"""The fleet benchmark's short version (bench P15 at 50 nodes and 1,000 containers):
50 agents on the simulated engine in one process, behind a berth-api with two
workers, over the run's own RabbitMQ vhost and PostgreSQL database. Correctness only,
never speed: every container ends Running on the node its row names (that node's
engine runs it under the row's engine id), no engine holds a container no row names,
no node holds more than its capacity, and a node's state sync reads its own rows.
The full run is ``python -m bench.fleet`` (docs/benchmarks.md)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from bench.fleet.run import FleetSpec, run

pytestmark = pytest.mark.integration


def test_fifty_simulated_nodes_take_a_thousand_containers(
        rabbit_services: None, tmp_path: Path) -> None:
    spec = FleetSpec(nodes=50, containers=1000, step=250, node_processes=1,
                     api_workers=2, start_latency=0.05, rows_sample=10,
                     idle_seconds=5, idle_settle=0)
    figures: dict[str, Any] = run(spec, tmp_path, out=tmp_path / "out")
    assert figures["problems"] == [], figures["problems"][:20]
    assert figures["running"] == 1000
    # The figures the issue asks for are there (their values are the bench's, not
    # checked here): the cost per container and by block, the idle cost per node,
    # the statements per create by caller, PostgreSQL's own counts, and the files.
    assert figures["cpu_ms_per_container"]["nodes"] > 0
    assert figures["fill_ratio"] is not None and len(figures["curve"]) == 4
    assert all("cpu_ms_per_container" in block for block in figures["curve"])
    assert figures["idle_cpu_ms_per_s_per_node"] is not None
    assert figures["idle_statements_per_min_per_node"] is not None
    assert figures["statements_per_create"]["agents"]["total"] > 0
    assert figures["statements_per_create"]["api"]["total"] > 0
    assert figures["database_per_create"]["commits"] > 0
    assert figures["cpu_ms_per_container"]["postgres"] > 0
    by_thread = figures["agents_cpu_ms_per_create_by_thread"]
    # the flows' workers do the creates; what no thread reported as it ended is little
    assert by_thread["container-worker"] > 0
    assert by_thread.get("ended", 0.0) < by_thread["total"] / 4, by_thread
    written = Path(figures["written"])
    # (the PNG needs matplotlib, the bench extra)
    png = [".png"] if importlib.util.find_spec("matplotlib") else []
    for suffix in (".json", "-curve.json", *png):
        assert written.with_name(written.name + suffix).exists(), suffix
    assert len(figures["sync_rows"]) == 10
    for host, tally in figures["sync_rows"].items():
        assert tally["rows"] <= tally["own"] + 10, (host, tally)
