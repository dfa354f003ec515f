"""``/v1/hosts`` (≥1.4, admin): the compute nodes and what they have."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from berth.api.openapi import query_params
from berth.api.operations import resources as ops
from berth.api.routers.containers import Ctx, State, version_of
from berth.api.schemas import queries as Q
from berth.api.state import ApiState
from berth.common.context import RequestContext

router = APIRouter(prefix="/v1/hosts")


@router.get("")
@router.get("/", include_in_schema=False)
@query_params(lambda settings: Q.HOST_LIST)
def list_hosts(request: Request, ctx: RequestContext = Ctx, state: ApiState = State
               ) -> dict[str, Any]:
    ops.require_version(version_of(request), "1.4", "GET /v1/hosts")
    Q.HOST_LIST.check(request.query_params)
    page = ops.page_params(request.query_params, state.settings.max_limit, "hostname")
    rows = ops.list_hosts(state, ctx, limit=page.limit, marker=page.marker,
                          sort_key=page.sort_key, sort_dir=page.sort_dir)
    return {"hosts": ops.host_views(state, rows, request),
            "next": ops.next_url(request, "hosts", rows, page)}


@router.get("/{ident}")
def show_host(ident: str, request: Request, ctx: RequestContext = Ctx,
              state: ApiState = State) -> dict[str, Any]:
    ops.require_version(version_of(request), "1.4", "GET /v1/hosts/{host}")
    return ops.host_views(state, [ops.get_host(state, ctx, ident)], request)[0]
