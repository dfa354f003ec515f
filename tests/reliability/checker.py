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

With ``volume_dir`` (the node's ``[volume]volume_dir``), volumes too: a volume mapped by
a container that has a Docker container is mounted; a mounted volume is needed by
such a container; no mapping without its container row; no auto-remove volume that
no mapping points at; no local backing file without its volume row.

With ``cni_state`` (the node's CNI daemon's state directory, for local networks), the
plugs too: a running row's requested interfaces are ACTIVE attachments in the
daemon's registry, in that row's process's namespace; every attachment belongs to a
row plugged into it (no orphan after a SIGKILL in the middle of an ADD or a DEL);
a network's bridge has exactly the veths of its attachments; and its dispatch chain
jumps to exactly the policy chains of its attachments.

Capsules count too: a capsule's sandbox and members are Docker containers that its
rows refer to; its members' statuses follow Docker like containers' (a capsule's own
is derived from them, so only its sandbox's presence is checked); the capsule, not
its members, holds the allocation; the capsule list agrees with the rows.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import docker
import httpx

from berth.db import containers, nodes
from berth.db.capsules import CAPSULE
from berth.db.engine import Database
from berth.network.base import AttachmentKey, NetworkSpec
from berth.network.policy import Policy, container_chain, dispatch_chain
from berth.placement.embedded import EmbeddedPlacement
from berth.placement.requests import container_resources

#: Docker's state word -> the status berth must show.
STATUS_OF = {"running": "Running", "exited": "Stopped", "created": "Created",
             "paused": "Paused", "dead": "Dead", "restarting": "Restarting"}
TRANSITIONAL = {"Creating", "Deleting", "Rebuilding", "Restarting"}


def problems(db: Database, host: str, engine: docker.DockerClient,
             http: httpx.Client, volume_dir: str | None = None,
             cni_state: str | None = None) -> list[str]:
    found: list[str] = []
    if volume_dir is not None:
        found += volume_problems(db, volume_dir)
    every = {r.uuid: r for r in containers.list_by_host(db, host, None)}
    if cni_state is not None:
        found += network_problems(every, cni_state)
    listed = {c.id: c for c in engine.containers.list(
        all=True, ignore_removed=True, filters={"label": f"berth.host={host}"})}
    referred = {r.container_id for r in every.values() if r.container_id}
    for cid, c in listed.items():
        if cid not in referred:
            found.append(f"orphan Docker container {c.name} ({cid[:12]}): no row refers to it")
    for r in every.values():
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
        if r.container_type != CAPSULE and r.status != want and r.status != "Error":
            found.append(f"{r.uuid} is {r.status}, Docker says {c.status}")
    found += _allocation_problems(db, host, {u: r for u, r in every.items()
                                             if r.container_type in (0, CAPSULE)})
    for path, key, kind in (("/v1/containers", "containers", 0),
                            ("/v1/capsules/", "capsules", CAPSULE)):
        api = {c["uuid"]: c["status"] for c in http.get(
            path, params={"limit": 1000}).json()[key]}
        for uuid, r in every.items():
            if r.container_type == kind and api.get(uuid) != r.status:
                found.append(f"{uuid}: the API shows {api.get(uuid)}, the row says "
                             f"{r.status}")
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


def volume_problems(db: Database, volume_dir: str) -> list[str]:
    import os

    from sqlalchemy import select

    from berth.db.models import Container, Volume, VolumeMapping
    from berth.volume import mounts

    found: list[str] = []
    mounted = {p for p in mounts.mount_points() if p.startswith(volume_dir.rstrip("/") + "/")}
    with db.reader() as s:
        volumes = {v.id: v for v in s.scalars(select(Volume))}
        rows = {c.uuid: c for c in s.scalars(select(Container))}
        mappings = list(s.scalars(select(VolumeMapping)))
    users: dict[int, list[Any]] = {}
    for m in mappings:
        row = rows.get(m.container_uuid)
        if row is None:
            found.append(f"volume mapping {m.uuid} points at container {m.container_uuid}, "
                         f"which has no row")
            continue
        users.setdefault(m.volume_id, []).append(row)
    for volume in volumes.values():
        point = os.path.join(volume_dir, volume.uuid)
        if volume.contents is not None:
            continue                     # injected files: checked by their containers
        needed = [r.uuid for r in users.get(volume.id, []) if r.container_id]
        if needed and point not in mounted:
            found.append(f"volume {volume.uuid} is not mounted under containers {needed}")
        if not needed and point in mounted:
            found.append(f"volume {volume.uuid} is mounted, and no container needs it")
        if volume.auto_remove and volume.id not in users:
            found.append(f"auto-remove volume {volume.uuid} is left with no container")
    local = os.path.join(volume_dir, "local")
    known = {v.uuid for v in volumes.values()}
    for name in os.listdir(local) if os.path.isdir(local) else []:
        if name.endswith(".img") and name[:-4] not in known:
            found.append(f"backing file {name} has no volume row (leaked)")
    return found


def network_problems(rows: dict[str, Any], cni_state: str) -> list[str]:
    path = Path(cni_state) / "registry.json"
    registry = json.loads(path.read_text()) if path.exists() else {}
    found: list[str] = []
    entries = registry.get("attachments") or []
    by_key = {(e["vif"]["container_id"], e["vif"]["ifname"]): e for e in entries}
    for r in rows.values():
        meta = r.cni_metadata if isinstance(r.cni_metadata, dict) else {}
        pid = int(meta.get("pid") or 0)
        for want in meta.get("networks") or []:
            entry = by_key.get((r.uuid, want["ifname"]))
            if r.status == "Running" and pid and (
                    entry is None or entry["state"] != "active"
                    or entry["vif"]["netns"] != f"/proc/{pid}/ns/net"):
                found.append(f"{r.uuid} is Running in pid {pid} but {want['ifname']} is "
                             f"not plugged there: {entry and entry['state']}")
    for e in entries:
        vif = e["vif"]
        row = rows.get(vif["container_id"])
        meta = row.cni_metadata if row is not None and isinstance(row.cni_metadata, dict) \
            else {}
        pid = int(meta.get("pid") or 0)
        if e["state"] != "active" or not pid or vif["netns"] != f"/proc/{pid}/ns/net":
            found.append(f"orphan attachment {vif['container_id']}/{vif['ifname']} "
                         f"({e['state']}, {vif['netns']}, {vif['address']}): its row "
                         f"{'is gone' if row is None else f'is plugged in pid {pid}'}")
    for raw in registry.get("networks") or []:
        spec = NetworkSpec.from_dict(raw)
        mine = [e for e in entries if e["vif"]["network"] == spec.name]
        ports = subprocess.run(["ip", "-o", "link", "show", "master", spec.bridge],
                               capture_output=True, text=True, check=False).stdout
        veths = {line.split(":")[1].strip().split("@")[0] for line in ports.splitlines()}
        if veths != {e["vif"]["host_ifname"] for e in mine}:
            found.append(f"bridge {spec.bridge} has veths {sorted(veths)}, its "
                         f"attachments {sorted(e['vif']['host_ifname'] for e in mine)}")
        chain = subprocess.run(["iptables", "-w", "-S", dispatch_chain(spec)],
                               capture_output=True, text=True, check=False).stdout
        jumps = {line.split()[-1] for line in chain.splitlines() if line.startswith("-A ")}
        wanted = {container_chain(AttachmentKey(spec.name, e["vif"]["container_id"],
                                                e["vif"]["ifname"]))
                  for e in mine if e.get("policy") is not None}
        for e in mine:
            if e.get("policy") is not None:
                Policy.from_dict(e["policy"])     # a readable policy
        if mine and jumps != wanted:
            found.append(f"network {spec.name}: policy chains {sorted(jumps)}, its "
                         f"attachments want {sorted(wanted)}")
    return found
