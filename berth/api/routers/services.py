"""``/v1/services`` (admin): list the services, enable, disable or force one down,
delete one. zunclient sends ``host`` and ``binary`` (and ``disabled_reason`` /
``forced_down``) in the query string with an empty body."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from berth.api.openapi import query_params
from berth.api.operations import resources as ops
from berth.api.params import merged
from berth.api.routers.containers import Ctx, State, _threaded
from berth.api.schemas import queries as Q
from berth.api.state import ApiState
from berth.common.context import RequestContext

router = APIRouter(prefix="/v1/services")


@router.get("")
@router.get("/", include_in_schema=False)
def list_services(ctx: RequestContext = Ctx, state: ApiState = State) -> dict[str, Any]:
    return {"services": ops.list_services(state, ctx)}


@router.put("/enable")
@query_params(lambda settings: Q.SERVICE)
async def enable(request: Request, ctx: RequestContext = Ctx, state: ApiState = State
                 ) -> dict[str, Any]:
    params = await merged(request)
    Q.SERVICE.check(params)
    return {"service": await _threaded(ops.enable_service, state, ctx, params)}


@router.put("/disable")
@query_params(lambda settings: Q.SERVICE_DISABLE)
async def disable(request: Request, ctx: RequestContext = Ctx, state: ApiState = State
                  ) -> dict[str, Any]:
    params = await merged(request)
    Q.SERVICE_DISABLE.check(params)
    return {"service": await _threaded(ops.disable_service, state, ctx, params)}


@router.put("/force_down")
@query_params(lambda settings: Q.SERVICE_FORCE_DOWN)
async def force_down(request: Request, ctx: RequestContext = Ctx, state: ApiState = State
                     ) -> dict[str, Any]:
    params = await merged(request)
    Q.SERVICE_FORCE_DOWN.check(params)
    return {"service": await _threaded(ops.force_down_service, state, ctx, params)}


@router.delete("")
@router.delete("/", include_in_schema=False)
@query_params(lambda settings: Q.SERVICE)
async def delete(request: Request, ctx: RequestContext = Ctx, state: ApiState = State
                 ) -> None:
    params = await merged(request)
    Q.SERVICE.check(params)
    await _threaded(ops.delete_service, state, ctx, params)
