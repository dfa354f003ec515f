"""Who is calling: the request context, from the token (noauth) or from the headers
keystonemiddleware sets (X-User-Id, X-Project-Id, X-Roles), which win when present."""

from __future__ import annotations

from fastapi import Request

from berth.api.routers.identity import parse_noauth_token
from berth.common.context import RequestContext, new_request_id


async def context_from_request(request: Request) -> RequestContext:
    """A FastAPI dependency. ``async`` because it does no I/O: FastAPI runs a plain
    ``def`` dependency on its thread pool, a thread hop (~0.5 ms of CPU) per request."""
    return request_context(request)


def request_context(request: Request) -> RequestContext:
    """The context itself, for the endpoints clients poll (show, list), which call it
    instead of declaring the dependency: FastAPI's dependency solving cost those
    requests more CPU than their database read."""
    headers = request.headers
    token = headers.get("x-auth-token")
    user, project, is_admin = parse_noauth_token(token)
    roles = ["admin", "member", "reader"] if is_admin else ["member", "reader"]
    if headers.get("x-user-id"):
        user = headers["x-user-id"]
    if headers.get("x-project-id"):
        project = headers["x-project-id"]
    if headers.get("x-roles") is not None:
        roles = [r.strip() for r in headers["x-roles"].split(",") if r.strip()]
        is_admin = "admin" in (r.lower() for r in roles)
    return RequestContext(
        user_id=user, project_id=project, roles=roles, is_admin=is_admin,
        request_id=getattr(request.state, "request_id", None) or new_request_id(),
        auth_token=token, user_name=headers.get("x-user-name") or user,
        project_name=headers.get("x-project-name") or project)
