"""Quotas and quota classes (api-v1.md §12), and their enforcement.

A project's limit for a resource is, first found wins: its own ``quotas`` row, the
quota class ``default``, the ``[quota]`` option. -1 means unlimited. Usage is the
sum over the project's containers and capsules (``berth.db.quotas.project_usage``).

Enforcement (``berth.quota``) refuses a request when ``usage + delta > limit`` for a
resource the request grows; unlike Zun, the cpu and memory a container gets by
default count as much as the ones it asks for, and the check is atomic with the
write that grows the usage (the guard :func:`check_create` returns; the agent's claim
for a resize),
so concurrent requests cannot together exceed a quota.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from sqlalchemy import Connection

from berth.api.schemas.resources import INT_MAX, QUOTA
from berth.api.schemas.types import invalid
from berth.api.state import ApiState
from berth.common.context import RequestContext
from berth.common.units import memory_mib
from berth.db import quotas as db_quotas
from berth.policies import enforcer as policy
from berth.quota import QuotaEnforcer

LOG = logging.getLogger(__name__)

RESOURCES = db_quotas.RESOURCES


# -- policy ---------------------------------------------------------------------------

def _check_owner_or_admin(ctx: RequestContext, project_id: str, action: str) -> None:
    """``action`` with the quota's project as its target (admin or owner by default)."""
    policy.authorize(ctx, action, {"project_id": project_id})


def _check_admin(ctx: RequestContext, action: str) -> None:
    policy.authorize(ctx, action, {"project_id": ctx.project_id})


# -- limits -----------------------------------------------------------------------------

def defaults(state: ApiState) -> dict[str, int]:
    """Quota class ``default`` over the ``[quota]`` options."""
    return enforcer(state).layered(db_quotas.class_limits(state.db, db_quotas.DEFAULT_CLASS))


def limits_for(state: ApiState, project_id: str) -> dict[str, int]:
    """The project's own limits over ``defaults``."""
    with state.db.connection() as conn:
        return enforcer(state).limits_on(conn, project_id)


def parse_limits(body: Any) -> dict[str, int]:
    """A PUT body: an object with any of the four resources, each an integer (or a
    string of digits with an optional minus) of at least -1."""
    out: dict[str, int] = {}
    for key, value in QUOTA.check(body).items():
        number = int(value)
        if not -1 <= number <= INT_MAX:     # a pattern cannot bound a string of digits
            raise invalid(key, value, QUOTA.describe(key))
        out[key] = number
    return out


# -- operations -------------------------------------------------------------------------

def get_quota(state: ApiState, ctx: RequestContext, project_id: str, usages: bool
              ) -> dict[str, Any]:
    _check_owner_or_admin(ctx, project_id, "quota:get")
    limits = limits_for(state, project_id)
    if not usages:
        return dict(limits)
    used = db_quotas.project_usage(state.db, project_id)
    return {r: {"limit": limits[r], "in_use": used[r]} for r in RESOURCES}


def get_defaults(state: ApiState, ctx: RequestContext, project_id: str) -> dict[str, int]:
    _check_owner_or_admin(ctx, project_id, "quota:get_default")
    return defaults(state)


def update_quota(state: ApiState, ctx: RequestContext, project_id: str, body: Any
                 ) -> dict[str, int]:
    _check_admin(ctx, "quota:update")
    values = parse_limits(body)
    db_quotas.set_project_limits(state.db, project_id, values)
    LOG.info("quota of project %s set: %s", project_id, values)
    return limits_for(state, project_id)


def delete_quota(state: ApiState, ctx: RequestContext, project_id: str) -> None:
    _check_admin(ctx, "quota:delete")
    gone = db_quotas.delete_project_limits(state.db, project_id)
    LOG.info("quota of project %s reset to the defaults (%d limits dropped)", project_id, gone)


def get_class(state: ApiState, ctx: RequestContext, name: str) -> dict[str, int]:
    _check_admin(ctx, "quota_class:get")
    return enforcer(state).layered(db_quotas.class_limits(state.db, name))


def update_class(state: ApiState, ctx: RequestContext, name: str, body: Any
                 ) -> dict[str, int]:
    _check_admin(ctx, "quota_class:update")
    values = parse_limits(body)
    db_quotas.set_class_limits(state.db, name, values)
    LOG.info("quota class %s set: %s", name, values)
    return get_class(state, ctx, name)


# -- enforcement ------------------------------------------------------------------------

def enforcer(state: ApiState) -> QuotaEnforcer:
    return QuotaEnforcer(state.settings.quota_defaults)


def create_deltas(fields: Mapping[str, Any]) -> dict[str, int | float]:
    """What one more container with the validated create ``fields`` (cpu, memory,
    disk; the defaults already applied) adds to its project's usage."""
    return {"containers": 1, "cpu": float(fields.get("cpu") or 0),
            "memory": memory_mib(fields.get("memory")), "disk": int(fields.get("disk") or 0)}


def check_create(state: ApiState, ctx: RequestContext, project_id: str | None,
                 fields: Mapping[str, Any]) -> Callable[[Connection], object]:
    """OverQuota (403) when one more container with the validated create ``fields``
    does not fit in ``project_id``'s quota now: the early refusal, before the
    scheduler and the image check. Returns the check to run again in the create's
    insert transaction, on its connection (the project's quota lock, then the usage,
    with the limits read here: ``berth.quota``), which makes the insert atomic with
    it."""
    return check_deltas(state, project_id, create_deltas(fields))


def check_deltas(state: ApiState, project_id: str | None, deltas: Mapping[str, int | float]
                 ) -> Callable[[Connection], object]:
    """``check_create`` for any growth: ``deltas`` of containers, cpu, memory, disk
    (a capsule's: its members, its sums)."""
    checker = enforcer(state)
    with state.db.connection() as conn:
        limits = checker.check(conn, project_id, deltas, lock=False)
    return lambda conn: checker.check(conn, project_id, deltas, limits=limits)


def check_quota_delta(state: ApiState, ctx: RequestContext, project_id: str | None,
                      cpu_delta: float, memory_delta: int) -> None:
    """For an update of cpu/memory (PATCH, resize_container): OverQuota (403) when
    growing by these deltas does not fit in ``project_id``'s quota now. Shrinking
    always passes. The agent checks again, atomically with its claim (``berth.quota``)."""
    with state.db.connection() as conn:
        enforcer(state).check(conn, project_id, {"cpu": float(cpu_delta or 0),
                                                 "memory": int(memory_delta or 0)},
                              lock=False)
