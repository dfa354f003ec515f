"""Each node's inventory as OpenStack Placement holds it, for the scheduler of an API
whose agents report there (``[placement]driver = openstack``).

With the embedded Placement the scheduler reads the inventory each agent reported,
with the agent's own reservations and allocation ratios, from the database. With
OpenStack Placement it is not in berth's database: the API's own ``[compute]``
options stood in for every node's, and a node whose agent was configured otherwise
could be chosen for a container Placement then refused. ``ReportedInventories``
asks Placement for a node's inventory, at most once per ``ttl`` seconds per node
(an inventory changes when the agent's options or the machine do); when Placement
does not answer, the scheduler falls back to the API's options (and says so once).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from berth.placement.base import Inventory, Placement, PlacementError

LOG = logging.getLogger(__name__)

#: Seconds a node's inventory read from Placement is used before it is read again.
TTL = 60.0


class ReportedInventories:
    """``inventories(rp_uuid)``: {resource class: Inventory} of the provider, from
    Placement or a copy at most ``ttl`` seconds old; {} when Placement has none or
    cannot be reached."""

    def __init__(self, placement: Placement, ttl: float = TTL,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._placement = placement
        self._ttl = ttl
        self._clock = clock
        self._lock = threading.Lock()
        self._seen: dict[str, tuple[float, dict[str, Inventory]]] = {}
        self._failing = False

    def __call__(self, rp_uuid: str) -> dict[str, Inventory]:
        now = self._clock()
        with self._lock:
            seen = self._seen.get(rp_uuid)
        if seen is not None and now - seen[0] < self._ttl:
            return seen[1]
        try:
            inventory = dict(self._placement.get_inventory(rp_uuid))
        except PlacementError as err:
            if not self._failing:
                LOG.warning("could not read provider %s's inventory from Placement (%s); "
                            "the scheduler assumes the API's [compute] options until it "
                            "answers", rp_uuid, err.msg)
            self._failing = True
            return seen[1] if seen is not None else {}
        if self._failing:
            LOG.info("Placement answers again: the scheduler uses the nodes' inventories")
            self._failing = False
        with self._lock:
            self._seen[rp_uuid] = (now, inventory)
        return inventory
