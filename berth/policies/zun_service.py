"""``zun-service:*``: berth's services (Zun's name, kept for operators' policy files)."""

from __future__ import annotations

from oslo_policy import policy

from berth.policies.base import ADMIN, documented

ALL = "/v1/services"

RULES: list[policy.RuleDefault] = [
    documented("zun-service:get_all", ADMIN, "List the services.", ("GET", ALL)),
    documented("zun-service:delete", ADMIN, "Delete a service's record.", ("DELETE", ALL)),
    documented("zun-service:enable", ADMIN, "Enable a service.", ("PUT", ALL + "/enable")),
    documented("zun-service:disable", ADMIN, "Disable a service.",
               ("PUT", ALL + "/disable")),
    documented("zun-service:force_down", ADMIN, "Mark a service down (or up again).",
               ("PUT", ALL + "/force_down")),
]


def list_rules() -> list[policy.RuleDefault]:
    return list(RULES)
