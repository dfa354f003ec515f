"""Rendering records for the wire (api-v1.md §7.1): which keys, in which format, and
which ones only an admin sees."""

from __future__ import annotations

import datetime as dt
from typing import Any

from fastapi import Request

from berth.api.links import links
from berth.db.models import Container

CONTAINER_KEYS = (
    "uuid", "name", "image", "user_id", "project_id", "command", "entrypoint", "status",
    "status_reason", "status_detail", "task_state", "cpu", "memory", "disk", "environment",
    "labels", "workdir", "hostname", "ports", "addresses", "restart_policy", "interactive",
    "tty", "auto_remove", "auto_heal", "image_driver", "security_groups", "healthcheck",
    "cpu_policy", "registry_id", "created_at", "updated_at",
)
ADMIN_KEYS = ("host", "image_pull_policy", "privileged", "runtime")


def format_time(value: dt.datetime | None) -> str | None:
    """Zun's container times: ``YYYY-MM-DD HH:MM:SS`` (``.ffffff`` when non-zero)."""
    if value is None:
        return None
    if value.tzinfo is None:   # the database's naive UTC: isoformat is the same text, faster
        return value.isoformat(sep=" ")
    return value.strftime("%Y-%m-%d %H:%M:%S.%f" if value.microsecond else "%Y-%m-%d %H:%M:%S")


def container_view(row: Container, *, is_admin: bool, request: Request | None = None
                   ) -> dict[str, Any]:
    """The container as Zun shows it; ``links`` only when ``request`` is given
    (single-object responses)."""
    out: dict[str, Any] = {}
    # A loaded row keeps its columns in __dict__: reading them there skips the ORM's
    # attribute descriptors (a list of 1,000 rows reads 36,000 of them).
    loaded = row.__dict__
    for key in CONTAINER_KEYS + (ADMIN_KEYS if is_admin else ()):
        value = loaded[key] if key in loaded else getattr(row, key, None)
        if key in ("created_at", "updated_at"):
            value = format_time(value)
        elif key == "registry_id":
            # The registry's uuid (models.Container.registry_uuid), read without a
            # lazy load: the row is detached, and a new row has it only when set.
            value = row.__dict__.get("registry_uuid") if row.registry_id else None
        out[key] = value
    if out["environment"] is None:
        out["environment"] = {}
    if out["labels"] is None:
        out["labels"] = {}
    if out["ports"] is None:
        out["ports"] = []
    if out["addresses"] is None:
        out["addresses"] = {}
    if out["security_groups"] is None:
        out["security_groups"] = []
    if request is not None:
        out["links"] = links(request, "containers", row.uuid)
    return out
