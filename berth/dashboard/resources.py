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
from berth.api.openapi import query_params
from berth.api.responses import JSONResponse
from berth.api.schemas import fields as F
from berth.api.schemas.queries import QueryParams, lenient_bool
from berth.api.schemas.types import lenient_bool as truth
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


#: The lists' query: whose rows (the container list's rule for every project).
LIST = QueryParams("console list", {"all_projects": lenient_bool()}, closed=True,
                   unknown_hint="The console's lists take all_projects.")
ACTIONS = QueryParams("console actions", {
    "all_projects": lenient_bool(),
    "limit": F.integer_like(1, MAX_ACTIONS, what="a number of actions")}, closed=True,
    unknown_hint="The actions list takes all_projects and limit.")


def _state(request: Request) -> ApiState:
    state: ApiState = request.app.state.berth
    return state


def _scope(request: Request, query: QueryParams = LIST
           ) -> tuple[RequestContext, str | None, dict[str, Any]]:
    """The caller's context, the project whose rows they read (None: every one) and
    the checked query."""
    ctx = request_context(request)
    params = query.check(dict(request.query_params))
    policy.authorize(ctx, "container:get_all")
    value = params.get("all_projects")
    if value is not None and truth("all_projects", value):
        policy.authorize(ctx, "container:get_all_all_projects")
        return ctx, None, params
    return ctx, ctx.project_id, params


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
@query_params(lambda settings: LIST)
def list_networks(request: Request) -> JSONResponse:
    _ctx, project, _params = _scope(request)
    rows = networks.visible(_state(request).db, project)
    return JSONResponse({"networks": [{
        "uuid": n.uuid, "name": n.name, "project_id": n.project_id,
        "subnet": n.subnet, "subnet_v6": n.subnet_v6, "gateway": n.gateway,
        "shared": n.shared, "default": n.default_of is not None,
        "neutron_net_id": n.neutron_net_id, "host": n.host,
        "created_at": _time(n.created_at)} for n in rows]})


@router.get("/volumes")
@query_params(lambda settings: LIST)
def list_volumes(request: Request) -> JSONResponse:
    _ctx, project, _params = _scope(request)
    rows = volumes.listed(_state(request).db, project)
    return JSONResponse({"volumes": [{
        "uuid": v.uuid, "name": v.name, "project_id": v.project_id,
        "provider": v.volume_provider, "cinder_volume_id": v.cinder_volume_id,
        "size": v.size, "host": v.host, "auto_remove": v.auto_remove,
        "created_at": _time(v.created_at),
        "mounts": [{"container_uuid": uuid, "container_name": name, "path": path}
                   for uuid, path, name in mounts]} for v, mounts in rows]})


@router.get("/actions")
@query_params(lambda settings: ACTIONS)
def list_actions(request: Request) -> JSONResponse:
    _ctx, project, params = _scope(request, ACTIONS)
    rows = actions.recent(_state(request).db, project, int(params.get("limit", 200)))
    return JSONResponse({"actions": [{
        "container_uuid": a.container_uuid, "container_name": name, "action": a.action,
        "request_id": a.request_id, "user_id": a.user_id, "project_id": a.project_id,
        "start_time": _time(a.start_time), "finish_time": _time(a.finish_time),
        "message": a.message} for a, name in rows]})
