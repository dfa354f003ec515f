"""execute, execute_resize, attach, resize (console and exec).

Parameters arrive in the query string (what zunclient sends) or a JSON body, merged
as Zun binds them (``params.merged``).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from berth.api.openapi import query_params
from berth.api.operations import console as console_api
from berth.api.params import merged
from berth.api.routers.containers import Ctx, State, _threaded
from berth.api.schemas import queries as Q
from berth.api.state import ApiState
from berth.common.context import RequestContext

router = APIRouter(prefix="/v1/containers")


@router.post("/{ident}/execute")
@query_params(lambda settings: Q.EXECUTE)
async def execute(ident: str, request: Request, ctx: RequestContext = Ctx,
                  state: ApiState = State) -> dict[str, Any]:
    params = await merged(request)
    Q.EXECUTE.check(params)
    return await _threaded(console_api.execute, state, ctx, ident, params)


@router.post("/{ident}/execute_resize")
@query_params(lambda settings: Q.EXECUTE_RESIZE)
async def execute_resize(ident: str, request: Request, ctx: RequestContext = Ctx,
                         state: ApiState = State) -> None:
    params = await merged(request)
    Q.EXECUTE_RESIZE.check(params)
    await _threaded(console_api.execute_resize, state, ctx, ident, params)


@router.get("/{ident}/attach")
def attach(ident: str, ctx: RequestContext = Ctx, state: ApiState = State) -> str:
    return console_api.attach(state, ctx, ident)


@router.post("/{ident}/resize")
@query_params(lambda settings: Q.RESIZE)
async def resize(ident: str, request: Request, ctx: RequestContext = Ctx,
                 state: ApiState = State) -> None:
    params = await merged(request)
    Q.RESIZE.check(params)
    await _threaded(console_api.resize, state, ctx, ident, params)
