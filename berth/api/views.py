"""Rendering records for the wire (api-v1.md §7.1): which keys, in which format, and
which ones only some callers see (``container:get_one:<key>`` rules, admin by default)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from typing import Any

from fastapi import Request

from berth.api.links import links
from berth.common.context import RequestContext
from berth.db.models import Container
from berth.policies import enforcer as policy

CONTAINER_KEYS = (
    "uuid", "name", "image", "user_id", "project_id", "command", "entrypoint", "status",
    "status_reason", "status_detail", "task_state", "cpu", "memory", "disk", "environment",
    "labels", "workdir", "hostname", "ports", "addresses", "restart_policy", "interactive",
    "tty", "auto_remove", "auto_heal", "image_driver", "security_groups", "healthcheck",
    "cpu_policy", "registry_id", "created_at", "updated_at",
)
ADMIN_KEYS = ("host", "image_pull_policy", "privileged", "runtime")


def shown_keys(ctx: RequestContext) -> tuple[str, ...]:
    """Which of ADMIN_KEYS the caller sees: those whose ``container:get_one:<key>``
    rule it passes (the others are left out of the view, not null)."""
    return tuple(k for k in ADMIN_KEYS if policy.allows(ctx, f"container:get_one:{k}"))


def format_time(value: dt.datetime | None) -> str | None:
    """Zun's container times: ``YYYY-MM-DD HH:MM:SS`` (``.ffffff`` when non-zero)."""
    if value is None:
        return None
    if value.tzinfo is None:   # the database's naive UTC: isoformat is the same text, faster
        return value.isoformat(sep=" ")
    return value.strftime("%Y-%m-%d %H:%M:%S.%f" if value.microsecond else "%Y-%m-%d %H:%M:%S")


def container_view(row: Container, *, shown: tuple[str, ...],
                   request: Request | None = None) -> dict[str, Any]:
    """The container as Zun shows it, with the ``shown`` ones of ADMIN_KEYS
    (``shown_keys``); ``links`` only when ``request`` is given (single-object responses)."""
    out: dict[str, Any] = {}
    # A loaded row keeps its columns in __dict__: reading them there skips the ORM's
    # attribute descriptors (a list of 1,000 rows reads 36,000 of them).
    loaded = row.__dict__
    for key in CONTAINER_KEYS + shown:
        if key == "registry_id":
            # The registry's uuid (models.Container.registry_uuid), read without a
            # lazy load: the row is detached, and a new row has it only when set.
            out[key] = row.__dict__.get("registry_uuid") if row.registry_id else None
        else:
            out[key] = loaded[key] if key in loaded else getattr(row, key, None)
    _finish(out)
    if request is not None:
        out["links"] = links(request, "containers", row.uuid)
    return out


#: The columns a list reads (``containers.list_columns``), in the order
#: ``listed_view`` expects: the view's keys, then what the registry's uuid and the
#: stale-task check (api.operations.stale_tasks) need.
_LISTED_KEYS = tuple(k for k in CONTAINER_KEYS + ADMIN_KEYS if k != "registry_id")
LIST_COLUMNS = _LISTED_KEYS + ("registry_id", "registry_uuid", "task_deadline")
_REGISTRY_AT = len(_LISTED_KEYS)
#: The columns a show read on the event loop reads (``containers.get_columns_on_loop``):
#: the list's, and the Docker container's id (``operations.containers.show_on_loop``).
SHOW_COLUMNS = LIST_COLUMNS + ("container_id",)


def listed_view(row: Sequence[Any], *, shown: tuple[str, ...]) -> dict[str, Any]:
    """``container_view`` of a row of ``LIST_COLUMNS`` (no links, as in a list)."""
    out = dict(zip(_LISTED_KEYS, row))
    out["registry_id"] = row[_REGISTRY_AT + 1] if row[_REGISTRY_AT] else None
    if shown != ADMIN_KEYS:
        for key in ADMIN_KEYS:
            if key not in shown:
                del out[key]
    _finish(out)
    return out


def shown_view(row: Sequence[Any], *, shown: tuple[str, ...], request: Request
               ) -> dict[str, Any]:
    """``container_view`` of a row of ``SHOW_COLUMNS``, with its ``links``."""
    out = listed_view(row, shown=shown)
    out["links"] = links(request, "containers", out["uuid"])
    return out


def _finish(out: dict[str, Any]) -> None:
    """Zun's formats: times as text, empty collections rather than nulls."""
    out["created_at"] = format_time(out["created_at"])
    out["updated_at"] = format_time(out["updated_at"])
    for key, empty in _EMPTY.items():
        if out[key] is None:
            out[key] = empty()


_EMPTY: dict[str, Callable[[], Any]] = {"environment": dict, "labels": dict, "ports": list,
                                        "addresses": dict, "security_groups": list}
