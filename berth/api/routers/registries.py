"""``/v1/registries`` (api-v1.md §13): bodies are wrapped as ``{"registry": {...}}``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response

from berth.api.links import base_url
from berth.api.openapi import query_params, request_body
from berth.api.operations import registries as ops
from berth.api.operations.resources import PAGE_PARAMS, listing_scope, next_url, page_params
from berth.api.params import read_json_body
from berth.api.responses import JSONResponse
from berth.api.routers.containers import Ctx, State, _threaded
from berth.api.schemas import queries as Q
from berth.api.schemas import resources as schemas
from berth.api.state import ApiState
from berth.common.context import RequestContext
from berth.db import registries as db_registries
from berth.policies import enforcer as policy

router = APIRouter(prefix="/v1/registries")


@router.post("", status_code=201)
@router.post("/", status_code=201, include_in_schema=False)
@request_body(lambda settings: schemas.REGISTRY_CREATE_BODY)
async def create(request: Request, ctx: RequestContext = Ctx, state: ApiState = State
                 ) -> JSONResponse:
    body = await read_json_body(request, required=True)
    row = await _threaded(ops.create, state, ctx, body)
    return JSONResponse({"registry": ops.view(row, request)}, status_code=201,
                        headers={"Location": f"{base_url(request)}/v1/registries/{row.uuid}"})


@router.get("")
@router.get("/", include_in_schema=False)
@query_params(lambda settings: Q.REGISTRY_LIST)
def list_registries(request: Request, ctx: RequestContext = Ctx, state: ApiState = State
                    ) -> dict[str, Any]:
    policy.authorize(ctx, "registry:get_all")
    q = request.query_params
    Q.REGISTRY_LIST.check(q)
    all_projects = listing_scope(ctx, q, db_registries.FILTERS,
                                 "registry:get_all_all_projects")
    page = page_params(q, state.settings.max_limit, "id")
    filters = {k: q[k] for k in db_registries.FILTERS if k in q}
    rows = db_registries.list_(state.db, project_id=None if all_projects else ctx.project_id,
                               filters=filters, limit=page.limit, marker=page.marker,
                               sort_key=page.sort_key, sort_dir=page.sort_dir)
    carry = {k: q[k] for k in q if k not in PAGE_PARAMS}
    return {"registries": [ops.view(r) for r in rows],
            "next": next_url(request, "registries", rows, page, carry)}


@router.get("/{ident}")
def show(ident: str, request: Request, ctx: RequestContext = Ctx, state: ApiState = State
         ) -> dict[str, Any]:
    return {"registry": ops.view(ops.get(state, ctx, ident, "registry:get_one"), request)}


@router.patch("/{ident}")
@request_body(lambda settings: schemas.REGISTRY_UPDATE_BODY)
async def update(ident: str, request: Request, ctx: RequestContext = Ctx,
                 state: ApiState = State) -> dict[str, Any]:
    body = await read_json_body(request, required=True)
    row = await _threaded(ops.update, state, ctx, ident, body)
    return {"registry": ops.view(row, request)}


@router.delete("/{ident}", status_code=204)
def delete(ident: str, ctx: RequestContext = Ctx, state: ApiState = State) -> Response:
    ops.delete(state, ctx, ident)
    return Response(status_code=204)
