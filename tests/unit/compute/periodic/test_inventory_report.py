"""The inventory report marks a node's provider disabled in Placement while the
node's own service is disabled, reading that one service row only (every agent
reports every interval: reading every service made the fleet's reads grow with the
square of its nodes). A real SQLite database and the embedded Placement."""

from __future__ import annotations

import logging
import uuid as uuidlib

import pytest

from berth.compute.periodic.inventory import (
    InventorySettings,
    report_to_placement,
    report_to_shared_provider,
)
from berth.db import nodes
from berth.db.engine import Database
from berth.placement.base import MEMORY_MB, VCPU, Inventory
from berth.placement.embedded import EmbeddedPlacement
from berth.placement.report import shared_provider_names
from berth.placement.requests import NodeReservations, unset_ratios

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


def test_a_node_shared_with_nova_reports_on_novas_provider_found_by_name(
        db: Database, caplog: pytest.LogCaptureFixture) -> None:
    """[compute]host_shared_with_nova: the provider named after the node (the first
    of its names Placement has) becomes the node's rp_uuid and gets its inventory; with
    none, nothing is created and the log says which names and which option."""
    placement = EmbeddedPlacement(db)
    node = nodes.upsert_compute_node(db, "n1", VALUES)
    settings = InventorySettings(host="n1", shared_provider_names=("n1", "n1.example.org"))
    with caplog.at_level(logging.ERROR):
        report_to_shared_provider(db, placement, node.rp_uuid, settings, VALUES)
    assert "no resource provider named 'n1' or 'n1.example.org'" in caplog.text
    assert "[compute]host_shared_with_nova = false" in caplog.text
    assert placement.find_provider("n1") is None
    assert placement.get_provider(node.rp_uuid) is None

    novas = str(uuidlib.uuid4())
    placement.ensure_provider(novas, "n1.example.org")       # as nova-compute made it
    report_to_shared_provider(db, placement, node.rp_uuid, settings, VALUES)
    assert nodes.provider_uuid_of(db, "n1") == novas
    assert placement.get_inventory(novas)[VCPU].total == 4
    assert placement.find_provider("n1") is None             # still no provider of its own


def test_on_novas_provider_an_unset_ratio_keeps_the_providers(db: Database) -> None:
    """Zun's rule: a [compute] ratio left unset keeps what the provider has (Nova's),
    a ratio set is written."""
    placement = EmbeddedPlacement(db)
    node = nodes.upsert_compute_node(db, "n1", VALUES)
    novas = str(uuidlib.uuid4())
    placement.ensure_provider(novas, "n1")
    placement.set_inventory(novas, {VCPU: Inventory(total=4, allocation_ratio=4.0),
                                    MEMORY_MB: Inventory(total=4096, allocation_ratio=1.0)})
    settings = InventorySettings(host="n1", shared_provider_names=("n1",),
                                 reservations=NodeReservations(cpu_allocation_ratio=16.0,
                                                               ram_allocation_ratio=2.0),
                                 ratios_unset=unset_ratios(None, 2.0, None))
    report_to_shared_provider(db, placement, node.rp_uuid, settings, VALUES)
    got = placement.get_inventory(novas)
    assert got[VCPU].allocation_ratio == 4.0           # unset: Nova's kept
    assert got[MEMORY_MB].allocation_ratio == 2.0      # set: berth's written
    assert got["DISK_GB"].allocation_ratio == 1.0      # new class: the initial ratio


def test_shared_provider_names_follow_zuns_order() -> None:
    assert shared_provider_names("n1", "n1", "n1.example.org") == ("n1", "n1.example.org")
    assert shared_provider_names("node-a", "box", "box.lan") == ("node-a", "box", "box.lan")
