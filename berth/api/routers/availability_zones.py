"""``/v1/availability_zones``: the zones of the services. Paging parameters are
accepted and ignored (the list is short); ``next`` is always null."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from berth.api.operations import resources as ops
from berth.api.routers.containers import Ctx, State
from berth.api.state import ApiState
from berth.common.context import RequestContext
from berth.policies import enforcer as policy

router = APIRouter(prefix="/v1/availability_zones")


@router.get("")
@router.get("/", include_in_schema=False)
def list_zones(ctx: RequestContext = Ctx, state: ApiState = State) -> dict[str, Any]:
    policy.authorize(ctx, "availability_zones:get_all")
    return {"availability_zones": ops.availability_zones(state), "next": None}
