"""Read-mostly resources of the deployment: hosts (api-v1.md §10), services (§11),
availability zones (§14) and a container's actions log (§7.9)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from fastapi import Request

from berth.api.links import base_url, links
from berth.api.microversions import APIVersion
from berth.api.operations import containers as containers_api
from berth.api.schemas import types as T
from berth.api.state import ApiState
from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.db import actions, nodes, paging
from berth.db.models import ComputeNode, ContainerAction, ContainerActionEvent, ZunService
from berth.policies import enforcer as policy

LOG = logging.getLogger(__name__)

HOST_KEYS = ("uuid", "hostname", "mem_total", "mem_used", "cpus", "cpu_used", "disk_total",
             "disk_used", "disk_quota_supported", "total_containers", "architecture",
             "os_type", "os", "kernel_version", "labels", "runtimes", "enable_cpu_pinning")
SERVICE_KEYS = ("id", "host", "binary", "disabled", "disabled_reason", "forced_down",
                "report_count")
ACTION_KEYS = ("action", "container_uuid", "request_id", "user_id", "project_id", "message")
EVENT_KEYS = ("event", "result")


def check_admin(ctx: RequestContext, action: str) -> None:
    """``action``'s rule (admin by default) with the caller's project as its target."""
    policy.authorize(ctx, action)


# -- paging (api-v1.md §5) --------------------------------------------------------------

PAGE_PARAMS = ("limit", "marker", "sort_key", "sort_dir")


def listing_scope(ctx: RequestContext, query: Mapping[str, str], filters: tuple[str, ...],
                  rule: str) -> bool:
    """A list's query checked: only ``filters``, paging and ``all_projects`` (400
    naming the others); ``all_projects`` needs ``rule`` (admin by default). Whether it
    was asked."""
    unknown = [k for k in query if k not in filters + PAGE_PARAMS + ("all_projects",)]
    if unknown:
        what = f"Filter on {', '.join(filters)}." if filters else \
            f"A list takes {', '.join(PAGE_PARAMS)} and all_projects."
        raise exc.InvalidParameterValue(
            err=f"Unknown parameters: {', '.join(sorted(unknown))}. {what}")
    asked = T.lenient_bool("all_projects", query["all_projects"]) \
        if "all_projects" in query else False
    if asked:
        policy.authorize(ctx, rule)
    return asked


@dataclass(frozen=True, slots=True)
class Page:
    limit: int
    marker: str | None
    sort_key: str
    sort_dir: str


def page_params(query: Mapping[str, str], max_limit: int, default_sort: str) -> Page:
    """limit (positive, clamped to ``max_limit``), marker, sort_key, sort_dir."""
    value = query.get("limit")
    limit = max_limit
    if value is not None:
        digits = value.lstrip("-")
        if not digits.isdigit() or len(digits.lstrip("0")) > 18 or int(value) <= 0:
            raise exc.InvalidParameterValue(
                err=f"Invalid limit {value!r}: it must be a positive integer.")
        limit = min(int(value), max_limit)
    sort_dir = query.get("sort_dir", "asc")
    if sort_dir not in ("asc", "desc"):
        raise exc.InvalidParameterValue(err=f"Invalid sort_dir {sort_dir!r}: use asc or desc.")
    return Page(limit=limit, marker=query.get("marker"),
                sort_key=query.get("sort_key", default_sort), sort_dir=sort_dir)


def next_url(request: Request, collection: str, rows: Sequence[Any], page: Page,
             carry: Mapping[str, str] | None = None) -> str | None:
    """The URL of the next page when this one is full, carrying the filters (Zun drops
    them); None otherwise."""
    if not rows or len(rows) < page.limit:
        return None
    params = dict(carry or {})
    params.update(sort_key=page.sort_key, sort_dir=page.sort_dir, limit=str(page.limit),
                  marker=rows[-1].uuid)
    return f"{base_url(request)}/v1/{collection}?{urlencode(params)}"


# -- hosts ------------------------------------------------------------------------------

def require_version(version: APIVersion, minimum: str, what: str) -> None:
    if not version.at_least(minimum):
        raise exc.NotAcceptable(
            f"The requested API ({what}) is not supported for version {version}: it needs "
            f"{minimum} or later (send OpenStack-API-Version: container {minimum}).")


#: The keys of a host whose values are read from its containers at each request
#: (``nodes.usage_of_hosts``), not from the compute node's row, which the agent
#: writes a while after a change (``berth.compute.claims``); the host list sorts by
#: them as read so too.
LIVE_USAGE_KEYS = tuple(nodes.LIVE_USAGE_ORDER)


def host_views(state: ApiState, nodes_: Sequence[ComputeNode], request: Request
               ) -> list[dict[str, Any]]:
    """The hosts as the API shows them, their usage counted now, in one query."""
    usage = nodes.usage_of_hosts(state.db, [n.hostname for n in nodes_])
    return [host_view(n, request, usage[n.hostname]) for n in nodes_]


def host_view(node: ComputeNode, request: Request, usage: nodes.NodeUsage
              ) -> dict[str, Any]:
    out: dict[str, Any] = {k: getattr(node, k) for k in HOST_KEYS}
    out.update((k, getattr(usage, k)) for k in LIVE_USAGE_KEYS)
    out["labels"] = out["labels"] or {}
    out["runtimes"] = out["runtimes"] or ["runc"]
    out["links"] = links(request, "hosts", node.uuid)
    return out


def list_hosts(state: ApiState, ctx: RequestContext, *, limit: int, marker: str | None,
               sort_key: str, sort_dir: str) -> list[ComputeNode]:
    check_admin(ctx, "host:get_all")
    return paging.page(state.db, ComputeNode, limit=limit, marker=marker, sort_key=sort_key,
                       sort_dir=sort_dir, what="host", computed=nodes.LIVE_USAGE_ORDER,
                       not_found=lambda m: exc.ComputeNodeNotFound(compute_node=m))


def get_host(state: ApiState, ctx: RequestContext, ident: str) -> ComputeNode:
    check_admin(ctx, "host:get")
    return nodes.get_compute_node(state.db, ident)


# -- services ---------------------------------------------------------------------------

def service_view(svc: ZunService, state: ApiState) -> dict[str, Any]:
    out: dict[str, Any] = {k: getattr(svc, k) for k in SERVICE_KEYS}
    out["state"] = "up" if nodes.service_is_up(svc, state.settings.service_down_time) \
        else "down"
    out["last_seen_up"] = actions.format_time(svc.last_seen_up)
    out["availability_zone"] = svc.availability_zone or \
        state.settings.default_availability_zone
    out["created_at"] = actions.format_time(svc.created_at)
    out["updated_at"] = actions.format_time(svc.updated_at)
    return out


def list_services(state: ApiState, ctx: RequestContext) -> list[dict[str, Any]]:
    check_admin(ctx, "zun-service:get_all")
    return [service_view(s, state) for s in nodes.list_services(state.db)]


def _service_ident(params: Mapping[str, Any]) -> tuple[str, str]:
    for key in ("host", "binary"):
        if T.is_none_string(params.get(key)):
            raise exc.InvalidParameterValue(
                err=f"'{key}' is a required parameter: name the service with "
                    f"?host=<host>&binary=<binary> (e.g. binary=zun-compute).")
    host = T.host_name("host", params["host"])
    binary = T.string("binary", params["binary"], 1, 255, what="a service binary name")
    return host, binary


def enable_service(state: ApiState, ctx: RequestContext, params: Mapping[str, Any]
                   ) -> dict[str, Any]:
    check_admin(ctx, "zun-service:enable")
    host, binary = _service_ident(params)
    nodes.update_service(state.db, host, binary, {"disabled": False, "disabled_reason": None})
    state.services_changed()
    LOG.info("service %s on %s enabled", binary, host)
    return {"host": host, "binary": binary, "disabled": False, "disabled_reason": None}


def disable_service(state: ApiState, ctx: RequestContext, params: Mapping[str, Any]
                    ) -> dict[str, Any]:
    check_admin(ctx, "zun-service:disable")
    host, binary = _service_ident(params)
    reason = params.get("disabled_reason")
    reason = None if T.is_none_string(reason) else \
        T.string("disabled_reason", reason, 1, 255, what="a reason")
    nodes.update_service(state.db, host, binary, {"disabled": True, "disabled_reason": reason})
    state.services_changed()
    LOG.info("service %s on %s disabled (%s): no new containers go there", binary, host,
             reason or "no reason given")
    return {"host": host, "binary": binary, "disabled": True, "disabled_reason": reason}


def force_down_service(state: ApiState, ctx: RequestContext, params: Mapping[str, Any]
                       ) -> dict[str, Any]:
    check_admin(ctx, "zun-service:force_down")
    host, binary = _service_ident(params)
    if T.is_none_string(params.get("forced_down")):
        raise exc.InvalidParameterValue(
            err="'forced_down' is a required parameter: send forced_down=True to mark the "
                "service down, forced_down=False to undo it.")
    forced = T.strict_bool("forced_down", params["forced_down"])
    nodes.update_service(state.db, host, binary, {"forced_down": forced})
    state.services_changed()
    LOG.info("service %s on %s %s", binary, host,
             "forced down" if forced else "no longer forced down")
    return {"host": host, "binary": binary, "forced_down": forced}


def delete_service(state: ApiState, ctx: RequestContext, params: Mapping[str, Any]) -> None:
    check_admin(ctx, "zun-service:delete")
    host, binary = _service_ident(params)
    nodes.delete_service(state.db, host, binary)
    state.services_changed()
    LOG.info("service %s on %s deleted", binary, host)


# -- availability zones ---------------------------------------------------------------

def availability_zones(state: ApiState) -> list[dict[str, str]]:
    """One entry per distinct zone of the services (a service without one is in
    ``[DEFAULT]default_availability_zone``)."""
    default = state.settings.default_availability_zone
    zones = sorted({s.availability_zone or default for s in nodes.list_services(state.db)})
    return [{"availability_zone": z} for z in zones]


# -- container actions ------------------------------------------------------------------

def action_view(row: ContainerAction) -> dict[str, Any]:
    out: dict[str, Any] = {k: getattr(row, k) for k in ACTION_KEYS}
    out["start_time"] = actions.format_time(row.start_time)
    out["finish_time"] = actions.format_time(row.finish_time)
    return out


def event_view(ev: ContainerActionEvent, with_traceback: bool) -> dict[str, Any]:
    out: dict[str, Any] = {k: getattr(ev, k) for k in EVENT_KEYS}
    out["start_time"] = actions.format_time(ev.start_time)
    out["finish_time"] = actions.format_time(ev.finish_time)
    # container:action:events (admin): others see that an event failed, not where.
    out["traceback"] = ev.traceback if with_traceback else None
    return out


def list_actions(state: ApiState, ctx: RequestContext, ident: str) -> list[dict[str, Any]]:
    row = containers_api.get(state, ctx, ident, "container:actions")
    return [action_view(a) for a in actions.list_actions(state.db, row.uuid)]


def show_action(state: ApiState, ctx: RequestContext, ident: str, request_id: str
                ) -> dict[str, Any]:
    row = containers_api.get(state, ctx, ident, "container:actions")
    try:
        action, events = actions.get_action(state.db, row.uuid, request_id)
    except exc.ResourceNotFound:
        raise exc.ResourceNotFound(
            f"Action {request_id} of container {row.uuid} could not be found; list the "
            f"container's actions with `zun action-list {ident}`.",
            resource=f"Action {request_id}") from None
    out = action_view(action)
    with_traceback = policy.allows(ctx, "container:action:events", row)
    out["events"] = [event_view(e, with_traceback) for e in events]
    return out
