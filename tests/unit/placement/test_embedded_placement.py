"""The embedded Placement on a real (temporary) SQLite database migrated with Alembic:
capacity rules, idempotence, generations, and atomic allocations under concurrency."""

from __future__ import annotations

import shutil
import threading
import uuid as uuidlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect

from berth.db import migrate
from berth.db.engine import Database
from berth.db.models import Base
from berth.placement.base import (
    DISK_GB,
    MEMORY_MB,
    TRAIT_COMPUTE_STATUS_DISABLED,
    VCPU,
    AllocationFailed,
    Inventory,
    PlacementError,
    ProviderNotFound,
)
from berth.placement.embedded import EmbeddedPlacement
from berth.placement.report import report_node

RP = "5b0d3c1e-1f4a-4a8e-9d6c-0e2b7a9f3c41"
PLACEMENT_TABLES = {"resource_provider", "inventory", "allocation",
                    "resource_provider_trait", "resource_provider_aggregate"}


def new_uuid() -> str:
    return str(uuidlib.uuid4())


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One migrated database file per module; each test works on a copy (migrating
    takes about a second)."""
    path = tmp_path_factory.mktemp("placement") / "template.sqlite"
    migrate.upgrade(f"sqlite:///{path}")
    return path


@pytest.fixture
def db(tmp_path: Path, migrated: Path) -> Iterator[Database]:
    path = tmp_path / "berth.sqlite"
    shutil.copyfile(migrated, path)
    database = Database(f"sqlite:///{path}")
    yield database
    database.dispose()


@pytest.fixture
def placement(db: Database) -> EmbeddedPlacement:
    p = EmbeddedPlacement(db)
    p.ensure_provider(RP, "node1")
    return p


def test_migration_creates_the_same_placement_tables_as_the_models(
        db: Database, tmp_path: Path) -> None:
    migrated = inspect(db.engine)
    other = create_engine(f"sqlite:///{tmp_path / 'create_all.sqlite'}")
    Base.metadata.create_all(other)
    created = inspect(other)
    assert PLACEMENT_TABLES <= set(migrated.get_table_names())
    for table in PLACEMENT_TABLES:
        assert ({c["name"] for c in migrated.get_columns(table)}
                == {c["name"] for c in created.get_columns(table)}), table
    other.dispose()


def test_ensure_provider_is_idempotent_and_refuses_a_taken_name(
        placement: EmbeddedPlacement) -> None:
    first = placement.get_provider(RP)
    assert first is not None and first.name == "node1" and first.generation == 0
    assert placement.ensure_provider(RP, "node1") == first
    with pytest.raises(PlacementError, match="node1"):
        placement.ensure_provider(new_uuid(), "node1")
    assert placement.get_provider(new_uuid()) is None


def test_set_inventory_writes_only_changes_and_bumps_the_generation(
        placement: EmbeddedPlacement) -> None:
    inv = {VCPU: Inventory(total=4, allocation_ratio=16.0), MEMORY_MB: Inventory(total=2048)}
    assert placement.set_inventory(RP, inv) is True
    g1 = placement.get_provider(RP).generation  # type: ignore[union-attr]
    assert g1 == 1
    assert placement.set_inventory(RP, inv) is False
    assert placement.get_provider(RP).generation == g1  # type: ignore[union-attr]
    assert placement.get_inventory(RP)[VCPU] == Inventory(4, 0, 1, 4, 1, 16.0)
    # A changed ratio, and a class that disappears, is a change.
    assert placement.set_inventory(RP, {VCPU: Inventory(total=4, allocation_ratio=8.0)})
    assert placement.get_provider(RP).generation == g1 + 1  # type: ignore[union-attr]
    assert set(placement.get_inventory(RP)) == {VCPU}


def test_capacity_counts_reserved_and_allocation_ratio(placement: EmbeddedPlacement) -> None:
    # VCPU: (4 - 1) * 2.0 = 6; MEMORY_MB: (1024 - 512) * 1.5 = 768
    placement.set_inventory(RP, {
        VCPU: Inventory(total=4, reserved=1, allocation_ratio=2.0),
        MEMORY_MB: Inventory(total=1024, reserved=512, allocation_ratio=1.5)})
    placement.allocate("c1", RP, {VCPU: 4, MEMORY_MB: 700}, "p", "u")
    placement.allocate("c2", RP, {VCPU: 2, MEMORY_MB: 68}, "p", "u")
    assert placement.usages(RP) == {VCPU: 6, MEMORY_MB: 768}
    with pytest.raises(AllocationFailed, match="VCPU: requested 1, free 0 of capacity 6"):
        placement.allocate("c3", RP, {VCPU: 1}, "p", "u")
    placement.remove_allocation("c2")
    with pytest.raises(AllocationFailed, match="MEMORY_MB"):
        placement.allocate("c3", RP, {VCPU: 1, MEMORY_MB: 69}, "p", "u")
    assert placement.get_allocation("c3") == {}         # nothing half-written
    placement.allocate("c3", RP, {VCPU: 2, MEMORY_MB: 68}, "p", "u")


@pytest.mark.parametrize("request_, why", [
    ({VCPU: 5}, "above max_unit 4"),
    ({VCPU: 0}, "below min_unit 1"),
    ({MEMORY_MB: 100}, "not a multiple of step_size 256"),
    ({DISK_GB: 1}, "no DISK_GB inventory"),
])
def test_units_and_missing_classes_are_refused(placement: EmbeddedPlacement,
                                               request_: dict[str, int], why: str) -> None:
    placement.set_inventory(RP, {VCPU: Inventory(total=4, allocation_ratio=16.0),
                                 MEMORY_MB: Inventory(total=4096, step_size=256)})
    with pytest.raises(AllocationFailed, match=why):
        placement.allocate("c1", RP, request_, "p", "u")


def test_allocate_replaces_what_the_consumer_held(placement: EmbeddedPlacement) -> None:
    placement.set_inventory(RP, {VCPU: Inventory(total=2)})
    placement.allocate("c1", RP, {VCPU: 2}, "p", "u")
    placement.allocate("c1", RP, {VCPU: 2}, "p", "u")      # a retry: not counted twice
    assert placement.usages(RP) == {VCPU: 2}
    assert placement.get_allocation("c1") == {RP: {VCPU: 2}}


def test_remove_allocation_is_idempotent(placement: EmbeddedPlacement) -> None:
    placement.set_inventory(RP, {VCPU: Inventory(total=2)})
    placement.allocate("c1", RP, {VCPU: 1}, "p", "u")
    before = placement.get_provider(RP).generation  # type: ignore[union-attr]
    assert placement.remove_allocation("c1") is True
    assert placement.get_provider(RP).generation == before + 1  # type: ignore[union-attr]
    assert placement.remove_allocation("c1") is False
    assert placement.remove_allocation("never-allocated") is False
    assert placement.usages(RP) == {VCPU: 0}


def test_unknown_provider(placement: EmbeddedPlacement) -> None:
    other = new_uuid()
    with pytest.raises(ProviderNotFound):
        placement.allocate("c1", other, {VCPU: 1}, "p", "u")
    with pytest.raises(ProviderNotFound):
        placement.set_inventory(other, {VCPU: Inventory(total=1)})
    with pytest.raises(ProviderNotFound):
        placement.usages(other)
    with pytest.raises(ProviderNotFound):
        placement.provider_allocations(other)


def test_provider_allocations_lists_every_consumer(placement: EmbeddedPlacement) -> None:
    placement.set_inventory(RP, {VCPU: Inventory(total=4), MEMORY_MB: Inventory(total=100)})
    assert placement.provider_allocations(RP) == {}
    placement.allocate("c1", RP, {VCPU: 2, MEMORY_MB: 10}, "p", "u")
    placement.allocate("c2", RP, {VCPU: 1}, "p", "u")
    assert placement.provider_allocations(RP) == {"c1": {VCPU: 2, MEMORY_MB: 10},
                                                  "c2": {VCPU: 1}}


def test_removing_inventory_in_use_is_refused(placement: EmbeddedPlacement) -> None:
    placement.set_inventory(RP, {VCPU: Inventory(total=2), MEMORY_MB: Inventory(total=64)})
    placement.allocate("c1", RP, {MEMORY_MB: 32, VCPU: 1}, "p", "u")
    with pytest.raises(PlacementError, match="MEMORY_MB inventory"):
        placement.set_inventory(RP, {VCPU: Inventory(total=2)})
    # Shrinking below usage is allowed (as in OpenStack Placement): nothing new fits.
    assert placement.set_inventory(RP, {VCPU: Inventory(total=1), MEMORY_MB: Inventory(total=64)})
    with pytest.raises(AllocationFailed):
        placement.allocate("c2", RP, {VCPU: 1}, "p", "u")


def test_invalid_inventory_is_refused(placement: EmbeddedPlacement) -> None:
    with pytest.raises(PlacementError, match="reserved"):
        placement.set_inventory(RP, {VCPU: Inventory(total=2, reserved=3)})
    with pytest.raises(PlacementError, match="resource class"):
        placement.set_inventory(RP, {"vcpu": Inventory(total=2)})


def test_traits_and_aggregates(placement: EmbeddedPlacement) -> None:
    g0 = placement.get_provider(RP).generation  # type: ignore[union-attr]
    assert placement.set_traits(RP, [TRAIT_COMPUTE_STATUS_DISABLED, "HW_CPU_X86_AVX"])
    assert placement.set_traits(RP, {"HW_CPU_X86_AVX", TRAIT_COMPUTE_STATUS_DISABLED}) is False
    assert placement.get_traits(RP) == {TRAIT_COMPUTE_STATUS_DISABLED, "HW_CPU_X86_AVX"}
    agg = new_uuid()
    assert placement.set_aggregates(RP, [agg.upper()])
    assert placement.get_aggregates(RP) == {agg}
    assert placement.get_provider(RP).generation == g0 + 2  # type: ignore[union-attr]
    with pytest.raises(PlacementError, match="trait"):
        placement.set_traits(RP, ["custom-lowercase"])
    with pytest.raises(PlacementError, match="uuid"):
        placement.set_aggregates(RP, ["not-a-uuid"])


def test_concurrent_allocations_never_exceed_capacity(placement: EmbeddedPlacement) -> None:
    """8 threads, 4 attempts each, 10 VCPU: exactly 10 allocations get through."""
    placement.set_inventory(RP, {VCPU: Inventory(total=10), MEMORY_MB: Inventory(total=10_000)})
    start = threading.Barrier(8)
    won: list[str] = []
    refused: list[str] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def worker(n: int) -> None:
        start.wait()
        for i in range(4):
            consumer = f"t{n}-{i}"
            try:
                placement.allocate(consumer, RP, {VCPU: 1, MEMORY_MB: 10}, "p", "u")
            except AllocationFailed:
                with lock:
                    refused.append(consumer)
            except BaseException as err:    # noqa: BLE001 - reported below
                with lock:
                    errors.append(err)
            else:
                with lock:
                    won.append(consumer)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    assert len(won) == 10 and len(refused) == 22
    assert placement.usages(RP) == {VCPU: 10, MEMORY_MB: 100}
    assert all(placement.get_allocation(c) == {RP: {VCPU: 1, MEMORY_MB: 10}} for c in won)
    assert all(placement.get_allocation(c) == {} for c in refused)


def test_report_node_manages_only_the_disabled_trait(placement: EmbeddedPlacement) -> None:
    inv = {VCPU: Inventory(total=2)}
    placement.set_traits(RP, ["CUSTOM_OPERATOR_GPU"])
    assert report_node(placement, RP, "node1", inv, service_disabled=True) is True
    assert placement.get_traits(RP) == {"CUSTOM_OPERATOR_GPU", TRAIT_COMPUTE_STATUS_DISABLED}
    assert report_node(placement, RP, "node1", inv, service_disabled=True) is False
    assert report_node(placement, RP, "node1", inv, service_disabled=False) is True
    assert placement.get_traits(RP) == {"CUSTOM_OPERATOR_GPU"}
    # A node not reported before gets its provider.
    other = new_uuid()
    report_node(placement, other, "node2", inv, service_disabled=False)
    assert placement.get_inventory(other)[VCPU].total == 2
