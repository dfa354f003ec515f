"""``/v1/quotas/{project_id}`` and ``/v1/quota_classes/{name}`` (api-v1.md §12)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from berth.api.openapi import request_body
from berth.api.operations import quotas as ops
from berth.api.params import read_json_body
from berth.api.routers.containers import Ctx, State, _threaded
from berth.api.schemas.resources import QUOTA
from berth.api.schemas.types import extended_bool, is_none_string
from berth.api.state import ApiState
from berth.common.context import RequestContext

router = APIRouter()


@router.get("/v1/quotas/{project_id}")
def get_quota(project_id: str, request: Request, ctx: RequestContext = Ctx,
              state: ApiState = State) -> dict[str, Any]:
    # Zun took any non-empty value as true, even "False"; here it is a real boolean.
    value = request.query_params.get("usages")
    usages = False if is_none_string(value) or value == "" else extended_bool("usages", value)
    return ops.get_quota(state, ctx, project_id, usages)


@router.get("/v1/quotas/{project_id}/defaults")
def get_defaults(project_id: str, ctx: RequestContext = Ctx, state: ApiState = State
                 ) -> dict[str, int]:
    return ops.get_defaults(state, ctx, project_id)


@router.put("/v1/quotas/{project_id}")
@request_body(lambda settings: QUOTA)
async def update_quota(project_id: str, request: Request, ctx: RequestContext = Ctx,
                       state: ApiState = State) -> dict[str, int]:
    body = await read_json_body(request, required=True)
    return await _threaded(ops.update_quota, state, ctx, project_id, body)


@router.delete("/v1/quotas/{project_id}")
def delete_quota(project_id: str, ctx: RequestContext = Ctx, state: ApiState = State) -> None:
    ops.delete_quota(state, ctx, project_id)


@router.get("/v1/quota_classes/{name}")
def get_class(name: str, ctx: RequestContext = Ctx, state: ApiState = State
              ) -> dict[str, int]:
    return ops.get_class(state, ctx, name)


@router.put("/v1/quota_classes/{name}")
@request_body(lambda settings: QUOTA)
async def update_class(name: str, request: Request, ctx: RequestContext = Ctx,
                       state: ApiState = State) -> dict[str, int]:
    body = await read_json_body(request, required=True)
    return await _threaded(ops.update_class, state, ctx, name, body)
