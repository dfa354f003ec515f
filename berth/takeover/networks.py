"""Networks: Zun's records of the Docker networks its kuryr driver made.

Zun writes a row only with its kuryr driver: one per Neutron network and host, the
node's Docker network (named after the Neutron network's id, its Docker id in
``network_id``). What berth makes of them follows its own ``[network]driver``:

- ``kuryr``: each row is the node's Docker network record berth's kuryr driver keeps
  (``berth.db.networks.claim_docker``: the host, the placeholder ``subnet``, the Docker
  id), so the agent finds the Docker networks Zun made instead of making them again. A
  row without a host names no node's network: one the import cannot carry.
- any other: berth records a Neutron network once, in the shape
  ``berth.db.networks.create_neutron`` gives it (``subnet`` the placeholder
  ``n:<neutron id>``, ``bridge`` br-int, no host; Neutron holds the subnets); the first
  row of each Neutron network is carried with its uuid, the others cannot be. The
  containers plugged on them are refused by ``containers`` (berth's cni driver does not
  manage what Docker plugged).
"""

from __future__ import annotations

from berth.db.networks import docker_placeholder
from berth.takeover.plan import Plan, carry
from berth.takeover.source import ZunRows


def convert(zun: ZunRows, plan: Plan, network_driver: str) -> None:
    if network_driver == "kuryr":
        _as_docker_networks(zun, plan)
    else:
        _as_neutron_records(zun, plan)


def _as_docker_networks(zun: ZunRows, plan: Plan) -> None:
    """Zun's unique key (neutron_net_id, host) is berth's: one row per node."""
    for row in zun["network"]:
        ident = row.get("uuid") or f"id={row['id']}"
        neutron_id, host = row.get("neutron_net_id"), row.get("host")
        if not neutron_id or not row.get("uuid") or not host:
            plan.refuse("network", ident, "it has no neutron_net_id, no uuid or no host, so "
                                          "it names no node's Docker network: delete it in "
                                          "Zun's database (berth's agent makes the node's "
                                          "Docker network again when a container needs it)")
            continue
        plan.add("network", carry(row, "network", subnet=docker_placeholder(neutron_id, host),
                                  gateway="", bridge="", shared=False))


def _as_neutron_records(zun: ZunRows, plan: Plan) -> None:
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
