"""Containers, capsules and their members, their exec instances, and their actions and
events.

A capsule is a row of ``container_type`` 1 whose members (2, and 3 for init
containers) point at it by ``capsule_id``, in Zun 18 as in berth; the ids are kept, so
every reference carries over as it is. Zun's ``cni_metadata`` (``{"vif": <os-vif
state>, "pid": <plugged process>}``) becomes berth's (``{"networks": [...], "pid":
...}``, ``berth.network.metadata``), built from the container's addresses: the same
Neutron ports, which berth's cni driver then manages. A container caught in the
middle of an action (``task_state`` set: Zun was stopped before the action ended) is
carried with its task's deadline at the import, so berth's sync settles it at once.

A container's Neutron ports are managed after the takeover by the berth driver that
matches the Zun driver that plugged them: Zun's cni driver records the VIF it plugged
(``cni_metadata``), its kuryr driver records none (Docker plugged it, on the node's
Docker network of the Neutron network). A container plugged by the one while berth's
``[network]driver`` is another is a row the import cannot carry: berth would neither
unplug it nor free its ports.
"""

from __future__ import annotations

from typing import Any

from berth.network.metadata import CniMetadata, NetworkEntry
from berth.takeover.plan import Plan, carry, now
from berth.takeover.source import ZunRows

CONTAINER, CAPSULE, MEMBER, INIT_MEMBER = 0, 1, 2, 3
KNOWN_TYPES = (CONTAINER, CAPSULE, MEMBER, INIT_MEMBER)


def cni_metadata(addresses: Any, zun_meta: Any) -> CniMetadata | None:
    """berth's cni_metadata for a container Zun's cni driver networked (None when Zun
    recorded no VIF: never networked, or a kuryr container)."""
    if not isinstance(zun_meta, dict) or "vif" not in zun_meta:
        return None
    networks: list[NetworkEntry] = []
    for index, (net_id, addrs) in enumerate((addresses or {}).items()):
        first = addrs[0] if addrs else {}
        networks.append({"network": net_id, "ifname": f"eth{index}", "fixed_ip": None,
                         "port": first.get("port"),
                         "preserve_on_delete": bool(first.get("preserve_on_delete"))})
    return {"networks": networks, "pid": int(zun_meta.get("pid") or 0)}


def plugged_by(addresses: Any, zun_meta: Any) -> str | None:
    """Which of Zun's network drivers plugged a container: ``cni`` (a VIF recorded),
    ``kuryr`` (addresses but no VIF), None (no addresses, no VIF: never networked)."""
    if isinstance(zun_meta, dict) and "vif" in zun_meta:
        return "cni"
    return "kuryr" if addresses else None


def _container(plan: Plan, row: dict[str, Any], capsule_ids: set[int],
               registries: set[int], network_driver: str) -> dict[str, Any] | None:
    ident = row.get("uuid") or f"id={row['id']}"
    if not row.get("uuid"):
        plan.refuse("container", ident, "it has no uuid")
        return None
    kind = row.get("container_type")
    if kind not in KNOWN_TYPES:
        plan.refuse("container", ident, f"container_type {kind!r} is none of Zun's "
                                        f"(0 container, 1 capsule, 2 and 3 capsule members)")
        return None
    if kind in (MEMBER, INIT_MEMBER) and row.get("capsule_id") not in capsule_ids:
        plan.refuse("container", ident, f"it is a capsule member whose capsule (id "
                                        f"{row.get('capsule_id')}) is not carried")
        return None
    try:
        out = carry(row, "container")
    except ValueError as err:
        plan.refuse("container", ident, str(err))
        return None
    plugged = plugged_by(out.get("addresses"), out.get("cni_metadata"))
    if plugged is not None and plugged != network_driver:
        plan.refuse("container", ident, f"Zun's {plugged} driver plugged its Neutron ports "
                                        f"({', '.join(sorted(out.get('addresses') or {})) or 'no addresses'}) "
                                        f"and berth's [network]driver is {network_driver}: set "
                                        f"[network]driver = {plugged} in berth's configuration "
                                        f"and import again, or delete the container in Zun "
                                        f"first")
        return None
    out["cni_metadata"] = cni_metadata(out.get("addresses"), out.get("cni_metadata"))
    if kind == CONTAINER:
        out["capsule_id"] = None
    if out.get("registry_id") is not None and out["registry_id"] not in registries:
        plan.notes.append(f"container {ident}: its registry (id {out['registry_id']}) is not "
                          f"carried; berth pulls its image again without credentials")
        out["registry_id"] = None
    if not out.get("host") and out.get("container_id") and kind in (CONTAINER, CAPSULE):
        plan.notes.append(f"container {ident}: Zun failed its create and unset its host, "
                          f"leaving Docker container {out['container_id'][:12]} (zun-{ident}) "
                          f"on the node that ran it; berth cannot know that node, so its "
                          f"delete removes the rows only, as Zun's does: remove zun-{ident} "
                          f"on that node by hand")
    if out.get("task_state"):
        out["task_deadline"] = now()
        plan.notes.append(f"container {ident} was in task {out['task_state']} when Zun "
                          f"stopped: berth's sync settles it (Error with the reason, or its "
                          f"engine state) once its agent runs")
    return out


def convert(zun: ZunRows, plan: Plan, registries: set[int], network_driver: str = "local"
            ) -> set[int]:
    """The container rows (capsules first, then the rest), their exec instances and
    actions; returns the ids carried. ``registries``: the registry ids carried;
    ``network_driver``: berth's ``[network]driver``."""
    rows = zun["container"]
    carried: set[int] = set()
    capsules = [r for r in rows if r.get("container_type") == CAPSULE]
    for row in capsules:
        out = _container(plan, row, set(), registries, network_driver)
        if out is not None:
            plan.add("container", out)
            carried.add(row["id"])
    capsule_ids = set(carried)
    for row in rows:
        if row.get("container_type") == CAPSULE:
            continue
        out = _container(plan, row, capsule_ids, registries, network_driver)
        if out is not None:
            plan.add("container", out)
            carried.add(row["id"])
    _exec_instances(zun, plan, carried)
    uuids = {r["uuid"] for r in rows if r["id"] in carried}
    _actions(zun, plan, uuids)
    return carried


def _exec_instances(zun: ZunRows, plan: Plan, carried: set[int]) -> None:
    for row in zun["exec_instance"]:
        if row.get("container_id") not in carried:
            plan.refuse("exec_instance", f"id={row['id']}",
                        f"its container (id {row.get('container_id')}) is not carried")
            continue
        plan.add("exec_instance", carry(row, "exec_instance"))


def _actions(zun: ZunRows, plan: Plan, uuids: set[str]) -> None:
    kept: set[int] = set()
    for row in zun["container_actions"]:
        if row.get("container_uuid") not in uuids:
            plan.refuse("container_actions", f"id={row['id']}",
                        f"its container {row.get('container_uuid')} is not carried")
            continue
        plan.add("container_actions", carry(row, "container_actions"))
        kept.add(row["id"])
    for row in zun["container_actions_events"]:
        if row.get("action_id") not in kept:
            plan.refuse("container_actions_events", f"id={row['id']}",
                        f"its action (id {row.get('action_id')}) is not carried")
            continue
        plan.add("container_actions_events", carry(row, "container_actions_events"))
