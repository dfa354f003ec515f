"""The inventory report marks a node's provider disabled in Placement while the
node's own service is disabled, reading that one service row only (every agent
reports every interval: reading every service made the fleet's reads grow with the
square of its nodes). A real SQLite database and the embedded Placement."""

from __future__ import annotations

import uuid as uuidlib

from berth.compute.periodic.inventory import InventorySettings, report_to_placement
from berth.db import nodes
from berth.db.engine import Database
from berth.placement.embedded import EmbeddedPlacement

VALUES = {"cpus": 4, "mem_total": 4096, "disk_total": 20}


def test_only_the_disabled_nodes_provider_gets_the_disabled_trait(db: Database) -> None:
    for host in ("n1", "n2", "n3"):
        nodes.report_service_up(db, host, nodes.COMPUTE_BINARY, None)
    nodes.update_service(db, "n2", nodes.COMPUTE_BINARY, {"disabled": True})
    placement = EmbeddedPlacement(db)
    providers = {}
    for host in ("n1", "n2"):
        providers[host] = str(uuidlib.uuid4())
        report_to_placement(db, placement, providers[host], InventorySettings(host=host),
                            VALUES)
    assert "CUSTOM_ZUN_COMPUTE_STATUS_DISABLED" in placement.get_traits(providers["n2"])
    assert "CUSTOM_ZUN_COMPUTE_STATUS_DISABLED" not in placement.get_traits(providers["n1"])
    assert nodes.service_disabled(db, "n2", nodes.COMPUTE_BINARY)
    assert not nodes.service_disabled(db, "nowhere", nodes.COMPUTE_BINARY)
