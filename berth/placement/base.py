"""The Placement interface and the plain values that cross it.

A *provider* is one compute node (its uuid is ``compute_node.rp_uuid``). It offers an
*inventory* per resource class (``VCPU``, ``MEMORY_MB``, ``DISK_GB``), carries *traits*
and belongs to *aggregates*. A *consumer* is one container; its *allocation* is the
amount of each class it holds on one provider.

Capacity follows OpenStack Placement exactly, so that both implementations accept and
refuse the same requests::

    capacity = (total - reserved) * allocation_ratio
    fits     = used + amount <= capacity
               and min_unit <= amount <= max_unit and amount % step_size == 0

Every change to a provider (inventory, traits, aggregates, an allocation on it) bumps
its *generation*. Writers send the generation they last saw; a stale one is refused
(``ResourceProviderUpdateConflict``) and the writer re-reads and tries again.

Errors::

    PlacementError                      Placement failed or answered something unexpected
    ├── ProviderNotFound                no provider with that uuid (report the node first)
    ├── ResourceProviderUpdateConflict  the provider changed under us, every attempt
    └── AllocationFailed                the request does not fit (capacity, units, class)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from berth.common.exceptions import BerthError

VCPU = "VCPU"
MEMORY_MB = "MEMORY_MB"
DISK_GB = "DISK_GB"

#: Trait a node carries while its zun-compute service is disabled; the scheduler's
#: Placement request forbids it (rpc-compute.md §4.1, step 3).
TRAIT_COMPUTE_STATUS_DISABLED = "CUSTOM_ZUN_COMPUTE_STATUS_DISABLED"

#: Attempts on a generation conflict (Zun: 4, rpc-compute.md §4.3).
CONFLICT_ATTEMPTS = 4


class PlacementError(BerthError):
    message = "Placement error: %(reason)s"


class ProviderNotFound(PlacementError):
    message = "Resource provider %(uuid)s does not exist in Placement."


class ResourceProviderUpdateConflict(PlacementError):
    message = ("Resource provider %(uuid)s kept changing while berth updated it "
               "(%(attempts)s attempts); the next periodic report will try again.")


class AllocationFailed(PlacementError):
    message = "Allocation does not fit: %(reason)s"


@dataclass(frozen=True, slots=True)
class Provider:
    uuid: str
    name: str
    generation: int = 0


@dataclass(frozen=True, slots=True)
class Inventory:
    """What a provider offers of one resource class. ``max_unit`` None = ``total``."""

    total: int
    reserved: int = 0
    min_unit: int = 1
    max_unit: int | None = None
    step_size: int = 1
    allocation_ratio: float = 1.0

    @classmethod
    def of_row(cls, row: Any) -> Inventory:
        """From a stored inventory (embedded Placement's ProviderInventory, or a row of
        its columns)."""
        return cls(total=row.total, reserved=row.reserved, min_unit=row.min_unit,
                   max_unit=row.max_unit, step_size=row.step_size,
                   allocation_ratio=float(row.allocation_ratio))

    @property
    def largest_unit(self) -> int:
        return self.total if self.max_unit is None else self.max_unit

    @property
    def capacity(self) -> float:
        return (self.total - self.reserved) * self.allocation_ratio

    def normalized(self) -> Inventory:
        """The same inventory with ``max_unit`` spelled out (for comparisons)."""
        return Inventory(self.total, self.reserved, self.min_unit, self.largest_unit,
                         self.step_size, float(self.allocation_ratio))


@dataclass(frozen=True, slots=True)
class Allocation:
    consumer_uuid: str
    provider_uuid: str
    resources: Mapping[str, int] = field(default_factory=dict)
    project_id: str | None = None
    user_id: str | None = None


def shortfall(resource_class: str, inventory: Inventory | None, used: int,
              amount: int) -> str | None:
    """Why ``amount`` of ``resource_class`` does not fit next to ``used``; None when
    it does (the same rules as OpenStack Placement)."""
    if inventory is None:
        return f"the provider has no {resource_class} inventory"
    if amount < inventory.min_unit:
        return f"{resource_class}: {amount} is below min_unit {inventory.min_unit}"
    if amount > inventory.largest_unit:
        return f"{resource_class}: {amount} is above max_unit {inventory.largest_unit}"
    if inventory.step_size > 1 and amount % inventory.step_size:
        return f"{resource_class}: {amount} is not a multiple of step_size {inventory.step_size}"
    if used + amount > inventory.capacity:
        free = max(inventory.capacity - used, 0)
        return (f"{resource_class}: requested {amount}, free {free:g} of capacity "
                f"{inventory.capacity:g} (total {inventory.total}, reserved "
                f"{inventory.reserved}, allocation ratio {inventory.allocation_ratio:g})")
    return None


class Placement(Protocol):
    """A node-resource ledger. Implementations are thread-safe; every method may
    raise PlacementError when the ledger cannot be reached."""

    #: Whether its allocations are rows of berth's own database (the embedded
    #: Placement), which a flow's first statement may read with its write
    #: (``berth.db.task_begin.begin_reading_allocations``).
    in_database: bool

    def ensure_provider(self, uuid: str, name: str) -> Provider:
        """The provider ``uuid``, created with ``name`` when missing. Idempotent.
        PlacementError when another provider already has ``name``."""
        ...

    def get_provider(self, uuid: str) -> Provider | None:
        """The provider, or None when there is none."""
        ...

    def find_provider(self, name: str) -> Provider | None:
        """The provider named ``name`` (names are unique), or None when there is none."""
        ...

    def set_inventory(self, provider_uuid: str, inventories: Mapping[str, Inventory]) -> bool:
        """Make the provider's inventory exactly ``inventories`` (classes not named
        are removed). True when something changed, False when it already matched
        (no write). Retries generation conflicts; ResourceProviderUpdateConflict
        after CONFLICT_ATTEMPTS; ProviderNotFound; PlacementError when Placement
        refuses (for example removing a class that is in use)."""
        ...

    def get_inventory(self, provider_uuid: str) -> dict[str, Inventory]:
        ...

    def set_traits(self, provider_uuid: str, traits: Iterable[str]) -> bool:
        """Make the provider's traits exactly ``traits`` (custom ones are created).
        True when something changed. Conflicts as ``set_inventory``."""
        ...

    def get_traits(self, provider_uuid: str) -> frozenset[str]:
        ...

    def set_aggregates(self, provider_uuid: str, aggregates: Iterable[str]) -> bool:
        """Make the provider's aggregate uuids exactly ``aggregates``. True when
        something changed. Conflicts as ``set_inventory``."""
        ...

    def get_aggregates(self, provider_uuid: str) -> frozenset[str]:
        ...

    def allocate(self, consumer_uuid: str, provider_uuid: str, resources: Mapping[str, int],
                 project_id: str | None, user_id: str | None) -> None:
        """Give the consumer ``resources`` on the provider, atomically against every
        other allocation, replacing whatever the consumer held before (so a retry is
        harmless). AllocationFailed when it does not fit; ProviderNotFound."""
        ...

    def holds(self, consumer_uuid: str, provider_uuid: str,
              resources: Mapping[str, int]) -> bool:
        """Whether the consumer holds exactly ``resources`` on the provider already
        (then ``allocate`` need not run); False when that is not known without a
        round trip of its own."""
        ...

    def remove_allocation(self, consumer_uuid: str) -> bool:
        """Release everything the consumer holds. Idempotent: True when something
        was released, False when it held nothing."""
        ...

    def get_allocation(self, consumer_uuid: str) -> dict[str, dict[str, int]]:
        """What the consumer holds: ``{provider_uuid: {class: amount}}`` ({} = nothing)."""
        ...

    def provider_allocations(self, provider_uuid: str) -> dict[str, dict[str, int]]:
        """Every allocation on the provider: ``{consumer_uuid: {class: amount}}``.
        ProviderNotFound."""
        ...

    def usages(self, provider_uuid: str) -> dict[str, int]:
        """Amount allocated on the provider per class (classes of its inventory,
        0 when unused). ProviderNotFound."""
        ...


def holds_exactly(held: Mapping[tuple[str, str], int], provider_uuid: str,
                  resources: Mapping[str, int]) -> bool:
    """Whether ``held`` ((provider uuid, class) -> amount: all a consumer holds) is
    exactly ``resources`` on the provider, and nothing else (``Placement.holds``)."""
    return dict(held) == {(provider_uuid, rc): int(amount) for rc, amount in resources.items()}
