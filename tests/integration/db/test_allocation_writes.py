"""The embedded Placement writes a consumer's allocation of every class in one INSERT
compiled once (``allocate_in``: SQLAlchemy's insertmanyvalues; a multi-row VALUES has
no cache key and was compiled at each create), and reads it back the same, on every
database berth runs on."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import event

from berth.db.engine import Database
from berth.placement.base import DISK_GB, MEMORY_MB, VCPU, AllocationFailed, Inventory
from berth.placement.embedded import EmbeddedPlacement

pytestmark = pytest.mark.integration

RP = "0c3e9a51-6d7b-4f0e-8a8e-4b1f2d7c9e10"


@pytest.fixture
def placement(any_db: Database) -> EmbeddedPlacement:
    p = EmbeddedPlacement(any_db)
    p.ensure_provider(RP, "node-a")
    p.set_inventory(RP, {VCPU: Inventory(total=4), MEMORY_MB: Inventory(total=2048),
                         DISK_GB: Inventory(total=100)})
    return p


def _allocation_inserts(db: Database) -> list[bool]:
    """The INSERTs into ``allocation`` sent from now on: whether each one's compiled
    form came from SQLAlchemy's cache. SQLite writes on an engine of its own (``BEGIN
    IMMEDIATE``); elsewhere the writes' engine shares the engine's listeners."""
    sent: list[bool] = []

    def seen(conn: object, cursor: object, statement: str, parameters: object,
             context: Any, executemany: bool) -> None:
        if statement.split()[:3] == ["INSERT", "INTO", "allocation"]:
            sent.append(context.cache_hit is context.dialect.CACHE_HIT)
    event.listen(db._write_engine if db.is_sqlite else db.engine, "before_cursor_execute",
                 seen)
    return sent


def test_every_class_in_one_insert(any_db: Database, placement: EmbeddedPlacement) -> None:
    inserts = _allocation_inserts(any_db)
    placement.allocate("c1", RP, {VCPU: 2, MEMORY_MB: 512, DISK_GB: 10}, "p", "u")
    assert len(inserts) == 1, inserts
    assert placement.get_allocation("c1") == {RP: {VCPU: 2, MEMORY_MB: 512, DISK_GB: 10}}
    # A consumer's new allocation replaces its old one, again in one INSERT.
    placement.allocate("c1", RP, {VCPU: 1, MEMORY_MB: 256}, "p", "u")
    assert len(inserts) == 2
    assert inserts[1], "the second allocation's INSERT was compiled again"
    assert placement.get_allocation("c1") == {RP: {VCPU: 1, MEMORY_MB: 256}}
    placement.allocate("c2", RP, {VCPU: 3, MEMORY_MB: 1792}, "p", "u")
    assert placement.usages(RP) == {VCPU: 4, MEMORY_MB: 2048, DISK_GB: 0}


def test_a_refusal_writes_nothing(any_db: Database, placement: EmbeddedPlacement) -> None:
    inserts = _allocation_inserts(any_db)
    placement.allocate("c1", RP, {VCPU: 3}, "p", "u")
    with pytest.raises(AllocationFailed, match="VCPU"):
        placement.allocate("c2", RP, {VCPU: 2, MEMORY_MB: 64}, "p", "u")
    assert len(inserts) == 1
    assert placement.get_allocation("c2") == {}
    assert placement.usages(RP) == {VCPU: 3, MEMORY_MB: 0, DISK_GB: 0}
