"""update_zun_service: the agent's heartbeat in ``zun_service``."""

from __future__ import annotations

from berth.db import nodes
from berth.db.engine import Database


def update_zun_service(db: Database, host: str, availability_zone: str | None) -> None:
    nodes.beat(db, host, nodes.COMPUTE_BINARY, availability_zone)
