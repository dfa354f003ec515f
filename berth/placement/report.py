"""Report one node to Placement: its provider, inventory and berth's traits.

Called by ``inventory_host`` at start-up and on its timer.

With ``[compute]host_shared_with_nova`` the node's provider is Nova's: the one named
after the node (``find_shared_provider``), which the agent never creates. Each write happens only
when something changed (the drivers compare first), so the usual run costs reads
only. Traits berth does not manage (an operator's ``CUSTOM_*`` ones) are kept.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from berth.placement.base import (
    TRAIT_COMPUTE_STATUS_DISABLED,
    Inventory,
    Placement,
    Provider,
)
from berth.placement.requests import node_traits

LOG = logging.getLogger(__name__)

#: Traits whose presence berth decides; every other trait is left as it is.
MANAGED_TRAITS = frozenset({TRAIT_COMPUTE_STATUS_DISABLED})


def report_node(placement: Placement, provider_uuid: str, name: str,
                inventories: Mapping[str, Inventory], service_disabled: bool,
                create: bool = True) -> bool:
    """Bring the node's provider up to date; True when anything was written. With
    ``create`` false the provider must exist (someone else's: Nova's), else
    ProviderNotFound. PlacementError (and subclasses) go to the caller."""
    if create:
        placement.ensure_provider(provider_uuid, name)
    changed = placement.set_inventory(provider_uuid, inventories)
    current = placement.get_traits(provider_uuid)
    wanted = (current - MANAGED_TRAITS) | node_traits(service_disabled)
    if wanted != current:
        placement.set_traits(provider_uuid, wanted)
        changed = True
    if changed:
        LOG.info("reported node %s to Placement (provider %s, service %s)", name,
                 provider_uuid, "disabled" if service_disabled else "enabled")
    return changed


def shared_provider_names(host: str, hostname: str, fqdn: str) -> tuple[str, ...]:
    """The names Nova's provider of this node may have, in the order they are tried
    (Zun's): ``[DEFAULT]host``, then the machine's hostname and FQDN (Nova names its
    compute node provider after its hypervisor_hostname, which may be either)."""
    return tuple(dict.fromkeys(n for n in (host, hostname, fqdn) if n))


def find_shared_provider(placement: Placement, names: Sequence[str]) -> Provider | None:
    """The first provider of ``names`` that Placement has, or None."""
    for name in names:
        found = placement.find_provider(name)
        if found is not None:
            return found
    return None
