"""update_zun_service: the agent's heartbeat in ``zun_service``."""

from __future__ import annotations

from berth.db import nodes
from berth.db.engine import Database

#: A node is down after ``service_down_time`` seconds without a beat: it beats three
#: times in that window, never less often than every ``periodic_interval_max`` nor
#: more often than every 10 s. With the defaults (180 s, 60 s), every 60 s as Zun
#: beats: one statement a minute per idle node.
BEATS_PER_DOWN_TIME = 3
MIN_SPACING = 10.0


def heartbeat_spacing(periodic_interval_max: float, service_down_time: float) -> float:
    return min(periodic_interval_max,
               max(MIN_SPACING, service_down_time / BEATS_PER_DOWN_TIME))


def update_zun_service(db: Database, host: str, availability_zone: str | None
                       ) -> bool | None:
    """One beat; the service's disabled flag when the beat read it (``nodes.beat``)."""
    return nodes.beat(db, host, nodes.COMPUTE_BINARY, availability_zone)
