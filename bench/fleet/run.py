"""``python -m bench.fleet``: the fleet benchmark (P15). See the package docstring.

    python -m bench.fleet --nodes 1000 --containers 20000          # the full run
    python -m bench.fleet --nodes 50 --containers 1000 --step 100  # a short one
"""

from __future__ import annotations

import argparse
import json
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

from bench.fleet import checks, load, report, statements, threads
from bench.fleet.cpu import CpuMeter, per_unit
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
#: CPU milliseconds per container of every process (the client apart); the cost at
#: the end of the fill may be at most GOAL_FILL_RATIO times that at its start.
GOAL_CPU_MS_PER_CONTAINER = 10.0
GOAL_FILL_RATIO = 1.20
#: What one idle node may cost: agent CPU (ms a second) and database statements a minute.
GOAL_IDLE_CPU_MS_PER_S = 0.2
GOAL_IDLE_STATEMENTS_PER_MIN = 3.0


#: Agents one process hosts by default. Each agent runs about ten threads; 500 in one
#: process (the default until 2026-12-05) made a GIL convoy on two cores: two full
#: runs of three collapsed (load average 600 to 2,800, the agents' database pool and
#: RabbitMQ heartbeats timing out, creates failing), where a real agent has a process
#: of its own (docs/benchmarks.md, runs N).
AGENTS_PER_PROCESS = 250


@dataclass(frozen=True)
class FleetSpec:
    nodes: int = 1000
    containers: int = 20000
    step: int = 1000
    #: processes hosting the agents, 250 agents each (``AGENTS_PER_PROCESS``)
    node_processes: int = 4
    api_workers: int = 2
    start_latency: float = 0.3
    concurrency: int = 16
    window: int = 400
    #: [database]max_pool_size of a process hosting agents (its agents share it)
    pool_size: int = 10
    #: [database]max_pool_size of each API worker: the option's default. At 5 (until
    #: 2026-12-06) the workers opened and closed a connection for one create in six to
    #: eight past it, each about 15 ms of PostgreSQL's CPU (docs/benchmarks.md, runs T)
    api_pool_size: int = 10
    rows_sample: int = 20
    #: seconds the fleet is left idle (every agent up, no create) and measured, before
    #: the fill (0: not measured). The agents' periodic tasks run every 30 to 66 s.
    idle_seconds: float = 60.0
    #: seconds from the agents' start to the idle window: each periodic task has had
    #: its first run (they come one periodic_interval_max, 60 s, after the start)
    idle_settle: float = 70.0


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


def _database_counts(pg_url: str) -> dict[str, int]:
    """PostgreSQL's own counts for the run database so far: the connections it
    accepted (``sessions``), and the transactions committed and rolled back (a
    statement in autocommit is one committed, a pool's check of an idle connection,
    ``ping_when_idle``, too; a placement refused under the node's lock is one rolled
    back). Its backends report within a second or at their end."""
    time.sleep(1.0)     # the backends that ended last report at most a second later
    with psycopg.connect(pg_url, autocommit=True) as conn:
        row = conn.execute("SELECT sessions, xact_commit, xact_rollback FROM "
                           "pg_stat_database WHERE datname = current_database()").fetchone()
    return dict(zip(("sessions", "commits", "rollbacks"), row or (0, 0, 0), strict=True))


def _load_average() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def _node_statements(hosts: list[NodeHost]) -> dict[str, int]:
    return statements.merged([h.ask("statements") for h in hosts])


def _node_threads(hosts: list[NodeHost]) -> list[dict[str, float]]:
    return [h.ask("threads") for h in hosts]


def _threads_spent(before: list[dict[str, float]], hosts: list[NodeHost]
                   ) -> dict[str, float]:
    """CPU ms the agents' hosts spent since ``before`` (``_node_threads``), by kind of
    thread, summed over the hosts."""
    return statements.merged([threads.spent_by_kind(b, a) for b, a in
                              zip(before, _node_threads(hosts), strict=True)])


def measure_idle(spec: FleetSpec, meter: CpuMeter, hosts: list[NodeHost], api: Api
                 ) -> dict[str, Any]:
    """CPU (ms a second, per node) of each part, and the agents' statements (a minute,
    per node, by caller), over ``spec.idle_seconds`` with every agent up and no
    create."""
    cpu_before, stmts_before = meter.sample(), _node_statements(hosts)
    api_before, threads_before = api.statements(), _node_threads(hosts)
    began = time.monotonic()
    time.sleep(spec.idle_seconds)
    seconds = time.monotonic() - began
    cpu = per_unit(cpu_before, meter.sample(), seconds * spec.nodes)
    # Microseconds (not ms: most kinds cost less than a thousandth of one) a second per node
    by_thread = threads.per_unit({kind: ms * 1000 for kind, ms in
                                  _threads_spent(threads_before, hosts).items()},
                                 round(seconds * spec.nodes))
    agents, _ = statements.statements_and_collector(
        statements.difference(_node_statements(hosts), stmts_before))
    api_idle, _ = statements.split_rpc(statements.statements_and_collector(
        statements.difference(api.statements(), api_before))[0])
    node_minutes = seconds / 60 * spec.nodes
    return {"seconds": round(seconds, 1),
            "cpu_ms_per_s_per_node": cpu,
            "agents_cpu_us_per_s_per_node_by_thread": by_thread,
            "agent_statements_per_min_per_node": statements.per_unit(agents, node_minutes),
            "api_statements_per_min": statements.per_unit(api_idle, seconds / 60)}


def components_table(cpu: dict[str, float], idle: dict[str, Any] | None) -> str:
    """The CPU per container of each part, and each part's idle CPU per node, as a
    Markdown table."""
    idle_cpu = idle["cpu_ms_per_s_per_node"] if idle else {}
    lines = ["| part | CPU ms per container | idle CPU ms/s per node |", "|---|---|---|"]
    for role in ("api", "nodes", "postgres", "rabbitmq", "client", "total"):
        if role in cpu:
            lines.append(f"| {role} | {cpu[role]} | {idle_cpu.get(role, '-')} |")
    return "\n".join(lines)


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
        api = Api(api_conf, port, workdir / "api.log", workdir / "tallies")
        api.wait_ready(300)
        _wait_services_up(pg_url, spec.nodes, 600)
        meter = CpuMeter(api.proc.pid, [h.proc.pid for h in hosts], services.name)
        idle = None
        if spec.idle_seconds > 0:
            time.sleep(max(spec.idle_settle - (time.monotonic() - began - started), 0))
            idle = measure_idle(spec, meter, hosts, api)
        load_idle = _load_average()
        load_before = _load_average()
        node_stmts, api_tallies = _node_statements(hosts), api.tallies()
        api_stmts = statements.merged(api_tallies.values())
        threads_before = _node_threads(hosts)
        database_before = _database_counts(pg_url)
        meter.start()
        marks = iter(range(spec.step, spec.containers + 1, spec.step))
        due = [next(marks, None)]

        def on_count(running: int) -> None:
            while due[0] is not None and running >= due[0]:
                meter.mark(running)
                due[0] = next(marks, None)

        result = load.fill(api.url, pg_url, spec.containers, concurrency=spec.concurrency,
                           window=spec.window, on_count=on_count,
                           on_counter_backend=meter.count_as_client)
        load_after = _load_average()
        made = result.samples[-1][1] if result.samples else 0
        cpu = meter.per_container(made)
        blocks = meter.block_costs()
        database_after = _database_counts(pg_url)      # (and its own few: the bench's)
        api_tallies_after = api.tallies()
        api_tally, api_collector_us = statements.statements_and_collector(
            statements.difference(statements.merged(api_tallies_after.values()), api_stmts))
        api_statements, api_rpc = statements.split_rpc(api_tally)
        agent_statements, agents_collector_us = statements.statements_and_collector(
            statements.difference(_node_statements(hosts), node_stmts))
        per_create = {"api": statements.per_unit(api_statements, made),
                      "agents": statements.per_unit(agent_statements, made)}
        collector = {"api": round(api_collector_us / 1000 / max(made, 1), 3),
                     "nodes": round(agents_collector_us / 1000 / max(made, 1), 3)}
        agent_threads = threads.per_unit(_threads_spent(threads_before, hosts), made)
        engines: dict[str, list[list[Any]]] = {}
        rows: dict[str, dict[str, int]] = {}
        for h in hosts:
            engines.update(h.ask("containers"))
            rows.update(h.ask(f"rows {max(spec.rows_sample // len(hosts), 1)}"))
        CONF(args=["--config-file", str(conf)], project="berth", default_config_files=[])
        problems = checks.fleet_problems(pg_url, engines, node_reservations(CONF))
        problems += checks.sync_row_problems(rows)
        problems += result.refused[:20]
        curve: list[dict[str, Any]] = list(result.curve(spec.step))  # blocks get their costs
        for block, cost in zip(curve, blocks, strict=False):
            block["cpu_ms_per_container"] = {k: v for k, v in cost.items()
                                             if k not in ("from", "to")}
        costs = [b["cpu_ms_per_container"]["total"] - b["cpu_ms_per_container"]["client"]
                 for b in curve if "cpu_ms_per_container" in b]
        fill_ratio = round(costs[-1] / costs[0], 3) if len(costs) > 1 and costs[0] else None
        first_rate = curve[0]["per_second"] if curve else 0.0
        last_rate = curve[-1]["per_second"] if curve else 0.0
        figures: dict[str, Any] = {
            "id": "P15", "name": "fleet", "nodes": spec.nodes,
            "containers": spec.containers, "spec": spec.__dict__,
            "running": result.samples[-1][1] if result.samples else 0,
            "seconds": round(result.seconds, 1),
            "per_second_overall": result.overall_rate(),
            "per_second_first_block": first_rate, "per_second_last_block": last_rate,
            "slowdown_last_vs_first": round(1 - last_rate / first_rate, 3) if first_rate else None,
            "goal_per_second": GOAL_PER_SECOND, "goal_flatness": GOAL_FLATNESS,
            "curve": curve, "sync_rows": rows, "problems": problems,
            "agents_started": ready, "agents_start_seconds": round(started, 1),
            "cpu_ms_per_container": cpu,
            "cpu_ms_per_container_without_client": round(cpu["total"] - cpu["client"], 2),
            "goal_cpu_ms_per_container": GOAL_CPU_MS_PER_CONTAINER,
            "fill_ratio": fill_ratio, "goal_fill_ratio": GOAL_FILL_RATIO,
            "statements_per_create": per_create,
            "api_rpc_per_create": statements.per_unit(api_rpc, made),
            "agents_cpu_ms_per_create_by_thread": agent_threads,
            "collector_cpu_ms_per_container": collector,
            "api_workers_cpu_shares": statements.cpu_shares(api_tallies, api_tallies_after),
            "database_per_create": {
                key: round((database_after[key] - database_before[key]) / max(made, 1), 3)
                for key in database_after},
            "idle": idle,
            "idle_cpu_ms_per_s_per_node": idle["cpu_ms_per_s_per_node"]["nodes"]
            if idle else None,
            "idle_statements_per_min_per_node":
                idle["agent_statements_per_min_per_node"].get("total", 0.0) if idle else None,
            "goal_idle_cpu_ms_per_s_per_node": GOAL_IDLE_CPU_MS_PER_S,
            "goal_idle_statements_per_min_per_node": GOAL_IDLE_STATEMENTS_PER_MIN,
            "components": components_table(cpu, idle),
            "load_average": load_after, "load_average_before": load_before,
            "load_average_idle": load_idle,
            "cpus": os.cpu_count(), "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
            stem = out / time.strftime(f"fleet-{spec.nodes}n-{spec.containers}c-%Y%m%d-%H%M%S")
            report.write_json(stem.with_suffix(".json"), figures)
            report.write_png(stem.with_suffix(".png"), figures)
            report.write_curve(stem.with_name(stem.name + "-curve.json"), figures)
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
    p.add_argument("--node-processes", type=int, default=None,
                   help=f"processes hosting the agents (default: one per "
                        f"{AGENTS_PER_PROCESS} nodes)")
    p.add_argument("--api-workers", type=int, default=d.api_workers)
    p.add_argument("--start-latency", type=float, default=d.start_latency)
    p.add_argument("--concurrency", type=int, default=d.concurrency)
    p.add_argument("--window", type=int, default=d.window)
    p.add_argument("--pool-size", type=int, default=d.pool_size,
                   help="[database]max_pool_size of each process hosting agents "
                        "(overflow: twice that)")
    p.add_argument("--api-pool-size", type=int, default=d.api_pool_size,
                   help="[database]max_pool_size of each API worker (overflow: twice that)")
    p.add_argument("--idle-seconds", type=float, default=d.idle_seconds,
                   help="the idle fleet's measurement before the fill (0: none)")
    p.add_argument("--idle-settle", type=float, default=d.idle_settle,
                   help="seconds from the agents' start to the idle measurement")
    p.add_argument("--out", type=Path, default=RESULTS)
    a = p.parse_args(argv)
    spec = FleetSpec(nodes=a.nodes, containers=a.containers, step=a.step,
                     node_processes=a.node_processes or -(-a.nodes // AGENTS_PER_PROCESS),
                     api_workers=a.api_workers,
                     start_latency=a.start_latency, concurrency=a.concurrency,
                     window=a.window, pool_size=a.pool_size, api_pool_size=a.api_pool_size,
                     idle_seconds=a.idle_seconds, idle_settle=a.idle_settle)
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
        print(f"cost at the end over cost at the start (fill_ratio): {figures['fill_ratio']}; "
              f"idle node: {figures['idle_cpu_ms_per_s_per_node']} ms/s of agent CPU, "
              f"{figures['idle_statements_per_min_per_node']} statements a minute")
        print(figures["components"])
        print("statements per create by caller:", json.dumps(
            figures["statements_per_create"], indent=1))
        print("the API's casts and calls to agents per create:", json.dumps(
            figures["api_rpc_per_create"], indent=1))
        print("the agents' CPU ms per create by kind of thread:", json.dumps(
            figures["agents_cpu_ms_per_create_by_thread"], indent=1))
        print("of which in the garbage collector (CPU ms per container):",
              figures["collector_cpu_ms_per_container"])
        print("each API worker's share of the API's CPU:", figures["api_workers_cpu_shares"])
        print("PostgreSQL's connections and transactions per create:",
              figures["database_per_create"])
        if figures["idle"]:
            print("idle statements a minute per node by caller:", json.dumps(
                figures["idle"]["agent_statements_per_min_per_node"], indent=1))
            print("an idle node's agent CPU, µs a second, by kind of thread:", json.dumps(
                figures["idle"]["agents_cpu_us_per_s_per_node_by_thread"], indent=1))
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
