"""``registry:*``: a project's private image registries (their passwords are never shown)."""

from __future__ import annotations

from oslo_policy import policy

from berth.policies.base import ADMIN, ADMIN_OR_OWNER, documented

ALL = "/v1/registries"
ONE = "/v1/registries/{registry_ident}"

RULES: list[policy.RuleDefault] = [
    documented("registry:create", ADMIN_OR_OWNER, "Create a registry.", ("POST", ALL)),
    documented("registry:get_one", ADMIN_OR_OWNER, "Show a registry.", ("GET", ONE)),
    documented("registry:get_all", ADMIN_OR_OWNER, "List registries.", ("GET", ALL)),
    documented("registry:get_all_all_projects", ADMIN,
               "List every project's registries (all_projects=true).", ("GET", ALL)),
    documented("registry:update", ADMIN_OR_OWNER, "Update a registry.", ("PATCH", ONE)),
    documented("registry:delete", ADMIN_OR_OWNER, "Delete a registry.", ("DELETE", ONE)),
]


def list_rules() -> list[policy.RuleDefault]:
    return list(RULES)
