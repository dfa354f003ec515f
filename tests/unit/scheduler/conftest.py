"""Fixtures of the scheduler's unit tests."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from berth.db import nodes
from berth.db.engine import Database
from berth.placement.base import Inventory
from berth.placement.embedded import EmbeddedPlacement

Report = Callable[[str, dict[str, Inventory]], None]


@pytest.fixture
def report_inventory(db: Database) -> Report:
    """``report_inventory(host, inventories)``: the node ``host`` (registered) reports
    ``inventories`` (resource class -> Inventory) to the embedded Placement, as its
    agent does."""
    def report(host: str, inventories: dict[str, Inventory]) -> None:
        rp = nodes.get_compute_node(db, host).rp_uuid
        placement = EmbeddedPlacement(db)
        placement.ensure_provider(rp, host)
        placement.set_inventory(rp, inventories)
    return report
