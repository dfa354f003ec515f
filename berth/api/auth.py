"""Who is calling: the request context.

* keystone (``[api]auth_strategy = keystone``): the identity ``berth.api.authtoken``
  validated and put on the request's state; nothing the client sends itself counts.
* noauth: the token names the caller (``berth.api.routers.identity``), or the headers
  keystonemiddleware would set (X-User-Id, X-Project-Id, X-Roles), which win when present.

Either way ``is_admin`` is the ``context_is_admin`` rule of the policy.
"""

from __future__ import annotations

from fastapi import Request

from berth.api.authtoken import Identity
from berth.api.routers.identity import parse_noauth_token
from berth.common.context import RequestContext, new_request_id
from berth.policies import enforcer as policy


async def context_from_request(request: Request) -> RequestContext:
    """A FastAPI dependency. ``async`` because it does no I/O: FastAPI runs a plain
    ``def`` dependency on its thread pool, a thread hop (~0.5 ms of CPU) per request."""
    return request_context(request)


def request_context(request: Request) -> RequestContext:
    """The context itself, for the endpoints clients poll (show, list), which call it
    instead of declaring the dependency: FastAPI's dependency solving cost those
    requests more CPU than their database read."""
    state = request.scope.get("state") or {}
    request_id = state.get("request_id") or new_request_id()
    identity: Identity | None = state.get("identity")
    headers = request.headers
    if identity is not None:
        roles = list(identity.roles)
        return RequestContext(
            user_id=identity.user_id, project_id=identity.project_id, roles=roles,
            is_admin=policy.is_admin(roles, identity.project_id, identity.user_id),
            request_id=request_id, auth_token=headers.get("x-auth-token"),
            user_name=identity.user_name, project_name=identity.project_name,
            user_domain_id=identity.user_domain_id,
            project_domain_id=identity.project_domain_id)
    token = headers.get("x-auth-token")
    user, project, admin_token = parse_noauth_token(token)
    roles = ["admin", "member", "reader"] if admin_token else ["member", "reader"]
    if headers.get("x-user-id"):
        user = headers["x-user-id"]
    if headers.get("x-project-id"):
        project = headers["x-project-id"]
    if headers.get("x-roles") is not None:
        roles = [r.strip() for r in headers["x-roles"].split(",") if r.strip()]
    return RequestContext(
        user_id=user, project_id=project, roles=roles,
        is_admin=policy.is_admin(roles, project, user),
        request_id=request_id, auth_token=token, user_name=headers.get("x-user-name") or user,
        project_name=headers.get("x-project-name") or project)
