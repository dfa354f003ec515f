"""Quotas and quota classes (api-v1.md §12), and their enforcement.

A project's limit for a resource is, first found wins: its own ``quotas`` row, the
quota class ``default``, the ``[quota]`` option. -1 means unlimited. Usage is the
sum over the project's containers and capsules (``berth.db.quotas.project_usage``).

Enforcement (:func:`check_create`, :func:`check_quota_delta`) refuses a request
when ``usage + delta > limit`` for a resource the request grows; unlike Zun, the
cpu and memory a container gets by default count as much as the ones it asks for.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

from berth.api.schemas.types import invalid
from berth.api.state import ApiState
from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.common.units import memory_mib
from berth.db import quotas as db_quotas

LOG = logging.getLogger(__name__)

RESOURCES = db_quotas.RESOURCES
_INT_MAX = 2**31 - 1
_LIMIT_TEXT = re.compile(r"-?[0-9]{1,11}")


# -- policy ---------------------------------------------------------------------------

def _check_owner_or_admin(ctx: RequestContext, project_id: str, action: str) -> None:
    if not ctx.is_admin and ctx.project_id != project_id:
        raise exc.PolicyNotAuthorized(
            f"Policy doesn't allow {action} to be performed: only an admin or a member "
            f"of project {project_id} may read its quota.", action=action)


def _check_admin(ctx: RequestContext, action: str) -> None:
    if not ctx.is_admin:
        raise exc.PolicyNotAuthorized(action=action)


# -- limits -----------------------------------------------------------------------------

def defaults(state: ApiState) -> dict[str, int]:
    """Quota class ``default`` over the ``[quota]`` options."""
    return _layered(state, db_quotas.class_limits(state.db, db_quotas.DEFAULT_CLASS))


def limits_for(state: ApiState, project_id: str) -> dict[str, int]:
    """The project's own limits over ``defaults``."""
    of_class, of_project = db_quotas.class_and_project_limits(
        state.db, db_quotas.DEFAULT_CLASS, project_id)
    return _layered(state, of_class, of_project)


def _layered(state: ApiState, *layers: Mapping[str, int]) -> dict[str, int]:
    out = {r: int(state.settings.quota_defaults.get(r, db_quotas.CONFIG_DEFAULTS[r]))
           for r in RESOURCES}
    for layer in layers:
        out.update(layer)
    return {r: out[r] for r in RESOURCES}


def parse_limits(body: Any) -> dict[str, int]:
    """A PUT body: an object with any of the four resources, each an integer (or a
    string of digits with an optional minus) of at least -1."""
    if not isinstance(body, dict):
        raise exc.InvalidParameterValue(
            err="The request body must be a JSON object such as {\"containers\": 10, "
                "\"memory\": 2048, \"cpu\": 4, \"disk\": 20}.")
    unknown = sorted(k for k in body if k not in RESOURCES)
    if unknown:
        raise exc.InvalidParameterValue(
            err=f"Additional properties are not allowed ({', '.join(map(repr, unknown))} "
                f"were unexpected): a quota has only {', '.join(RESOURCES)}.")
    out: dict[str, int] = {}
    for key, value in body.items():
        out[key] = _limit(key, value)
    return out


def _limit(field: str, value: object) -> int:
    why = "It must be an integer of at least -1 (-1 means unlimited)."
    if isinstance(value, bool):
        raise invalid(field, value, why)
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and _LIMIT_TEXT.fullmatch(value):
        number = int(value)
    else:
        raise invalid(field, value, why)
    if number < -1 or number > _INT_MAX:
        raise invalid(field, value, why)
    return number


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
    out = {r: int(state.settings.quota_defaults.get(r, db_quotas.CONFIG_DEFAULTS[r]))
           for r in RESOURCES}
    out.update(db_quotas.class_limits(state.db, name))
    return {r: out[r] for r in RESOURCES}


def update_class(state: ApiState, ctx: RequestContext, name: str, body: Any
                 ) -> dict[str, int]:
    _check_admin(ctx, "quota_class:update")
    values = parse_limits(body)
    db_quotas.set_class_limits(state.db, name, values)
    LOG.info("quota class %s set: %s", name, values)
    return get_class(state, ctx, name)


# -- enforcement ------------------------------------------------------------------------

def overs(limits: Mapping[str, int], usage: Mapping[str, int | float],
          deltas: Mapping[str, int | float]) -> list[str]:
    """The resources that ``deltas`` would take over their limit (pure)."""
    return [r for r in limited_growth(limits, deltas)
            if usage[r] + (deltas.get(r, 0) or 0) > limits[r] + 1e-9]


def limited_growth(limits: Mapping[str, int], deltas: Mapping[str, int | float]
                   ) -> list[str]:
    """The resources that ``deltas`` grow and that have a limit (-1: unlimited)."""
    return [r for r in RESOURCES if (deltas.get(r, 0) or 0) > 0 and limits[r] >= 0]


def _enforce(state: ApiState, project_id: str, deltas: Mapping[str, int | float]) -> None:
    limits = limits_for(state, project_id)
    if not limited_growth(limits, deltas):
        return      # nothing limited grows: no need to sum the project's containers
    usage = db_quotas.project_usage(state.db, project_id)
    over = overs(limits, usage, deltas)
    if not over:
        return
    detail = "; ".join(f"{r}: {usage[r]:g} in use + {deltas[r]:g} requested > limit "
                       f"{limits[r]}" for r in over)
    LOG.info("project %s over quota: %s", project_id, detail)
    raise exc.OverQuota(
        f"Quota exceeded for resources: {over!r}. Project {project_id} has {detail}. "
        f"Delete containers you no longer need or ask for less, or ask an admin to raise "
        f"the quota (zun quota-update).", overs=over)


def check_create(state: ApiState, ctx: RequestContext, project_id: str | None,
                 fields: Mapping[str, Any]) -> None:
    """OverQuota (403) when one more container with the validated create ``fields``
    (cpu, memory, disk; the defaults already applied) does not fit in ``project_id``'s
    quota."""
    if project_id is None:
        return
    _enforce(state, project_id, {
        "containers": 1, "cpu": float(fields.get("cpu") or 0),
        "memory": memory_mib(fields.get("memory")),
        "disk": int(fields.get("disk") or 0)})


def check_quota_delta(state: ApiState, ctx: RequestContext, project_id: str | None,
                      cpu_delta: float, memory_delta: int) -> None:
    """For an update of cpu/memory (PATCH, resize_container): OverQuota (403) when
    growing by these deltas does not fit in ``project_id``'s quota. Shrinking always
    passes."""
    if project_id is None:
        return
    _enforce(state, project_id, {"cpu": float(cpu_delta or 0),
                                 "memory": int(memory_delta or 0)})
