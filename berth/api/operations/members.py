"""A capsule's members where the container API reaches them: ``logs`` and
``execute`` take a member's uuid or name too (both capsule drivers), so that ``zun
logs`` and ``zun exec`` work on a pod's containers. Everything else keeps members
visible only through their capsule, as in Zun."""

from __future__ import annotations

from berth.api.operations.containers import get
from berth.api.state import ApiState
from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.db import capsules, containers
from berth.db.models import Container
from berth.policies import enforcer as policy

MEMBER_TYPES = (capsules.MEMBER, capsules.INIT_MEMBER)


def get_container_or_member(state: ApiState, ctx: RequestContext, ident: str,
                            rule: str) -> Container:
    """``containers.get``, then a capsule member by uuid or name (same project rules,
    same policy rule)."""
    try:
        return get(state, ctx, ident, rule)
    except exc.ContainerNotFound:
        for member_type in MEMBER_TYPES:
            try:
                row = containers.get(state.db, ident, None if ctx.is_admin else ctx.project_id,
                                     container_type=member_type)
            except exc.ContainerNotFound:
                continue
            policy.authorize(ctx, rule, row)
            return row
        raise
