"""logs, top, stats, get_archive/put_archive, commit.

zunclient sends every argument in the query string except put_archive's ``data``
(JSON body); both are merged as Zun binds them (``params.merged``). From API 1.25 the
archive data is base64 in both directions.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from berth.api.openapi import query_params
from berth.api.operations import inspection as inspection_api
from berth.api.params import merged
from berth.api.responses import JSONResponse
from berth.api.routers.containers import Ctx, State, _threaded, version_of
from berth.api.schemas import queries as Q
from berth.api.state import ApiState
from berth.common.context import RequestContext

router = APIRouter(prefix="/v1/containers")

#: First API version whose archives are base64-encoded.
BASE64_ARCHIVES = "1.25"


@router.get("/{ident}/logs")
@query_params(lambda settings: Q.LOGS)
async def logs(ident: str, request: Request, ctx: RequestContext = Ctx,
               state: ApiState = State) -> str:
    params = await merged(request)
    Q.LOGS.check(params)
    text: str = await _threaded(inspection_api.logs, state, ctx, ident, params)
    return text


@router.get("/{ident}/top")
@query_params(lambda settings: Q.TOP)
async def top(ident: str, request: Request, ctx: RequestContext = Ctx,
              state: ApiState = State) -> dict[str, Any]:
    params = await merged(request)
    Q.TOP.check(params)
    answer: dict[str, Any] = await _threaded(inspection_api.top, state, ctx, ident, params)
    return answer


@router.get("/{ident}/stats")
def stats(ident: str, ctx: RequestContext = Ctx, state: ApiState = State) -> dict[str, Any]:
    return inspection_api.stats(state, ctx, ident)


@router.get("/{ident}/get_archive")
@query_params(lambda settings: Q.GET_ARCHIVE)
async def get_archive(ident: str, request: Request, ctx: RequestContext = Ctx,
                      state: ApiState = State) -> dict[str, Any]:
    params = await merged(request)
    Q.GET_ARCHIVE.check(params)
    encode = version_of(request).at_least(BASE64_ARCHIVES)
    answer: dict[str, Any] = await _threaded(inspection_api.get_archive, state, ctx, ident,
                                             params, encode)
    return answer


@router.post("/{ident}/put_archive")
@query_params(lambda settings: Q.PUT_ARCHIVE)
async def put_archive(ident: str, request: Request, ctx: RequestContext = Ctx,
                      state: ApiState = State) -> None:
    params = await merged(request, binary=("data",))   # a tar as text before 1.25
    Q.PUT_ARCHIVE.check(params)
    decode = version_of(request).at_least(BASE64_ARCHIVES)
    await _threaded(inspection_api.put_archive, state, ctx, ident, params, decode)


@router.post("/{ident}/commit", status_code=202)
@query_params(lambda settings: Q.COMMIT)
async def commit(ident: str, request: Request, ctx: RequestContext = Ctx,
                 state: ApiState = State) -> JSONResponse:
    params = await merged(request)
    # Docker's reference grammar words a bad name best (whitespace, upper case, ...):
    # its parser speaks first, then the declaration checks what it let through.
    inspection_api.parse_commit_target(params.get("repository"), params.get("tag"))
    Q.COMMIT.check(params)
    answer = await _threaded(inspection_api.commit, state, ctx, ident, params)
    return JSONResponse(answer, status_code=202)
