"""Networks: Zun's records of Neutron networks.

Zun writes one row per Neutron network and host (its kuryr driver's Docker network);
berth records a Neutron network once, in the shape ``berth.db.networks.create_neutron``
gives it (``subnet`` the placeholder ``n:<neutron id>``, ``bridge`` br-int; Neutron
holds the subnets). The first row of each Neutron network is carried with its uuid;
the others are rows the import cannot carry.
"""

from __future__ import annotations

from berth.takeover.plan import Plan, carry
from berth.takeover.source import ZunRows


def convert(zun: ZunRows, plan: Plan) -> None:
    seen: dict[str, str] = {}
    for row in zun["network"]:
        ident = row.get("uuid") or f"id={row['id']}"
        neutron_id = row.get("neutron_net_id")
        if not neutron_id or not row.get("uuid"):
            plan.refuse("network", ident, "it has no neutron_net_id or no uuid")
            continue
        if neutron_id in seen:
            plan.refuse("network", ident, f"Neutron network {neutron_id} is carried already as "
                                          f"{seen[neutron_id]} (berth records a Neutron "
                                          f"network once, for every host)")
            continue
        seen[neutron_id] = row["uuid"]
        plan.add("network", carry(row, "network", subnet=f"n:{neutron_id}"[:43], gateway="",
                                  bridge="br-int", host=None, shared=False))
