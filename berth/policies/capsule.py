"""``capsule:*``: pods of containers."""

from __future__ import annotations

from oslo_policy import policy

from berth.policies.base import ADMIN, ADMIN_OR_OWNER, documented

ALL = "/v1/capsules"
ONE = "/v1/capsules/{capsule_ident}"

RULES: list[policy.RuleDefault] = [
    documented("capsule:create", ADMIN_OR_OWNER, "Create a capsule.", ("POST", ALL)),
    documented("capsule:delete", ADMIN_OR_OWNER, "Delete a capsule.", ("DELETE", ONE)),
    documented("capsule:delete_all_projects", ADMIN,
               "Delete a capsule of any project (all_projects=true).", ("DELETE", ONE)),
    documented("capsule:get", ADMIN_OR_OWNER, "Show a capsule.", ("GET", ONE)),
    documented("capsule:get_one_all_projects", ADMIN,
               "Show a capsule of any project (all_projects=true).", ("GET", ONE)),
    documented("capsule:get:host", ADMIN,
               "See the 'host' field of capsules (hidden from others).",
               ("GET", ONE), ("GET", ALL)),
    documented("capsule:get_all", ADMIN_OR_OWNER, "List capsules.", ("GET", ALL)),
    documented("capsule:get_all_all_projects", ADMIN,
               "List every project's capsules (all_projects=true).", ("GET", ALL)),
]


def list_rules() -> list[policy.RuleDefault]:
    return list(RULES)
