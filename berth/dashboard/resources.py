"""The console's reads that Zun's API has no call for (berth.dashboard.app mounts them):

* ``GET /dashboard/api/me``: who the caller is and which of the console's admin-only
  controls the policy lets them use (the create form's host, the hosts, images and
  services views), and the volume driver (a mount's source is then a Cinder volume);
* ``GET /dashboard/api/networks``: the networks the caller's project can use (its own
  and the shared ones);
* ``GET /dashboard/api/volumes``: the project's volumes, each with its mounts;
* ``GET /dashboard/api/actions``: the latest actions on the project's containers,
  newest first (the events view; ``limit``, at most 500, default 200).

Each lists what the container list would let the caller see: ``container:get_all``
to read, only the caller's project unless ``all_projects=true``, which needs
``container:get_all_all_projects`` -- the rules the console's live stream follows.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from berth.api.auth import request_context
from berth.api.responses import JSONResponse
from berth.api.schemas.types import invalid, lenient_bool
from berth.api.state import ApiState
from berth.common.context import RequestContext
from berth.db import actions, networks, volumes
from berth.policies import enforcer as policy

router = APIRouter(prefix="/dashboard/api")

#: The most actions one read of the events view returns.
MAX_ACTIONS = 500
#: The console's controls that only some callers may use, and the rule each needs.
CONTROLS = {"host": "container:create:requested_destination",
            "image_pull_policy": "container:create:image_pull_policy",
            "hosts": "host:get_all", "images": "image:get_all",
            "services": "zun-service:get_all", "all_projects": "container:get_all_all_projects"}


def _state(request: Request) -> ApiState:
    state: ApiState = request.app.state.berth
    return state


def _scope(request: Request) -> tuple[RequestContext, str | None]:
    """The caller's context and the project whose rows they read (None: every one)."""
    ctx = request_context(request)
    policy.authorize(ctx, "container:get_all")
    value = request.query_params.get("all_projects")
    if value is not None and lenient_bool("all_projects", value):
        policy.authorize(ctx, "container:get_all_all_projects")
        return ctx, None
    return ctx, ctx.project_id


def _time(value: Any) -> str | None:
    return actions.format_time(value)


@router.get("/me")
def me(request: Request) -> JSONResponse:
    ctx = request_context(request)
    state = _state(request)
    return JSONResponse({
        "user_id": ctx.user_id, "project_id": ctx.project_id, "roles": list(ctx.roles),
        "allowed": {name: policy.allows(ctx, rule) for name, rule in CONTROLS.items()},
        "volume_driver": state.settings.volume_driver,
        "network_driver": state.settings.network_driver})


@router.get("/networks")
def list_networks(request: Request) -> JSONResponse:
    _ctx, project = _scope(request)
    rows = networks.visible(_state(request).db, project)
    return JSONResponse({"networks": [{
        "uuid": n.uuid, "name": n.name, "project_id": n.project_id,
        "subnet": n.subnet, "subnet_v6": n.subnet_v6, "gateway": n.gateway,
        "shared": n.shared, "default": n.default_of is not None,
        "neutron_net_id": n.neutron_net_id, "host": n.host,
        "created_at": _time(n.created_at)} for n in rows]})


@router.get("/volumes")
def list_volumes(request: Request) -> JSONResponse:
    _ctx, project = _scope(request)
    rows = volumes.listed(_state(request).db, project)
    return JSONResponse({"volumes": [{
        "uuid": v.uuid, "name": v.name, "project_id": v.project_id,
        "provider": v.volume_provider, "cinder_volume_id": v.cinder_volume_id,
        "size": v.size, "host": v.host, "auto_remove": v.auto_remove,
        "created_at": _time(v.created_at),
        "mounts": [{"container_uuid": uuid, "container_name": name, "path": path}
                   for uuid, path, name in mounts]} for v, mounts in rows]})


@router.get("/actions")
def list_actions(request: Request) -> JSONResponse:
    _ctx, project = _scope(request)
    raw = request.query_params.get("limit", "200")
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_ACTIONS:
        raise invalid("limit", raw, f"It must be a whole number from 1 to {MAX_ACTIONS}.")
    rows = actions.recent(_state(request).db, project, int(raw))
    return JSONResponse({"actions": [{
        "container_uuid": a.container_uuid, "container_name": name, "action": a.action,
        "request_id": a.request_id, "user_id": a.user_id, "project_id": a.project_id,
        "start_time": _time(a.start_time), "finish_time": _time(a.finish_time),
        "message": a.message} for a, name in rows]})
