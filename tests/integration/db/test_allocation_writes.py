"""The embedded Placement writes a consumer's allocation of every class in one INSERT
compiled once (``allocate_in``: SQLAlchemy's insertmanyvalues; a multi-row VALUES has
no cache key and was compiled at each create), and reads it back the same, on every
database berth runs on."""

from __future__ import annotations

import pytest
from support.statements import Statements

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


def _allocation_inserts(seen: Statements) -> list[bool]:
    """The INSERTs into ``allocation`` ``seen`` heard: whether each one's compiled form
    came from SQLAlchemy's cache."""
    return [cached for statement, cached in seen.compiled
            if statement.split()[:3] == ["INSERT", "INTO", "allocation"]]


def test_every_class_in_one_insert(any_db: Database, placement: EmbeddedPlacement) -> None:
    seen = Statements(any_db)
    placement.allocate("c1", RP, {VCPU: 2, MEMORY_MB: 512, DISK_GB: 10}, "p", "u")
    assert len(_allocation_inserts(seen)) == 1, seen.compiled
    assert placement.get_allocation("c1") == {RP: {VCPU: 2, MEMORY_MB: 512, DISK_GB: 10}}
    # A consumer's new allocation replaces its old one, again in one INSERT.
    placement.allocate("c1", RP, {VCPU: 1, MEMORY_MB: 256}, "p", "u")
    inserts = _allocation_inserts(seen)
    assert len(inserts) == 2
    assert inserts[1], "the second allocation's INSERT was compiled again"
    assert placement.get_allocation("c1") == {RP: {VCPU: 1, MEMORY_MB: 256}}
    placement.allocate("c2", RP, {VCPU: 3, MEMORY_MB: 1792}, "p", "u")
    assert placement.usages(RP) == {VCPU: 4, MEMORY_MB: 2048, DISK_GB: 0}


def test_a_refusal_writes_nothing(any_db: Database, placement: EmbeddedPlacement) -> None:
    seen = Statements(any_db)
    placement.allocate("c1", RP, {VCPU: 3}, "p", "u")
    with pytest.raises(AllocationFailed, match="VCPU"):
        placement.allocate("c2", RP, {VCPU: 2, MEMORY_MB: 64}, "p", "u")
    assert len(_allocation_inserts(seen)) == 1
    assert placement.get_allocation("c2") == {}
    assert placement.usages(RP) == {VCPU: 3, MEMORY_MB: 0, DISK_GB: 0}
