"""The console's own endpoints, beside its static files (berth.dashboard.app):

* ``GET /dashboard/api/config`` (public): how to log in (``noauth`` or ``keystone``);
* ``POST /dashboard/api/login`` (public, Keystone only): a token for a password;
* ``GET /dashboard/api/events`` (a token): the live list (berth.dashboard.stream).

Everything else the console does goes through the Zun API itself (``/v1/...``), with
the same token, so its refusals and validation errors are the API's own.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import anyio.to_thread
from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse

from berth.api.auth import request_context
from berth.api.params import read_json_body
from berth.api.responses import JSONResponse
from berth.api.schemas.types import lenient_bool
from berth.api.state import ApiState
from berth.common import exceptions as exc
from berth.dashboard import stream
from berth.dashboard.login import Credentials, KeystoneLogin
from berth.dashboard.watch import ChangeWatcher

router = APIRouter(prefix="/dashboard/api")


def _watcher(request: Request) -> ChangeWatcher:
    watcher: ChangeWatcher = request.app.state.dashboard_watcher
    return watcher


@router.get("/config")
def config(request: Request) -> JSONResponse:
    login: KeystoneLogin | None = request.app.state.dashboard_login
    return JSONResponse({"auth": "keystone" if login is not None else "noauth"})


@router.post("/login")
async def login(request: Request) -> JSONResponse:
    keystone: KeystoneLogin | None = request.app.state.dashboard_login
    # The body is read (bounded, and refused when hostile) in either mode.
    body = await read_json_body(request, required=True)
    if keystone is None:
        raise exc.NotFound(
            "No password login in noauth mode: use a noauth token "
            "('admin', or '<user>:<project>').")
    creds = _credentials(body)
    token = await anyio.to_thread.run_sync(keystone.login, creds)
    return JSONResponse(asdict(token))


def _credentials(body: Any) -> Credentials:
    if not isinstance(body, dict):
        raise exc.InvalidParameterValue(err="The login body must be a JSON object.")
    fields: dict[str, str] = {}
    for key in ("username", "password", "project_name", "user_domain_name",
                "project_domain_name"):
        value = body.get(key)
        if value in (None, "") and key.endswith("domain_name"):
            continue
        if not isinstance(value, str) or not value:
            raise exc.InvalidParameterValue(err=f"The login needs {key} (a non-empty string).")
        fields[key] = value
    return Credentials(**fields)


@router.get("/events")
def events(request: Request) -> StreamingResponse:
    ctx = request_context(request)
    value = request.query_params.get("all_projects")
    identity = (request.scope.get("state") or {}).get("identity")
    scope = stream.authorize(ctx, lenient_bool("all_projects", value)
                             if value is not None else False,
                             expires_at=getattr(identity, "expires_at", None))
    state: ApiState = request.app.state.berth
    return StreamingResponse(
        stream.events(state, _watcher(request), scope), media_type="text/event-stream",
        # No proxy buffering and no caching: the events are live.
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
