"""``/v1/containers/{ident}/container_actions``: what was asked of a container and
what its agent did (api-v1.md §7.9)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from berth.api.operations import resources as ops
from berth.api.routers.containers import Ctx, State
from berth.api.state import ApiState
from berth.common.context import RequestContext

router = APIRouter(prefix="/v1/containers/{ident}/container_actions")


@router.get("")
@router.get("/", include_in_schema=False)
def list_actions(ident: str, ctx: RequestContext = Ctx, state: ApiState = State
                 ) -> dict[str, Any]:
    return {"containerActions": ops.list_actions(state, ctx, ident)}


@router.get("/{request_id}")
def show_action(ident: str, request_id: str, ctx: RequestContext = Ctx,
                state: ApiState = State) -> dict[str, Any]:
    return ops.show_action(state, ctx, ident, request_id)
