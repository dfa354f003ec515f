"""Report one node to Placement: its provider, inventory and berth's traits.

Called by ``inventory_host`` at start-up and on its timer. Each write happens only
when something changed (the drivers compare first), so the usual run costs reads
only. Traits berth does not manage (an operator's ``CUSTOM_*`` ones) are kept.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from berth.placement.base import TRAIT_COMPUTE_STATUS_DISABLED, Inventory, Placement
from berth.placement.requests import node_traits

LOG = logging.getLogger(__name__)

#: Traits whose presence berth decides; every other trait is left as it is.
MANAGED_TRAITS = frozenset({TRAIT_COMPUTE_STATUS_DISABLED})


def report_node(placement: Placement, provider_uuid: str, name: str,
                inventories: Mapping[str, Inventory], service_disabled: bool) -> bool:
    """Bring the node's provider up to date; True when anything was written.
    PlacementError (and subclasses) go to the caller."""
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
