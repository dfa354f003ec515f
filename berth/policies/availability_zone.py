"""``availability_zones:get_all``: the availability zones of the compute hosts."""

from __future__ import annotations

from oslo_policy import policy

from berth.policies.base import ADMIN_OR_OWNER, documented

RULES: list[policy.RuleDefault] = [
    documented("availability_zones:get_all", ADMIN_OR_OWNER, "List availability zones.",
               ("GET", "/v1/availability_zones")),
]


def list_rules() -> list[policy.RuleDefault]:
    return list(RULES)
