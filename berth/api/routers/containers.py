"""``/v1/containers``: create, list, show, delete, and the actions start and stop."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Request, Response

from berth.api.auth import context_from_request, request_context
from berth.api.links import base_url
from berth.api.microversions import MIN_VERSION, APIVersion
from berth.api.openapi import query_params, request_body
from berth.api.operations import containers as compute_api
from berth.api.operations import stale_tasks
from berth.api.params import absent, merged, read_json_body
from berth.api.responses import JSONResponse
from berth.api.schemas import queries as Q
from berth.api.schemas.container import create_schema, parse_run_flag
from berth.api.schemas.types import extended_bool, lenient_bool
from berth.api.state import ApiState
from berth.api.views import (
    ADMIN_KEYS,
    LIST_COLUMNS,
    container_view,
    listed_view,
    shown_keys,
    shown_view,
)
from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.db import containers
from berth.db.models import Container
from berth.policies import enforcer as policy

router = APIRouter(prefix="/v1/containers")

LIST_FILTERS = Q.LIST_FILTERS


def _state(request: Request) -> ApiState:
    """The shared state, for the endpoints that take no dependencies (as
    ``request_context``); ``api_state`` is its dependency form."""
    state: ApiState = request.app.state.berth
    return state


async def api_state(request: Request) -> ApiState:   # async: no thread hop (see auth.py)
    return _state(request)


def version_of(request: Request) -> APIVersion:
    return getattr(request.state, "api_version", MIN_VERSION)


Ctx = Depends(context_from_request)
State = Depends(api_state)


@router.post("", status_code=202)
@router.post("/", status_code=202, include_in_schema=False)
@request_body(lambda settings: create_schema(settings.create_limits))
@query_params(lambda settings: Q.CONTAINER_CREATE)
async def create(request: Request, ctx: RequestContext = Ctx, state: ApiState = State
                 ) -> JSONResponse:
    Q.CONTAINER_CREATE.check(request.query_params)
    body = await read_json_body(request, required=True)
    run = parse_run_flag(request.query_params.get("run"))
    row = await _threaded(compute_api.create, state, ctx, body, version_of(request), run)
    view = container_view(row, shown=shown_keys(ctx), request=request)
    return JSONResponse(view, status_code=202,
                        headers={"Location": f"{base_url(request)}/v1/containers/{row.uuid}"})


@router.get("")
@router.get("/", include_in_schema=False)
@query_params(lambda settings: Q.CONTAINER_LIST)
def list_containers(request: Request) -> JSONResponse:
    ctx, state = request_context(request), _state(request)
    policy.authorize(ctx, "container:get_all")
    q = request.query_params
    Q.CONTAINER_LIST.check(q)
    all_projects = lenient_bool("all_projects", q["all_projects"]) \
        if "all_projects" in q else False
    if all_projects:
        policy.authorize(ctx, "container:get_all_all_projects")
    shown = shown_keys(ctx)
    for key in ADMIN_KEYS:  # filtering on a hidden field would reveal it
        if key in q and key not in shown:
            raise exc.PolicyNotAuthorized(action=f"container:get_one:{key}")
    limit = _limit(q.get("limit"), state.settings.max_limit)
    sort_dir = q.get("sort_dir", "asc")
    if sort_dir not in ("asc", "desc"):
        raise exc.InvalidParameterValue(err=f"Invalid sort_dir {sort_dir!r}: use asc or desc.")
    sort_key = q.get("sort_key", "id")
    filters: dict[str, Any] = {k: q[k] for k in LIST_FILTERS if k in q}
    if "auto_remove" in filters:
        filters["auto_remove"] = lenient_bool("auto_remove", filters["auto_remove"])
    project = None if all_projects else ctx.project_id
    rows = stale_tasks.expire_stale(state, containers.list_columns(
        state.db, LIST_COLUMNS, project_id=project, filters=filters, limit=limit,
        marker=q.get("marker"), sort_key=sort_key, sort_dir=sort_dir))
    # A stale task failed on the way comes back as the updated container.
    items = [container_view(r, shown=shown) if isinstance(r, Container)
             else listed_view(r, shown=shown) for r in rows]
    next_url = None
    if rows and len(rows) == limit:
        carry = {k: q[k] for k in q if k not in ("limit", "marker", "sort_key", "sort_dir")}
        carry.update(sort_key=sort_key, sort_dir=sort_dir, limit=str(limit),
                     marker=rows[-1].uuid)
        next_url = f"{base_url(request)}/v1/containers?{urlencode(carry)}"
    # A JSONResponse skips FastAPI's generic encoder, which costs more than the query
    # for a page of 1,000 containers; the views are plain JSON values already.
    return JSONResponse({"containers": items, "next": next_url})


def _limit(value: str | None, max_limit: int) -> int:
    if value is None:
        return max_limit
    if not value.lstrip("-").isdigit() or int(value) <= 0:
        raise exc.InvalidParameterValue(
            err=f"Invalid limit {value!r}: it must be a positive integer.")
    return min(int(value), max_limit)


def _all_projects_flag(ctx: RequestContext, value: str | None) -> None:
    if value is not None and lenient_bool("all_projects", value):
        policy.authorize(ctx, "container:get_one_all_projects")


@router.get("/{ident}")
@query_params(lambda settings: Q.CONTAINER_SHOW)
async def show(ident: str, request: Request) -> JSONResponse:
    ctx, state = request_context(request), _state(request)
    Q.CONTAINER_SHOW.check(request.query_params)
    _all_projects_flag(ctx, request.query_params.get("all_projects"))
    stored = compute_api.show_on_loop(state, ctx, ident)
    if stored is not None:
        policy.authorize(ctx, "container:get_one", stored)
        return JSONResponse(shown_view(stored, shown=shown_keys(ctx), request=request))
    row = await _threaded(compute_api.show, state, ctx, ident)
    return JSONResponse(container_view(row, shown=shown_keys(ctx), request=request))


@router.delete("/{ident}", status_code=204)
@query_params(lambda settings: Q.CONTAINER_DELETE)
async def delete(ident: str, request: Request, ctx: RequestContext = Ctx,
                 state: ApiState = State) -> Response:
    params = await merged(request)
    Q.CONTAINER_DELETE.check(params)
    version = version_of(request)
    force = _flag(params, "force")
    stop = _flag(params, "stop")
    if force and not version.at_least("1.7") and "force" in params:
        raise exc.InvalidParamInVersion(param="force", req_version=str(version),
                                        min_version="1.7")
    if stop and not version.at_least("1.12"):
        raise exc.InvalidParamInVersion(param="stop", req_version=str(version),
                                        min_version="1.12")
    if _flag(params, "all_projects"):
        policy.authorize(ctx, "container:delete_all_projects")
    await _threaded(compute_api.delete, state, ctx, ident, force, stop)
    return Response(status_code=204)


def _flag(params: dict[str, Any], name: str) -> bool:
    value = params.get(name)
    return False if absent(value) else extended_bool(name, value)


@router.post("/{ident}/start", status_code=202)
def start(ident: str, ctx: RequestContext = Ctx, state: ApiState = State) -> None:
    compute_api.start(state, ctx, ident)


@router.post("/{ident}/stop", status_code=202)
@query_params(lambda settings: Q.STOP)
async def stop(ident: str, request: Request, ctx: RequestContext = Ctx,
               state: ApiState = State) -> None:
    timeout = Q.STOP.check(await merged(request)).get("timeout")
    await _threaded(compute_api.stop, state, ctx, ident,
                    None if timeout is None else int(timeout))


async def _threaded(fn, *args):  # type: ignore[no-untyped-def]
    """Run blocking work (database, RPC) off the event loop."""
    from starlette.concurrency import run_in_threadpool

    return await run_in_threadpool(fn, *args)
