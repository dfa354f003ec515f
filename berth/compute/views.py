"""The ``container`` argument and return value of the RPC contract: the row as plain
JSON-able data (datetimes as ISO text)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from berth.db.models import Container


def container_payload(row: Container) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for column in Container.__table__.columns:
        value = getattr(row, column.name)
        if isinstance(value, dt.datetime):
            value = value.isoformat()
        out[column.name] = value
    return out
