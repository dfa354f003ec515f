"""The one check every reliability scenario ends with (issue 21): berth's database,
the Docker engine and Placement agree, and the API shows what Docker holds.

``problems(...)`` returns what is wrong, one line each (an empty list: nothing is):

- a Docker container labelled for the host that no row refers to (an orphan);
- a row that still has a task or a transitional status (stuck);
- a row whose status is not what its Docker container's state says, or that names a
  Docker container the engine does not have (and is not Error saying so);
- an allocation that differs from the row's resources, or one without a row that
  holds resources (a row with a Docker container holds them; a failed create, Error
  without one, holds nothing);
- the API's list disagreeing with the database.
"""

from __future__ import annotations

from typing import Any

import docker
import httpx

from berth.db import containers, nodes
from berth.db.engine import Database
from berth.placement.embedded import EmbeddedPlacement
from berth.placement.requests import container_resources

#: Docker's state word -> the status berth must show.
STATUS_OF = {"running": "Running", "exited": "Stopped", "created": "Created",
             "paused": "Paused", "dead": "Dead", "restarting": "Restarting"}
TRANSITIONAL = {"Creating", "Deleting", "Rebuilding", "Restarting"}


def problems(db: Database, host: str, engine: docker.DockerClient,
             http: httpx.Client) -> list[str]:
    found: list[str] = []
    rows = {r.uuid: r for r in containers.list_by_host(db, host)}
    listed = {c.id: c for c in engine.containers.list(
        all=True, filters={"label": f"berth.host={host}"})}
    referred = {r.container_id for r in rows.values() if r.container_id}
    for cid, c in listed.items():
        if cid not in referred:
            found.append(f"orphan Docker container {c.name} ({cid[:12]}): no row refers to it")
    for r in rows.values():
        if r.task_state or r.status in TRANSITIONAL:
            found.append(f"{r.uuid} stuck: status {r.status}, task {r.task_state}")
            continue
        if not r.container_id:
            if r.status != "Error":
                found.append(f"{r.uuid} is {r.status} without a Docker container")
            continue
        c = listed.get(r.container_id)
        if c is None:
            if r.status != "Error" or "No such container" not in (r.status_reason or ""):
                found.append(f"{r.uuid} names Docker container {r.container_id[:12]}, "
                             f"which the engine does not have (status {r.status})")
            continue
        want = STATUS_OF.get(c.status, "?")
        if r.status != want and r.status != "Error":
            found.append(f"{r.uuid} is {r.status}, Docker says {c.status}")
    found += _allocation_problems(db, host, rows)
    api = {c["uuid"]: c["status"] for c in http.get(
        "/v1/containers", params={"limit": 1000}).json()["containers"]}
    for uuid, r in rows.items():
        if api.get(uuid) != r.status:
            found.append(f"{uuid}: the API shows {api.get(uuid)}, the row says {r.status}")
    return found


def _allocation_problems(db: Database, host: str, rows: dict[str, Any]) -> list[str]:
    node = nodes.get_compute_node(db, host)
    held = EmbeddedPlacement(db).provider_allocations(node.rp_uuid)
    found: list[str] = []
    for uuid, r in rows.items():
        want = container_resources(r.cpu, r.memory, r.disk) if r.container_id else None
        have = held.pop(uuid, None)
        if want != have:
            found.append(f"{uuid}: allocation {have}, the row holds {want}")
    for uuid, have in held.items():
        found.append(f"allocation {have} of {uuid}, which has no row on {host}")
    return found
