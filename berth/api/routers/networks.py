"""``/v1/networks`` (api-v1.md §15, admin) and a container's network actions
(§7.7): ``network_attach`` (≥1.8), ``network_detach`` (≥1.6), ``network_list``
(≥1.13; its shape changes at 1.18). zunclient sends the actions' arguments in the
query string; a JSON body's top-level keys are read too."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response

from berth.api.openapi import query_params, request_body
from berth.api.operations import containers as containers_ops
from berth.api.operations import networks as ops
from berth.api.params import merged, read_json_body
from berth.api.responses import JSONResponse
from berth.api.routers.container_actions import require_version
from berth.api.routers.containers import Ctx, State, _threaded, version_of
from berth.api.schemas import networks as schemas
from berth.api.schemas import queries as Q
from berth.api.state import ApiState
from berth.common.context import RequestContext

router = APIRouter()


@router.post("/v1/networks", status_code=200)
@router.post("/v1/networks/", status_code=200, include_in_schema=False)
@request_body(lambda settings: schemas.NETWORK_CREATE)
async def create(request: Request, ctx: RequestContext = Ctx, state: ApiState = State
                 ) -> JSONResponse:
    body = await read_json_body(request, required=True)
    row = await _threaded(ops.create_network, state, ctx, body)
    return JSONResponse(ops.view(row), status_code=200)


@router.delete("/v1/networks/{ident}", status_code=204)
def delete(ident: str, request: Request, ctx: RequestContext = Ctx, state: ApiState = State
           ) -> Response:
    require_version(version_of(request), "DELETE /v1/networks/{id}", "1.27", None)
    ops.delete_network(state, ctx, ident)
    return Response(status_code=204)


@router.post("/v1/containers/{ident}/network_attach")
@query_params(lambda settings: Q.NETWORK_ATTACH)
async def network_attach(ident: str, request: Request, ctx: RequestContext = Ctx,
                         state: ApiState = State) -> JSONResponse:
    require_version(version_of(request), "POST /v1/containers/{id}/network_attach", "1.8",
                    None)
    params = await merged(request)
    row = await _threaded(containers_ops.get, state, ctx, ident, "container:network_attach")
    await _threaded(ops.attach, state, ctx, row, params)
    return JSONResponse(None, status_code=200)


@router.post("/v1/containers/{ident}/network_detach", status_code=202)
@query_params(lambda settings: Q.NETWORK_DETACH)
async def network_detach(ident: str, request: Request, ctx: RequestContext = Ctx,
                         state: ApiState = State) -> Response:
    require_version(version_of(request), "POST /v1/containers/{id}/network_detach", "1.6",
                    None)
    params = await merged(request)
    row = await _threaded(containers_ops.get, state, ctx, ident, "container:network_detach")
    await _threaded(ops.detach, state, ctx, row, params)
    return Response(status_code=202)


@router.get("/v1/containers/{ident}/network_list")
def network_list(ident: str, request: Request, ctx: RequestContext = Ctx,
                 state: ApiState = State) -> dict[str, Any]:
    version = version_of(request)
    require_version(version, "GET /v1/containers/{id}/network_list", "1.13", None)
    # Zun checks no rule of its own here: the container's show rule guards it.
    return ops.network_list(containers_ops.get(state, ctx, ident, "container:get_one"),
                            version)
