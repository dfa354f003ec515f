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
from starlette.exceptions import HTTPException

from berth.api.auth import request_context
from berth.api.openapi import allowed_methods, request_body
from berth.api.params import read_json_body
from berth.api.responses import JSONResponse
from berth.api.schemas import fields as F
from berth.api.schemas.types import lenient_bool
from berth.api.schemas.validation import RequestSchema
from berth.api.state import ApiState
from berth.common import exceptions as exc
from berth.dashboard import stream
from berth.dashboard.login import Credentials, KeystoneLogin
from berth.dashboard.watch import ChangeWatcher

router = APIRouter(prefix="/dashboard/api")

_FIELD = F.string(1, 255, what="a non-empty string")
_DOMAIN = F.nullable(F.string(0, 255, what="a domain name (empty: Default)"))
#: A password login (Keystone's v3 password method, project-scoped).
LOGIN = RequestSchema(
    {**F.closed_object({"username": _FIELD, "password": _FIELD, "project_name": _FIELD,
                        "user_domain_name": _DOMAIN, "project_domain_name": _DOMAIN},
                       required=("username", "password", "project_name"),
                       description="A Keystone password login (other keys are ignored)."),
     "additionalProperties": True},
    what="login", shape="such as {\"username\": ..., \"password\": ..., "
                        "\"project_name\": ...}")


class EventStream(StreamingResponse):
    """Server-Sent Events (the media type the document publishes, too)."""

    media_type = "text/event-stream"


def _watcher(request: Request) -> ChangeWatcher:
    watcher: ChangeWatcher = request.app.state.dashboard_watcher
    return watcher


@router.get("/config")
def config(request: Request) -> JSONResponse:
    login: KeystoneLogin | None = request.app.state.dashboard_login
    return JSONResponse({"auth": "keystone" if login is not None else "noauth"})


@router.post("/login")
@request_body(lambda settings: LOGIN)
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
    fields = LOGIN.check(body)
    return Credentials(**{k: v for k, v in fields.items() if k in LOGIN.schema["properties"]
                          and (v not in (None, "") or not k.endswith("domain_name"))})


#: One event of the stream (berth.dashboard.stream), as OpenAPI 3.1 describes a
#: text/event-stream: its data is a JSON object.
EVENT: dict[str, Any] = {
    "type": "object", "required": ["event", "data"],
    "properties": {"event": {"enum": ["snapshot", "changes"]},
                   "data": {"type": "string", "contentMediaType": "application/json",
                            "contentSchema": {"type": "object"}}}}


@router.get("/events", response_class=EventStream, responses={
    200: {"content": {"text/event-stream": {"schema": EVENT}}}})
def events(request: Request) -> EventStream:
    ctx = request_context(request)
    value = request.query_params.get("all_projects")
    identity = (request.scope.get("state") or {}).get("identity")
    scope = stream.authorize(ctx, lenient_bool("all_projects", value)
                             if value is not None else False,
                             expires_at=getattr(identity, "expires_at", None))
    state: ApiState = request.app.state.berth
    return EventStream(
        stream.events(state, _watcher(request), scope),
        # No proxy buffering and no caching: the events are live.
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


@router.api_route("/{rest:path}", methods=["GET", "HEAD"], include_in_schema=False)
def not_here(request: Request) -> None:
    """A GET of an API path that takes another method is a 405 naming the methods it
    takes (RFC 9110), not the console's static 404; an unknown API path is a 404."""
    raise HTTPException(405 if allowed_methods(request.app, request.url.path) else 404)
