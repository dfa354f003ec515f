"""``/v1/containers/{ident}``: reboot, pause, unpause, kill, rebuild, PATCH update,
rename, resize_container and the security-group actions.

zunclient sends action arguments in the query string (``?signal=None``); they may
also come as top-level keys of a JSON body (api-v1.md §1.1). The parsers below turn
them into typed values or a 400 that names the field and what it accepts.
"""

from __future__ import annotations

import re
from typing import Any

from fastapi import APIRouter, Request

from berth.api.microversions import APIVersion, Availability
from berth.api.openapi import available, query_params, request_body
from berth.api.operations import actions as ops
from berth.api.params import absent, merged, read_json_body
from berth.api.responses import JSONResponse
from berth.api.routers.containers import Ctx, State, _threaded, version_of
from berth.api.schemas import queries as Q
from berth.api.schemas import types as T
from berth.api.schemas.container import CreateLimits, update_schema, validate_update
from berth.api.state import ApiState
from berth.api.views import container_view, shown_keys
from berth.common import exceptions as exc
from berth.common.context import RequestContext

router = APIRouter(prefix="/v1/containers")

MAX_TIMEOUT = Q.MAX_TIMEOUT
SIGNALS = Q.SIGNALS
MAX_SIGNAL = Q.MAX_SIGNAL
_SIGNAL_HELP = ("Give a signal name such as SIGTERM, TERM or sigterm, or a number from 1 "
                f"to {MAX_SIGNAL}; leave it out (or None) for Docker's default, SIGKILL.")
_NUMBER = re.compile(r"[0-9]{1,3}")


# -- parameter parsers (pure) ---------------------------------------------------------

def parse_signal(value: object) -> str | None:
    """``signal`` of kill: None/"None" -> None (Docker's default); a number 1-64 ->
    its decimal text; a name in any case, with or without "SIG" -> ``SIG<NAME>``."""
    if absent(value):
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        if 1 <= value <= MAX_SIGNAL:
            return str(value)
        raise T.invalid("signal", value, _SIGNAL_HELP)
    if not isinstance(value, str):
        raise T.invalid("signal", value, _SIGNAL_HELP)
    text = value.strip()
    if _NUMBER.fullmatch(text):
        if 1 <= int(text) <= MAX_SIGNAL:
            return str(int(text))
        raise T.invalid("signal", value, _SIGNAL_HELP)
    name = text.upper().removeprefix("SIG")
    if name in SIGNALS:
        return f"SIG{name}"
    raise T.invalid("signal", value, f"It is not a signal Linux knows. {_SIGNAL_HELP}")


def parse_timeout(value: object) -> int | None:
    """``timeout`` of reboot: seconds, 0 to MAX_TIMEOUT; None/"None" -> Docker's default."""
    if absent(value):
        return None
    return T.integer("timeout", value, 0, MAX_TIMEOUT,
                     what="a whole number of seconds to wait for the stop")


def parse_run(value: object) -> bool | None:
    """``run`` of rebuild: an extended boolean; absent -> None (start iff it was running)."""
    return None if absent(value) else T.extended_bool("run", value)


def parse_image_driver(value: object, limits: CreateLimits) -> str | None:
    """``image_driver`` of rebuild: one of the configured drivers; absent -> None (keep)."""
    return None if absent(value) else T.enum("image_driver", value, limits.image_driver_list)


def parse_resize(params: dict[str, Any], limits: CreateLimits) -> dict[str, object]:
    """``cpu`` and/or ``memory`` of resize_container, validated as in an update."""
    Q.resize_container(limits).check(params)
    return validate_update(params, limits)


def require_version(version: APIVersion, what: str, low: str, high: str | None,
                    instead: str = "") -> None:
    """406 unless ``low`` <= ``version`` <= ``high`` (None: no upper bound)."""
    Availability(what, low, high, instead).require(version)


RENAME = Availability("POST /v1/containers/{id}/rename", "1.1", "1.13",
                      "Rename with PATCH /v1/containers/{id} and {\"name\": \"<new name>\"} "
                      "(openstack appcontainer set --name).")
RESIZE_CONTAINER = Availability("POST /v1/containers/{id}/resize_container", "1.19", None,
                                "Ask for container 1.19 or later, or use PATCH.")
_GROUPS = "Manage security groups with Neutron's port commands instead."
ADD_SECURITY_GROUP = Availability("POST /v1/containers/{id}/add_security_group", "1.1",
                                  "1.14", _GROUPS)
REMOVE_SECURITY_GROUP = Availability("POST /v1/containers/{id}/remove_security_group",
                                     "1.1", "1.14", _GROUPS)


# -- routes ---------------------------------------------------------------------------

@router.post("/{ident}/reboot", status_code=202)
@query_params(lambda settings: Q.REBOOT)
async def reboot(ident: str, request: Request, ctx: RequestContext = Ctx,
                 state: ApiState = State) -> None:
    params = Q.REBOOT.check(await merged(request))
    await _threaded(ops.reboot, state, ctx, ident, parse_timeout(params.get("timeout")))


@router.post("/{ident}/pause", status_code=202)
def pause(ident: str, ctx: RequestContext = Ctx, state: ApiState = State) -> None:
    ops.pause(state, ctx, ident)


@router.post("/{ident}/unpause", status_code=202)
def unpause(ident: str, ctx: RequestContext = Ctx, state: ApiState = State) -> None:
    ops.unpause(state, ctx, ident)


@router.post("/{ident}/kill", status_code=202)
@query_params(lambda settings: Q.KILL)
async def kill(ident: str, request: Request, ctx: RequestContext = Ctx,
               state: ApiState = State) -> None:
    params = Q.KILL.check(await merged(request))
    await _threaded(ops.kill, state, ctx, ident, parse_signal(params.get("signal")))


@router.post("/{ident}/rebuild", status_code=202)
@query_params(lambda settings: Q.rebuild(settings.create_limits))
async def rebuild(ident: str, request: Request, ctx: RequestContext = Ctx,
                  state: ApiState = State) -> None:
    limits = state.settings.create_limits
    params = Q.rebuild(limits).check(await merged(request))
    image = params.get("image")
    image = None if absent(image) else T.image_name("image", image)
    await _threaded(ops.rebuild, state, ctx, ident, image,
                    parse_image_driver(params.get("image_driver"), limits),
                    parse_run(params.get("run")))


@router.patch("/{ident}")
@request_body(lambda settings: update_schema(settings.create_limits))
async def update(ident: str, request: Request, ctx: RequestContext = Ctx,
                 state: ApiState = State) -> dict[str, Any]:
    changes = validate_update(await read_json_body(request), state.settings.create_limits)
    row = await _threaded(ops.update, state, ctx, ident, changes)
    return container_view(row, shown=shown_keys(ctx), request=request)


@router.post("/{ident}/resize_container", status_code=202)
@query_params(lambda settings: Q.resize_container(settings.create_limits))
@available(RESIZE_CONTAINER)
async def resize_container(ident: str, request: Request, ctx: RequestContext = Ctx,
                           state: ApiState = State) -> JSONResponse:
    RESIZE_CONTAINER.require(version_of(request))
    changes = parse_resize(await merged(request), state.settings.create_limits)
    row = await _threaded(ops.resize, state, ctx, ident, changes)
    return JSONResponse(container_view(row, shown=shown_keys(ctx), request=request),
                        status_code=202)


@router.post("/{ident}/rename")
@query_params(lambda settings: Q.RENAME)
@available(RENAME)
async def rename(ident: str, request: Request, ctx: RequestContext = Ctx,
                 state: ApiState = State) -> dict[str, Any]:
    RENAME.require(version_of(request))
    params = await merged(request)
    if not absent(params.get("name")):
        Q.RENAME.check(params)
    if absent(params.get("name")):
        raise exc.InvalidParameterValue(err="'name' is required: the container's new name.")
    name = T.container_name("name", params["name"])
    row = await _threaded(ops.rename, state, ctx, ident, name)
    return container_view(row, shown=shown_keys(ctx), request=request)


async def _security_group_name(request: Request, versions: Availability) -> str:
    versions.require(version_of(request))
    params = await merged(request)
    if absent(params.get("name")):
        raise exc.InvalidParameterValue(err="'name' is required: the security group's name "
                                            "or id.")
    Q.SECURITY_GROUP.check(params)
    return T.string("name", params["name"], 1, 255, what="a security group name or id")


@router.post("/{ident}/add_security_group", status_code=202)
@query_params(lambda settings: Q.SECURITY_GROUP)
@available(ADD_SECURITY_GROUP)
async def add_security_group(ident: str, request: Request, ctx: RequestContext = Ctx,
                             state: ApiState = State) -> None:
    name = await _security_group_name(request, ADD_SECURITY_GROUP)
    await _threaded(ops.add_security_group, state, ctx, ident, name)


@router.post("/{ident}/remove_security_group", status_code=202)
@query_params(lambda settings: Q.SECURITY_GROUP)
@available(REMOVE_SECURITY_GROUP)
async def remove_security_group(ident: str, request: Request, ctx: RequestContext = Ctx,
                                state: ApiState = State) -> None:
    name = await _security_group_name(request, REMOVE_SECURITY_GROUP)
    await _threaded(ops.remove_security_group, state, ctx, ident, name)
