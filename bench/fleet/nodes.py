"""``python -m bench.fleet.nodes --config-file F --first I --count N --prefix P``: host
N compute agents (hosts ``P-<i>``) in this process, built by berth's own wiring as
``berth-compute`` builds one, on the simulated engine, sharing this process's database
engine and RPC transport. Prints ``READY`` when every agent is up, then answers
commands on stdin, one a line, each answered with one JSON line on stdout:

    containers   {host: [[uuid, engine id, running], ...]} of every agent's engine
    rows K       the rows K agents' state syncs read (one sync each, counted by the
                 statement tally, ``statements.py``): {host: {"rows": r, "own": n, ...}}
    statements   the statements this process ran so far, by caller (``statements.py``)
    threads      the CPU ms this process spent so far, in all and by kind of thread
                 (``threads.py``)
    quit         stop every agent and exit
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from sqlalchemy import func, select

from bench.fleet import threads
from bench.fleet.statements import StatementTally
from berth.cmd import wiring
from berth.common import log
from berth.common.memory import freeze_started, limit_malloc_arenas
from berth.compute.agent import ComputeAgent
from berth.conf import CONF
from berth.db.engine import Database
from berth.db.models import Container

LOG = logging.getLogger("bench.fleet.nodes")


def build_agents(db: Database, prefix: str, first: int, count: int) -> list[ComputeAgent]:
    transport = wiring.build_transport(CONF)
    agents = []
    for i in range(first, first + count):
        CONF.set_override("host", f"{prefix}-{i:04d}")
        agents.append(wiring.build_agent(CONF, db, transport))
    CONF.clear_override("host")
    return agents


def start_agent(agent: ComputeAgent, attempts: int = 5) -> None:
    """Start ``agent``; a start that fails (the shared pool's connections all busy
    while hundreds of agents start) is tried again after the agent is stopped."""
    for attempt in range(1, attempts + 1):
        try:
            agent.start()
            return
        except Exception:
            if attempt == attempts:
                raise
            LOG.exception("agent %s did not start (attempt %d); again", agent.host, attempt)
            agent.stop()
            time.sleep(attempt)


def engine_containers(agents: list[ComputeAgent]) -> dict[str, list[list[Any]]]:
    out: dict[str, list[list[Any]]] = {}
    for agent in agents:
        out[agent.host] = [[c.uuid, c.id, bool(c.state and c.state.running)]
                           for c in agent.runtime.list(agent.host)]
    return out


def sync_rows(db: Database, tally: StatementTally, agents: list[ComputeAgent],
              sample: int) -> dict[str, dict[str, int]]:
    step = max(len(agents) // max(sample, 1), 1)
    out = {}
    for agent in agents[::step][:sample]:
        read = tally.rows_read(agent.sync_state)
        with db.reader() as s:
            own = s.scalar(select(func.count()).select_from(Container)
                           .where(Container.host == agent.host)) or 0
        out[agent.host] = dict(read, own=int(own))
    return out


def main(argv: list[str] | None = None) -> int:
    limit_malloc_arenas()
    parser = argparse.ArgumentParser(prog="python -m bench.fleet.nodes")
    parser.add_argument("--config-file", required=True)
    parser.add_argument("--prefix", default="fleet")
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--start-threads", type=int, default=8)
    args = parser.parse_args(argv)
    wiring.parse_config(["--config-file", args.config_file], CONF, prog="bench-fleet-nodes")
    log.setup()
    logging.getLogger().setLevel(logging.WARNING)
    tally = StatementTally.install()
    census = threads.Census()
    census.install()
    db = wiring.build_database(CONF, upgrade=False)
    agents = build_agents(db, args.prefix, args.first, args.count)
    began = time.monotonic()
    with ThreadPoolExecutor(args.start_threads) as pool:
        list(pool.map(start_agent, agents))
    freeze_started()     # as berth-compute does once its agent started
    profile = os.environ.get("BERTH_FLEET_PROFILE")
    if profile:     # CPU time of every thread, from here to quit (yappi, pstats file)
        import yappi
        yappi.set_clock_type("cpu")
        yappi.start()
    print(f"READY {len(agents)} agents in {time.monotonic() - began:.1f} s", flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "quit":
            break
        if words[0] == "containers":
            answer: Any = engine_containers(agents)
        elif words[0] == "statements":
            answer = tally.snapshot()
        elif words[0] == "threads":
            answer = census.reading()
        elif words[0] == "rows":
            answer = sync_rows(db, tally, agents, int(words[1]))
        else:
            answer = {"error": f"unknown command {words[0]!r}"}
        print(json.dumps(answer), flush=True)
    if profile:
        yappi.stop()
        yappi.get_func_stats().save(profile, type="pstat")
    with ThreadPoolExecutor(args.start_threads) as pool:
        list(pool.map(lambda a: a.stop(), agents))
    db.dispose()
    return 0


if __name__ == "__main__":
    sys.exit(main())
