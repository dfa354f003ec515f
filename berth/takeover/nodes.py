"""Compute nodes and services.

A node keeps its uuid and its Placement provider (``rp_uuid``): with OpenStack
Placement, the provider and the allocations Zun made there stay as they are, and
berth's agent reports to the same provider. berth has no PCI passthrough: a PCI
device Zun gave a container is a row the import cannot carry (free devices are only
inventory, which berth does not keep).
"""

from __future__ import annotations

from berth.takeover.plan import Plan, carry
from berth.takeover.source import ZunRows


def convert(zun: ZunRows, plan: Plan) -> None:
    hostnames: dict[str | None, str] = {}
    for row in zun["compute_node"]:
        host = row.get("hostname")
        if host in hostnames:
            plan.refuse("compute_node", row["uuid"], f"node {hostnames[host]} has the hostname "
                                                     f"{host} already; berth keeps one node "
                                                     f"per hostname")
            continue
        hostnames[host] = row["uuid"]
        plan.add("compute_node", carry(row, "compute_node"))
    for row in zun["zun_service"]:
        if not row.get("host") or not row.get("binary"):
            plan.refuse("zun_service", f"id={row['id']}", "it has no host or no binary")
            continue
        plan.add("zun_service", carry(row, "zun_service",
                                      report_count=int(row.get("report_count") or 0)))
    for row in zun["pci_device"]:
        if row.get("container_uuid"):
            plan.refuse("pci_device", row.get("uuid") or f"id={row['id']}",
                        f"PCI device {row.get('address')} is given to container "
                        f"{row['container_uuid']}; berth has no PCI passthrough")
