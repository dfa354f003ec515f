"""What berth's embedded Placement needs (``[placement]driver = embedded``): a provider
per node (its ``rp_uuid``, named after its host) and an allocation per container or
capsule placed on a node, as berth's API would have made it
(``berth.placement.requests.container_resources``). The inventory is the agent's to
report when it starts. With OpenStack Placement nothing is written here: Zun's
providers and allocations stay where they are.
"""

from __future__ import annotations

from typing import Any

from berth.placement.requests import container_resources
from berth.takeover.containers import CAPSULE, CONTAINER
from berth.takeover.plan import Plan


def convert(plan: Plan) -> None:
    providers: dict[str, int] = {}
    for index, node in enumerate(plan.rows["compute_node"], start=1):
        providers[node["hostname"]] = index
        plan.add("resource_provider", {"id": index, "uuid": node["rp_uuid"],
                                       "name": node["hostname"], "generation": 1})
    for row in plan.rows["container"]:
        rp = providers.get(row.get("host") or "")
        if rp is None or row.get("container_type") not in (CONTAINER, CAPSULE):
            continue
        if row.get("status") in ("Deleted",):
            continue
        for rc, used in container_resources(row.get("cpu"), row.get("memory"),
                                            row.get("disk")).items():
            alloc: dict[str, Any] = {"resource_provider_id": rp, "consumer_id": row["uuid"],
                                     "resource_class": rc, "used": used,
                                     "project_id": row.get("project_id"),
                                     "user_id": row.get("user_id")}
            plan.add("allocation", alloc)
