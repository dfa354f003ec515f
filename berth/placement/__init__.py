"""Placement: what each node offers (inventory, traits, aggregates) and what each
container holds on it (allocations).

``base.py`` is the interface and its values; ``embedded.py`` keeps the ledger in
berth's own database (the default, no extra service); ``openstack.py`` speaks to
OpenStack Placement over its REST API. ``requests.py`` turns a container's cpu,
memory and disk into the resource amounts allocated for it, and a node's figures
into its inventory.
"""

from berth.placement.base import (
    DISK_GB,
    MEMORY_MB,
    TRAIT_COMPUTE_STATUS_DISABLED,
    VCPU,
    Allocation,
    AllocationFailed,
    Inventory,
    Placement,
    PlacementError,
    Provider,
    ProviderNotFound,
    ResourceProviderUpdateConflict,
)

__all__ = [
    "DISK_GB", "MEMORY_MB", "TRAIT_COMPUTE_STATUS_DISABLED", "VCPU", "Allocation",
    "AllocationFailed", "Inventory", "Placement", "PlacementError", "Provider",
    "ProviderNotFound", "ResourceProviderUpdateConflict",
]
