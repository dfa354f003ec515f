"""RequestContext crosses the RPC boundary as a plain dict: every field by name, the
same as ``dataclasses.asdict`` gives, ``roles`` a list of its own, and back."""

from __future__ import annotations

from dataclasses import asdict

from berth.common.context import RequestContext


def a_context() -> RequestContext:
    return RequestContext(user_id="u1", project_id="p1", roles=["member", "reader"],
                          request_id="req-1", auth_token="tok", user_name="alice",
                          project_name="demo", user_domain_id="default",
                          project_domain_id="default", all_projects=True)


def test_to_dict_gives_every_field_as_asdict_does() -> None:
    ctx = a_context()
    assert ctx.to_dict() == asdict(ctx)
    assert list(ctx.to_dict()) == list(asdict(ctx))


def test_the_dicts_roles_are_a_list_of_its_own() -> None:
    ctx = a_context()
    out = ctx.to_dict()
    roles = out["roles"]
    assert isinstance(roles, list)
    roles.append("admin")
    assert ctx.roles == ["member", "reader"]


def test_from_dict_makes_the_same_context_again() -> None:
    ctx = a_context()
    assert RequestContext.from_dict(ctx.to_dict()) == ctx
    assert RequestContext.from_dict({**ctx.to_dict(), "unknown": 1}) == ctx
    assert RequestContext.from_dict(None).is_admin
