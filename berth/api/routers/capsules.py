"""``/v1/capsules`` (api-v1.md §8), and ``/capsules/``, the path python-zunclient
writes without ``/v1`` (zunclient-wire-trace.md): create, list, show, delete."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from berth.api.links import base_url
from berth.api.openapi import query_params, request_body
from berth.api.operations import capsules as ops
from berth.api.operations.resources import PAGE_PARAMS, listing_scope, next_url, page_params
from berth.api.params import read_json_body
from berth.api.responses import JSONResponse
from berth.api.routers.containers import Ctx, State, _threaded, version_of
from berth.api.schemas import queries as Q
from berth.api.schemas.capsule import create_schema
from berth.api.schemas.types import lenient_bool
from berth.api.state import ApiState
from berth.common.context import RequestContext
from berth.db import capsules, containers
from berth.policies import enforcer as policy

router = APIRouter(prefix="/v1/capsules")


@router.post("", status_code=202)
@router.post("/", status_code=202, include_in_schema=False)
@request_body(lambda settings: create_schema(settings.create_limits))
async def create(request: Request, ctx: RequestContext = Ctx, state: ApiState = State
                 ) -> JSONResponse:
    body = await read_json_body(request, required=True)
    row = await _threaded(ops.create, state, ctx, body)
    view = await _threaded(lambda: ops.view(state, row, ctx=ctx,
                                            version=version_of(request), request=request))
    return JSONResponse(view, status_code=202,
                        headers={"Location": f"{base_url(request)}/v1/capsules/{row.uuid}"})


@router.get("")
@router.get("/", include_in_schema=False)
@query_params(lambda settings: Q.CAPSULE_LIST)
async def list_capsules(request: Request, ctx: RequestContext = Ctx,
                        state: ApiState = State) -> JSONResponse:
    policy.authorize(ctx, "capsule:get_all")
    q = request.query_params
    Q.CAPSULE_LIST.check(q)
    all_projects = listing_scope(ctx, q, (), "capsule:get_all_all_projects")
    page = page_params(q, state.settings.max_limit, "id")

    def listed() -> list:  # type: ignore[type-arg]
        rows = containers.list_rows(
            state.db, project_id=None if all_projects else ctx.project_id,
            limit=page.limit, marker=page.marker, sort_key=page.sort_key,
            sort_dir=page.sort_dir, container_type=capsules.CAPSULE)
        return [rows, ops.list_views(state, rows, ctx=ctx,
                                     version=version_of(request), request=request)]

    rows, views = await _threaded(listed)
    carry = {k: q[k] for k in q if k not in PAGE_PARAMS}
    return JSONResponse({"capsules": views,
                         "next": next_url(request, "capsules", rows, page, carry)})


@router.get("/{ident}")
@query_params(lambda settings: Q.CAPSULE_ONE)
async def show(ident: str, request: Request, ctx: RequestContext = Ctx,
               state: ApiState = State) -> JSONResponse:
    Q.CAPSULE_ONE.check(request.query_params)
    value = request.query_params.get("all_projects")
    if value is not None and lenient_bool("all_projects", value):
        policy.authorize(ctx, "capsule:get_one_all_projects")
    row = await _threaded(ops.get, state, ctx, ident, "capsule:get")
    return JSONResponse(await _threaded(lambda: ops.view(
        state, row, ctx=ctx, version=version_of(request), request=request)))


@router.delete("/{ident}", status_code=204)
@query_params(lambda settings: Q.CAPSULE_ONE)
async def delete(ident: str, request: Request, ctx: RequestContext = Ctx,
                 state: ApiState = State) -> Response:
    Q.CAPSULE_ONE.check(request.query_params)
    value = request.query_params.get("all_projects")
    if value is not None and lenient_bool("all_projects", value):
        policy.authorize(ctx, "capsule:delete_all_projects")
    await _threaded(ops.delete, state, ctx, ident)
    return Response(status_code=204)
