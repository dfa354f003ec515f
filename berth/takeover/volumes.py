"""Volumes and their mappings to containers.

Zun's volume rows (a Cinder volume, or a ``local`` one holding an injected file's
contents) carry over with their ids; berth's extra columns (``name``, ``size``) stay
empty, as for a volume Zun's API made. A Cinder volume stays attached where Zun
attached it (``connection_info``, ``host``): berth's agent finds it attached. Zun's
``connection_info`` is Cinder's connection info as its legacy attach answered it (with
``data.device_path`` once os-brick connected it); berth's cinder driver keeps a record
around it (``connection_info``, ``attachment_id``, ``device_path``), written here in
that shape so that berth's detach disconnects what Zun connected.
"""

from __future__ import annotations

import json
from typing import Any

from berth.takeover.plan import Plan, carry
from berth.takeover.source import ZunRows
from berth.volume.cinder_brick import normalized

PROVIDERS = ("cinder", "local")


def attachment_record(text: str | None) -> str | None:
    """berth's attachment record (JSON text) of Zun's ``connection_info``; None when
    Zun holds none. ValueError (TypeError: not a JSON object) when it is not a Cinder
    connection info."""
    if not text or not text.strip():
        return None
    try:
        info: Any = json.loads(text)
    except ValueError as err:
        raise ValueError(f"connection_info is not JSON ({err})") from err
    if not isinstance(info, dict):
        raise TypeError("connection_info is not a JSON object")
    try:
        info = normalized(info)
    except ValueError as err:
        raise ValueError(f"connection_info: {err}") from err
    # Zun attaches with Cinder's legacy calls only: no attachment id
    return json.dumps({"connection_info": info, "attachment_id": None,
                       "device_path": info["data"].get("device_path")})


def convert(zun: ZunRows, plan: Plan, container_uuids: set[str]) -> None:
    volumes: set[int] = set()
    for row in zun["volume"]:
        ident = row.get("uuid") or f"id={row['id']}"
        if row.get("volume_provider") not in PROVIDERS:
            plan.refuse("volume", ident, f"volume_provider {row.get('volume_provider')!r} is "
                                         f"not one berth has ({', '.join(PROVIDERS)})")
            continue
        if not row.get("uuid"):
            plan.refuse("volume", ident, "it has no uuid")
            continue
        extra: dict[str, Any] = {"auto_remove": bool(row.get("auto_remove"))}
        if row["volume_provider"] == "cinder":
            try:
                extra["connection_info"] = attachment_record(row.get("connection_info"))
            except (ValueError, TypeError) as err:
                plan.refuse("volume", ident, str(err))
                continue
        plan.add("volume", carry(row, "volume", **extra))
        volumes.add(row["id"])
    for row in zun["volume_mapping"]:
        ident = row.get("uuid") or f"id={row['id']}"
        if row.get("volume_id") not in volumes:
            reason = f"its volume (id {row.get('volume_id')}) is not carried"
        elif row.get("container_uuid") not in container_uuids:
            reason = f"its container {row.get('container_uuid')} is not carried"
        elif not row.get("container_path"):
            reason = "it has no container_path"
        else:
            plan.add("volume_mapping", carry(row, "volume_mapping", read_only=False))
            continue
        plan.refuse("volume_mapping", ident, reason)
