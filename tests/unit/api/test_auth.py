"""The request context: Keystone's identity when the token was validated (and nothing
the client claims in headers), the noauth token otherwise; ``is_admin`` is the policy's
``context_is_admin``."""

from __future__ import annotations

from starlette.requests import Request

from berth.api.auth import request_context
from berth.api.authtoken import Identity


def _request(headers: dict[str, str], identity: Identity | None = None) -> Request:
    state: dict[str, object] = {"request_id": "req-1"}
    if identity is not None:
        state["identity"] = identity
    return Request({"type": "http", "method": "GET", "path": "/v1/containers",
                    "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
                    "state": state})


KEYSTONE_MEMBER = Identity(user_id="u1", user_name="alice", user_domain_id="d1",
                           project_id="p1", project_name="alpha", project_domain_id="d2",
                           roles=("member", "reader"), expires_at=4e9)
FORGED = {"X-Auth-Token": "tok", "X-User-Id": "root", "X-Project-Id": "p9",
          "X-Roles": "admin"}


def test_keystones_identity_wins_over_headers_the_client_sends() -> None:
    ctx = request_context(_request(FORGED, KEYSTONE_MEMBER))
    assert (ctx.user_id, ctx.project_id, ctx.roles) == ("u1", "p1", ["member", "reader"])
    assert not ctx.is_admin
    assert (ctx.user_domain_id, ctx.project_domain_id) == ("d1", "d2")
    assert (ctx.user_name, ctx.project_name, ctx.request_id) == ("alice", "alpha", "req-1")


def test_a_keystone_admin_is_admin() -> None:
    admin = Identity(user_id="a", user_name="a", user_domain_id=None, project_id="p",
                     project_name="p", project_domain_id=None, roles=("admin",),
                     expires_at=4e9)
    assert request_context(_request({}, admin)).is_admin


def test_noauth_token_names_the_caller() -> None:
    ctx = request_context(_request({"X-Auth-Token": "alice:p1"}))
    assert (ctx.user_id, ctx.project_id, ctx.is_admin) == ("alice", "p1", False)
    assert request_context(_request({"X-Auth-Token": "admin"})).is_admin
