"""Volumes and their mappings to containers.

Zun's volume rows (a Cinder volume, or a ``local`` one holding an injected file's
contents) carry over with their ids; berth's extra columns (``name``, ``size``) stay
empty, as for a volume Zun's API made. A Cinder volume stays attached where Zun
attached it (``connection_info``, ``host``): berth's agent finds it attached.
"""

from __future__ import annotations

from berth.takeover.plan import Plan, carry
from berth.takeover.source import ZunRows

PROVIDERS = ("cinder", "local")


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
        plan.add("volume", carry(row, "volume", auto_remove=bool(row.get("auto_remove"))))
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
