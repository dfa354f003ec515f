"""``quota:*`` and ``quota_class:*``: per-project limits and their defaults.

For ``quota:get`` and ``quota:get_default`` the target is the project in the path, so a
project's members read their own quota and nobody else's."""

from __future__ import annotations

from oslo_policy import policy

from berth.policies.base import ADMIN, ADMIN_OR_OWNER, documented

ONE = "/v1/quotas/{project_id}"
CLASS = "/v1/quota_classes/{quota_class_name}"

RULES: list[policy.RuleDefault] = [
    documented("quota:get", ADMIN_OR_OWNER, "Show a project's quota.", ("GET", ONE)),
    documented("quota:get_default", ADMIN_OR_OWNER, "Show the default quota.",
               ("GET", ONE + "/defaults")),
    documented("quota:update", ADMIN, "Change a project's quota.", ("PUT", ONE)),
    documented("quota:delete", ADMIN, "Reset a project's quota to the defaults.",
               ("DELETE", ONE)),
    documented("quota_class:get", ADMIN, "Show a quota class.", ("GET", CLASS)),
    documented("quota_class:update", ADMIN, "Change a quota class.", ("PUT", CLASS)),
]


def list_rules() -> list[policy.RuleDefault]:
    return list(RULES)
