"""What must hold after a fill, whatever the speed: every container Running, on the
node its row names (that node's engine holds it under the row's engine id and runs
it), nothing in an engine that no row names, no node holding more than its capacity
(as the scheduler's ResourceFilter counts it), and each sampled node's state sync
reading no more rows than that node's own containers (and a bounded number of rows
besides)."""

from __future__ import annotations

from typing import Any

import psycopg

from berth.placement.requests import NodeReservations

#: Rows a node's state sync may read besides its own containers (its service and
#: node rows and the like); what grows with the fleet must not be among them.
SYNC_ROWS_BESIDES_OWN = 10


def fleet_problems(pg_url: str, engines: dict[str, list[list[Any]]],
                   reservations: NodeReservations) -> list[str]:
    problems: list[str] = []
    held = {uuid: (host, cid, running) for host, items in engines.items()
            for uuid, cid, running in items}
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute("SELECT uuid, host, container_id, status, status_reason, cpu, "
                            "memory FROM container").fetchall()
        nodes = conn.execute("SELECT hostname, cpus, mem_total FROM compute_node").fetchall()
    named = set()
    usage: dict[str, list[float]] = {}
    for uuid, host, cid, status, reason, cpu, memory in rows:
        named.add(uuid)
        if status != "Running":
            problems.append(f"{uuid} is {status} ({reason})")
            continue
        engine = held.get(uuid)
        if engine is None:
            problems.append(f"{uuid} is Running on {host} by its row, in no engine")
        elif engine[0] != host or engine[1] != cid or not engine[2]:
            problems.append(f"{uuid}: row says {host}/{cid}, engine {engine}")
        u = usage.setdefault(host or "", [0.0, 0.0])
        u[0] += float(cpu or 0)
        u[1] += float(memory or 0)
    problems += [f"{uuid} is in the engine of {held[uuid][0]} and named by no row"
                 for uuid in set(held) - named]
    r = reservations
    for hostname, cpus, mem_total in nodes:
        cpu, mem = usage.get(hostname, [0.0, 0.0])
        cpu_room = (cpus - r.reserved_cpus) * r.cpu_allocation_ratio
        mem_room = (mem_total - r.reserved_memory_mb) * r.ram_allocation_ratio
        if cpu > cpu_room + 1e-6 or mem > mem_room:
            problems.append(f"{hostname} overcommitted: cpu {cpu}/{cpu_room}, "
                            f"memory {mem}/{mem_room}")
    return problems


def sync_row_problems(rows: dict[str, dict[str, int]]) -> list[str]:
    return [f"{host}'s sync read {t['rows']} rows for its {t['own']} containers"
            for host, t in rows.items() if t["rows"] > t["own"] + SYNC_ROWS_BESIDES_OWN]
