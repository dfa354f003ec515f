"""``/v1/images`` (api-v1.md §9): pull to a node, list, show, delete, search.

The search route takes the whole path between ``/images/`` and ``/search`` as the
image name, so ``/v1/images/127.0.0.1:5000/team/app:1.0/search`` searches for
``127.0.0.1:5000/team/app:1.0`` (Zun cut it at the first ``/``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from berth.api.openapi import query_params, request_body
from berth.api.operations import images as ops
from berth.api.operations.resources import next_url, page_params
from berth.api.params import read_json_body
from berth.api.responses import JSONResponse
from berth.api.routers.containers import Ctx, State, _threaded
from berth.api.schemas import queries as Q
from berth.api.schemas.resources import IMAGE_PULL, IMAGE_REFERENCE
from berth.api.state import ApiState
from berth.common.context import RequestContext

router = APIRouter(prefix="/v1/images")


@router.post("", status_code=202)
@router.post("/", status_code=202, include_in_schema=False)
@request_body(lambda settings: IMAGE_PULL)
async def pull(request: Request, ctx: RequestContext = Ctx, state: ApiState = State
               ) -> JSONResponse:
    body = await read_json_body(request, required=True)
    row = await _threaded(ops.pull, state, ctx, body)
    return JSONResponse(ops.view(row, request), status_code=202)


@router.get("")
@router.get("/", include_in_schema=False)
@query_params(lambda settings: Q.IMAGE_LIST)
def list_images(request: Request, ctx: RequestContext = Ctx, state: ApiState = State
                ) -> dict[str, Any]:
    Q.IMAGE_LIST.check(request.query_params)
    page = page_params(request.query_params, state.settings.max_limit, "id")
    rows = ops.list_(state, ctx, limit=page.limit, marker=page.marker,
                     sort_key=page.sort_key, sort_dir=page.sort_dir)
    return {"images": [ops.view(r, request) for r in rows],
            "next": next_url(request, "images", rows, page)}


@router.get("/{image:path}/search", openapi_extra={"parameters": [
    {"name": "image", "in": "path", "required": True, "schema": IMAGE_REFERENCE}]})
@query_params(lambda settings: Q.image_search(settings.create_limits))
def search(image: str, request: Request, ctx: RequestContext = Ctx, state: ApiState = State
           ) -> list[dict[str, Any]]:
    q = request.query_params
    Q.image_search(state.settings.create_limits).check(q)
    return ops.search(state, ctx, image, q.get("image_driver"), q.get("exact_match"))


@router.get("/{uuid}")
def show(uuid: str, request: Request, ctx: RequestContext = Ctx, state: ApiState = State
         ) -> dict[str, Any]:
    return ops.view(ops.get(state, ctx, uuid), request)


@router.delete("/{uuid}")
def delete(uuid: str, ctx: RequestContext = Ctx, state: ApiState = State) -> None:
    ops.delete(state, ctx, uuid)
