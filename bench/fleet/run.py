"""``python -m bench.fleet``: the fleet benchmark (P15). See the package docstring.

    python -m bench.fleet --nodes 1000 --containers 20000          # the full run
    python -m bench.fleet --nodes 50 --containers 1000 --step 100  # a short one
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from bench.fleet import checks, load, report
from bench.fleet.cpu import CpuMeter
from bench.fleet.services import (
    Api,
    NodeHost,
    Services,
    berth_db_upgrade,
    check_broker_room,
    write_config,
)

RESULTS = Path(__file__).resolve().parents[1] / "results"
GOAL_PER_SECOND = 300
#: The slowdown from the first block to the last that the goal allows.
GOAL_FLATNESS = 0.20


@dataclass(frozen=True)
class FleetSpec:
    nodes: int = 1000
    containers: int = 20000
    step: int = 1000
    node_processes: int = 2
    api_workers: int = 2
    start_latency: float = 0.3
    concurrency: int = 16
    window: int = 400
    #: [database]max_pool_size of a process hosting agents (its agents share it)
    pool_size: int = 10
    #: [database]max_pool_size of each API worker
    api_pool_size: int = 5
    rows_sample: int = 20


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_services_up(pg_url: str, nodes: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    with psycopg.connect(pg_url, autocommit=True) as conn:
        while time.monotonic() < deadline:
            row = conn.execute("SELECT count(*) FROM zun_service").fetchone()
            if row and row[0] >= nodes:
                return
            time.sleep(0.5)
    raise TimeoutError(f"not every one of {nodes} agents reported its service")


def _load_average() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def run(spec: FleetSpec, workdir: Path, out: Path | None = RESULTS) -> dict[str, Any]:
    """One fill; returns the report (also written under ``out`` when given)."""
    from berth.cmd.wiring import node_reservations
    from berth.conf import CONF

    services = Services()
    services.create()
    pg_url = services.db_url.replace("+psycopg", "")
    hosts: list[NodeHost] = []
    api: Api | None = None
    try:
        port = _free_port()
        conf = write_config(workdir / "fleet.conf", services, port=port,
                            api_workers=spec.api_workers, start_latency=spec.start_latency,
                            pool_size=spec.pool_size)
        # Each API worker's pool is its own; PostgreSQL's connections are few and shared.
        api_conf = write_config(workdir / "api.conf", services, port=port,
                                api_workers=spec.api_workers,
                                start_latency=spec.start_latency,
                                pool_size=spec.api_pool_size)
        berth_db_upgrade(conf)
        began = time.monotonic()
        per = -(-spec.nodes // spec.node_processes)
        for i, first in enumerate(range(0, spec.nodes, per)):
            hosts.append(NodeHost(conf, f"fleet{services.tag}", first,
                                  min(per, spec.nodes - first), workdir / f"nodes{i}.log"))
        ready = [h.wait_ready(1800) for h in hosts]
        started = time.monotonic() - began
        api = Api(api_conf, port, workdir / "api.log")
        api.wait_ready(300)
        _wait_services_up(pg_url, spec.nodes, 600)
        load_before = _load_average()
        meter = CpuMeter(api.proc.pid, [h.proc.pid for h in hosts], services.name)
        meter.start()
        result = load.fill(api.url, pg_url, spec.containers, concurrency=spec.concurrency,
                           window=spec.window)
        load_after = _load_average()
        cpu = meter.per_container(result.samples[-1][1] if result.samples else 0)
        engines: dict[str, list[list[Any]]] = {}
        rows: dict[str, dict[str, int]] = {}
        for h in hosts:
            engines.update(h.ask("containers"))
            rows.update(h.ask(f"rows {max(spec.rows_sample // len(hosts), 1)}"))
        CONF(args=["--config-file", str(conf)], project="berth", default_config_files=[])
        problems = checks.fleet_problems(pg_url, engines, node_reservations(CONF))
        problems += checks.sync_row_problems(rows)
        problems += result.refused[:20]
        curve = result.curve(spec.step)
        first = curve[0]["per_second"] if curve else 0.0
        last = curve[-1]["per_second"] if curve else 0.0
        figures: dict[str, Any] = {
            "id": "P15", "name": "fleet", "nodes": spec.nodes,
            "containers": spec.containers, "spec": spec.__dict__,
            "running": result.samples[-1][1] if result.samples else 0,
            "seconds": round(result.seconds, 1),
            "per_second_overall": result.overall_rate(),
            "per_second_first_block": first, "per_second_last_block": last,
            "slowdown_last_vs_first": round(1 - last / first, 3) if first else None,
            "goal_per_second": GOAL_PER_SECOND, "goal_flatness": GOAL_FLATNESS,
            "curve": curve, "sync_rows": rows, "problems": problems,
            "agents_started": ready, "agents_start_seconds": round(started, 1),
            "cpu_ms_per_container": cpu,
            "load_average": load_after, "load_average_before": load_before,
            "cpus": os.cpu_count(), "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
            stem = out / time.strftime(f"fleet-{spec.nodes}n-{spec.containers}c-%Y%m%d-%H%M%S")
            report.write_json(stem.with_suffix(".json"), figures)
            report.write_png(stem.with_suffix(".png"), figures)
            figures["written"] = str(stem)
        return figures
    finally:
        if api is not None:
            api.stop()
        for h in hosts:
            h.stop()
        services.drop()


def main(argv: list[str] | None = None) -> int:
    d = FleetSpec()
    p = argparse.ArgumentParser(prog="python -m bench.fleet", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nodes", type=int, default=d.nodes)
    p.add_argument("--containers", type=int, default=d.containers)
    p.add_argument("--step", type=int, default=d.step, help="containers per curve point")
    p.add_argument("--node-processes", type=int, default=d.node_processes)
    p.add_argument("--api-workers", type=int, default=d.api_workers)
    p.add_argument("--start-latency", type=float, default=d.start_latency)
    p.add_argument("--concurrency", type=int, default=d.concurrency)
    p.add_argument("--window", type=int, default=d.window)
    p.add_argument("--pool-size", type=int, default=d.pool_size,
                   help="[database]max_pool_size of each process (overflow: twice that)")
    p.add_argument("--out", type=Path, default=RESULTS)
    a = p.parse_args(argv)
    spec = FleetSpec(nodes=a.nodes, containers=a.containers, step=a.step,
                     node_processes=a.node_processes, api_workers=a.api_workers,
                     start_latency=a.start_latency, concurrency=a.concurrency,
                     window=a.window, pool_size=a.pool_size)
    check_broker_room(spec.nodes)
    # A SIGTERM (timeout, CI) still stops the processes and drops the database.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    tmp = tempfile.mkdtemp(prefix="berth-fleet-")
    try:
        figures = run(spec, Path(tmp), a.out)
    except BaseException:
        _print_logs(Path(tmp))
        print(f"the processes' logs are kept in {tmp}", file=sys.stderr)
        raise
    try:
        print(f"P15 fleet: {spec.nodes} nodes, {spec.containers} containers in "
              f"{figures['seconds']} s: {figures['per_second_overall']}/s overall, "
              f"{figures['per_second_first_block']}/s at 0, "
              f"{figures['per_second_last_block']}/s at the end "
              f"(load average {figures['load_average']}); CPU ms per container "
              f"{figures['cpu_ms_per_container']}; written to {figures.get('written')}")
        for problem in figures["problems"][:20]:
            print(f"PROBLEM: {problem}", file=sys.stderr)
        if figures["problems"]:
            _print_logs(Path(tmp))
    finally:
        if not figures["problems"]:
            shutil.rmtree(tmp, ignore_errors=True)
    return 1 if figures["problems"] else 0


def _print_logs(workdir: Path) -> None:
    for log in sorted(workdir.glob("*.log")):
        print(f"--- {log.name} (tail)\n{log.read_text(errors='replace')[-3000:]}",
              file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
