"""execute, execute_resize, attach, resize (console and exec).

Parameters arrive in the query string (what zunclient sends) or a JSON body, merged
as Zun binds them (``params.merged``).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from berth.api.operations import console as console_api
from berth.api.params import merged
from berth.api.routers.containers import Ctx, State, _threaded
from berth.api.state import ApiState
from berth.common.context import RequestContext

router = APIRouter(prefix="/v1/containers")


@router.post("/{ident}/execute")
async def execute(ident: str, request: Request, ctx: RequestContext = Ctx,
                  state: ApiState = State) -> dict[str, Any]:
    params = await merged(request)
    return await _threaded(console_api.execute, state, ctx, ident, params)


@router.post("/{ident}/execute_resize")
async def execute_resize(ident: str, request: Request, ctx: RequestContext = Ctx,
                         state: ApiState = State) -> None:
    params = await merged(request)
    await _threaded(console_api.execute_resize, state, ctx, ident, params)


@router.get("/{ident}/attach")
def attach(ident: str, ctx: RequestContext = Ctx, state: ApiState = State) -> str:
    return console_api.attach(state, ctx, ident)


@router.post("/{ident}/resize")
async def resize(ident: str, request: Request, ctx: RequestContext = Ctx,
                 state: ApiState = State) -> None:
    params = await merged(request)
    await _threaded(console_api.resize, state, ctx, ident, params)
