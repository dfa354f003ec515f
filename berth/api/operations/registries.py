"""Registries (api-v1.md §13): credentials for private image registries.

A container created with ``registry`` (≥1.31) stores the registry's id; its node's
agent then pulls with that registry's username and password, and prefixes image
names that have no domain with the registry's domain (behaviours.md §1.1).
Passwords are encrypted at rest (``berth.db.registries.PasswordCipher``) and never
shown: the view always says ``"***"``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from fastapi import Request

from berth.api.links import links
from berth.api.schemas import resources as schemas
from berth.api.schemas import types as T
from berth.api.state import ApiState
from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.db import registries as db_registries
from berth.db.models import Registry
from berth.image.reference import has_domain, parse_image
from berth.policies import enforcer as policy

LOG = logging.getLogger(__name__)

VIEW_KEYS = ("uuid", "user_id", "project_id", "name", "domain", "username")


def view(row: Registry, request: Request | None = None) -> dict[str, Any]:
    """The registry as Zun shows it; ``links`` only in single-object responses."""
    out: dict[str, Any] = {k: getattr(row, k) for k in VIEW_KEYS}
    out["password"] = "***"
    if request is not None:
        out["links"] = links(request, "registries", row.uuid)
    return out


# -- input ------------------------------------------------------------------------------

def _unwrap(body: Any, creating: bool = True) -> dict[str, Any]:
    """The registry's fields from ``{"registry": {...}}``."""
    wrapper = schemas.REGISTRY_CREATE_BODY if creating else schemas.REGISTRY_UPDATE_BODY
    inner = wrapper.check_shape(body)["registry"]
    if not isinstance(inner, dict):
        raise T.invalid("registry", inner, f"It must be a JSON object of the registry's "
                                           f"fields, {wrapper.shape}.")
    return inner


def _domain(value: str) -> str:
    # The shortest image of the registry ("<domain>/x") must be a valid reference.
    valid = "/" not in value and has_domain(f"{value}/x")
    if valid:
        try:
            parse_image(f"{value}/x")
        except exc.InvalidParameterValue:
            valid = False
    if not valid:
        raise T.invalid("domain", value, schemas.REGISTRY_CREATE.describe("domain"))
    return value


def _parse(data: Mapping[str, Any], creating: bool) -> dict[str, Any]:
    """Validated columns (password still in clear) for the keys given."""
    schema = schemas.REGISTRY_CREATE if creating else schemas.REGISTRY_UPDATE
    out = dict(schema.check(data))
    if "domain" in out:
        out["domain"] = _domain(out["domain"])
    return out


def _encrypt(state: ApiState, values: dict[str, Any]) -> dict[str, Any]:
    if values.get("password") is None:
        return values
    key = state.settings.registry_key
    if key is None:
        raise exc.ServiceUnavailable(
            reason="berth has no key to encrypt registry passwords: set "
                   "[DEFAULT]auth_encryption_key (or make state_path writable).")
    cipher = db_registries.PasswordCipher(key)
    return dict(values, password=cipher.encrypt(values["password"]))


# -- operations -------------------------------------------------------------------------

def get(state: ApiState, ctx: RequestContext, ident: str, rule: str) -> Registry:
    """The registry, if the caller passes ``rule`` on it. Admins find any project's
    registry; others only their own project's (another project's is a 404)."""
    row = db_registries.get(state.db, ident, None if ctx.is_admin else ctx.project_id)
    policy.authorize(ctx, rule, row)
    return row


def create(state: ApiState, ctx: RequestContext, body: Any) -> Registry:
    policy.authorize(ctx, "registry:create")
    values = _encrypt(state, _parse(_unwrap(body, creating=True), creating=True))
    row = db_registries.create(state.db, dict(values, project_id=ctx.project_id,
                                              user_id=ctx.user_id))
    LOG.info("registry %s (%s) created for project %s", row.uuid, row.domain, row.project_id)
    return row


def update(state: ApiState, ctx: RequestContext, ident: str, body: Any) -> Registry:
    values = _parse(_unwrap(body, creating=False), creating=False)
    row = get(state, ctx, ident, "registry:update")
    row = db_registries.update_(state.db, row.uuid, _encrypt(state, values))
    LOG.info("registry %s updated (%s)", row.uuid, ", ".join(sorted(values)))
    return row


def delete(state: ApiState, ctx: RequestContext, ident: str) -> None:
    row = get(state, ctx, ident, "registry:delete")
    users = db_registries.containers_using(state.db, row.id)
    if users:
        raise exc.Conflict(
            f"Registry {row.uuid} is used by containers {', '.join(users)}: their images "
            f"are pulled with its credentials. Delete those containers first.")
    db_registries.destroy(state.db, row.uuid)
    LOG.info("registry %s deleted", row.uuid)


def resolve_for_create(state: ApiState, ctx: RequestContext, ident: str | None
                       ) -> Registry | None:
    """The registry a container create names (uuid or name), or None."""
    if ident is None:
        return None
    return get(state, ctx, ident, "registry:get_one")
